"""Golden files: every sample × every target, byte for byte.

Regenerate with `pytest --update-golden`, then read the diff against docs/contracts.md before
committing. Outputs are rendered for the oldest and the newest supported Kubernetes version;
where they differ, the older one gets its own file `<sample>.<target>@<version>.yaml`.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from msgen import versions
from msgen.targets import NAMES as TARGETS

from .conftest import GOLDEN, REFUSED, golden_for, golden_path, msgen, portable, sample_files

VERSIONS = [versions.show(versions.OLDEST), versions.show(versions.NEWEST)]


CASES = [(s, t) for s in sample_files() for t in TARGETS]


@pytest.mark.parametrize("sample,target", CASES, ids=[f"{s.stem}-{t}" for s, t in CASES])
def test_golden(sample: Path, target: str, update_golden: bool) -> None:
    newest = VERSIONS[-1]
    rendered: dict[str, tuple[str, str]] = {}
    for version in VERSIONS:
        run = msgen("render", str(sample), "--target", target, "--kube-version", version)
        assert run.exit_code in (0, 1), run.stderr
        # A job a target cannot carry is refused with one positioned error: that is golden too.
        rendered[version] = (".yaml", run.stdout) if run.exit_code == 0 else (REFUSED, portable(run.stderr))
    if update_golden:
        for version in VERSIONS:
            label = None if version == newest else version
            for suffix in (".yaml", REFUSED):
                golden_path(sample, target, label, suffix).unlink(missing_ok=True)
            if label is None or rendered[version] != rendered[newest]:
                suffix, text = rendered[version]
                golden_path(sample, target, label, suffix).write_text(text)
        return
    for version in VERSIONS:
        expected_path = golden_for(sample, target, version)
        assert expected_path is not None, f"no golden file for {sample.name} {target}: run pytest --update-golden"
        expected = (REFUSED if expected_path.name.endswith(REFUSED) else ".yaml", expected_path.read_text())
        if rendered[version] != expected:
            diff = "".join(
                difflib.unified_diff(
                    expected[1].splitlines(keepends=True),
                    rendered[version][1].splitlines(keepends=True),
                    fromfile=str(expected_path),
                    tofile=f"msgen render {sample.name} --target {target} --kube-version {version}",
                )
            )
            pytest.fail(f"golden mismatch (pytest --update-golden regenerates):\n{diff}")


def test_every_golden_file_has_a_sample() -> None:
    expected = {golden_path(s, t, None, suffix).name for s, t in CASES for suffix in (".yaml", REFUSED)}
    stray = [p.name for p in GOLDEN.iterdir() if "@" not in p.name and p.name not in expected]
    assert stray == [], f"golden files without a sample: {stray}"
