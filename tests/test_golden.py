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

from .conftest import GOLDEN, SAMPLES, msgen, sample_files

VERSIONS = [versions.show(versions.OLDEST), versions.show(versions.NEWEST)]


def golden_path(sample: Path, target: str, version: str | None = None) -> Path:
    stem = sample.relative_to(SAMPLES).with_suffix("").as_posix().replace("/", "__")
    suffix = f"@{version}" if version else ""
    return GOLDEN / f"{stem}.{target}{suffix}.yaml"


CASES = [(s, t) for s in sample_files() for t in TARGETS]


@pytest.mark.parametrize("sample,target", CASES, ids=[f"{s.stem}-{t}" for s, t in CASES])
def test_golden(sample: Path, target: str, update_golden: bool) -> None:
    newest = VERSIONS[-1]
    rendered = {}
    for version in VERSIONS:
        run = msgen("render", str(sample), "--target", target, "--kube-version", version)
        assert run.exit_code == 0, run.stderr
        rendered[version] = run.stdout
    if update_golden:
        golden_path(sample, target).write_text(rendered[newest])
        for version in VERSIONS[:-1]:
            path = golden_path(sample, target, version)
            if rendered[version] != rendered[newest]:
                path.write_text(rendered[version])
            elif path.exists():
                path.unlink()
        return
    for version in VERSIONS:
        versioned = golden_path(sample, target, version)
        expected_path = versioned if versioned.exists() else golden_path(sample, target)
        assert expected_path.exists(), f"{expected_path} is missing: run pytest --update-golden"
        expected = expected_path.read_text()
        if rendered[version] != expected:
            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(keepends=True),
                    rendered[version].splitlines(keepends=True),
                    fromfile=str(expected_path),
                    tofile=f"msgen render {sample.name} --target {target} --kube-version {version}",
                )
            )
            pytest.fail(f"golden mismatch (pytest --update-golden regenerates):\n{diff}")


def test_every_golden_file_has_a_sample() -> None:
    expected = {golden_path(s, t).name for s, t in CASES}
    stray = [
        p.name
        for p in GOLDEN.glob("*.yaml")
        if "@" not in p.name and p.name not in expected
    ]
    assert stray == [], f"golden files without a sample: {stray}"
