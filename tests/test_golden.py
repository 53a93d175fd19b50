"""Golden cases: each folder of golden/ is a render and what it must give, byte for byte.

The layout is in tests/golden_cases.py. Every sample × target has its cases (rendered for the
oldest and the newest supported Kubernetes version); a case of its own can render a folder's
`input.yaml` with any options. Regenerate with `pytest --update-golden`, then read the diff
against docs/contracts.md before committing.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from msgen.targets import NAMES as TARGETS

from . import golden_cases
from .conftest import GOLDEN, SAMPLES, sample_files

CASES = golden_cases.discover()
PAIRS = [(s, t) for s in sample_files() for t in TARGETS]


def mismatch(case: golden_cases.Case, version: str, rendered: tuple[str, str]) -> str:
    """Where the case broke: its folder, the command (`version`: the versions that give this
    result), and a diff from what it expects."""
    expected = case.expected()
    assert expected is not None
    head = f"golden case {case.name} ({case.folder.relative_to(GOLDEN.parent)}): {case.command} {version}"
    if rendered[0] != expected[0]:
        head += f"\nexpected {expected[0]}, got {rendered[0]}"
    diff = difflib.unified_diff(
        expected[1].splitlines(keepends=True),
        rendered[1].splitlines(keepends=True),
        fromfile=f"{case.name}/{expected[0]}",
        tofile=f"{case.command} {version} ({rendered[0]})",
    )
    return f"{head}\n{''.join(diff)}\n(pytest --update-golden rewrites the expected files)"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden_case(case: golden_cases.Case, update_golden: bool) -> None:
    if update_golden and not case.folder.is_dir():
        pytest.skip(f"{case.name} was laid out again in this run (test_sample_cases_cover_every_version)")
    rendered = {version: case.render(version) for version in case.kube_versions}
    if update_golden:
        if len(set(rendered.values())) == 1:
            case.write(rendered[case.kube_versions[0]])
            return
        # A sample's cases are laid out again by test_sample_cases_cover_every_version.
        assert case.sample is not None, f"{case.name}: the versions render differently; give each its case"
        pytest.skip(f"{case.name}: the versions now render differently; its sample's cases are laid out again")
    assert case.expected() is not None, f"golden case {case.name} expects nothing: run pytest --update-golden"
    by_result: dict[tuple[str, str], list[str]] = {}
    for version, result in rendered.items():
        by_result.setdefault(result, []).append(version)
    failures = [mismatch(case, " or ".join(v), r) for r, v in by_result.items() if r != case.expected()]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("sample,target", PAIRS, ids=[f"{s.stem}-{t}" for s, t in PAIRS])
def test_sample_cases_cover_every_version(sample: Path, target: str, update_golden: bool) -> None:
    """Each sample on each target has a case for the oldest and the newest version, once each,
    and the older has a case of its own only where its output differs."""
    if update_golden:
        rendered = {v: golden_cases.render(sample, ("--target", target), v) for v in golden_cases.VERSIONS}
        golden_cases.write_sample_cases(sample, target, rendered)
        return
    cases = golden_cases.sample_cases(sample, target)
    covered = sorted(v for c in cases for v in c.kube_versions)
    assert covered == sorted(golden_cases.VERSIONS), (
        f"{sample.name} on {target}: cases for {covered} ({[c.name for c in cases]}), "
        f"not for {list(golden_cases.VERSIONS)} once each: run pytest --update-golden"
    )
    results = [c.expected() for c in cases]
    assert len(set(results)) == len(results), f"{[c.name for c in cases]} expect the same: make them one case"


def test_golden_holds_case_folders_only() -> None:
    stray = [p.name for p in GOLDEN.iterdir() if not p.is_dir() and p.name != "README.md"]
    assert stray == [], f"files in golden/ outside a case folder: {stray}"
    known = {golden_cases.CASE, golden_cases.INPUT, golden_cases.EXPECTED, golden_cases.EXPECTED_ERRORS}
    for case in CASES:
        files = {p.name for p in case.folder.iterdir()}
        assert files <= known, f"{case.name}: unknown files {sorted(files - known)}"
        assert not {golden_cases.EXPECTED, golden_cases.EXPECTED_ERRORS} <= files, f"{case.name}: both expected files"


def test_a_case_of_its_own_renders_its_input(tmp_path: Path) -> None:
    """A folder with an input.yaml and options is a case too: discovered, rendered, written."""
    folder = tmp_path / "lenet-plugins-gang"
    folder.mkdir()
    sample = SAMPLES / "mindspore" / "lenet-cpu.yaml"
    (folder / "input.yaml").write_text(sample.read_text())
    args = ["--target", "jobset", "--gang-scheduler", "scheduler-plugins"]
    (folder / "case.yaml").write_text(f"args: {args}\nkube-versions: ['1.30', '1.37']\n")
    [case] = golden_cases.discover(tmp_path)
    assert (case.input, case.args, case.kube_versions) == (folder / "input.yaml", tuple(args), ("1.30", "1.37"))
    assert case.expected() is None
    result = case.render("1.37")
    assert result == golden_cases.render(sample, tuple(args), "1.37") and "PodGroup" in result[1]
    case.write(result)
    assert case.expected() == result
    case.write((golden_cases.EXPECTED_ERRORS, "refused\n"))
    assert case.expected() == (golden_cases.EXPECTED_ERRORS, "refused\n")
    assert sorted(p.name for p in folder.iterdir()) == ["case.yaml", "expected-errors.txt", "input.yaml"]


@pytest.mark.parametrize(
    "text,fault",
    [
        ("args: [--target, pod]\nkube-versions: ['1.37']\nflags: []\n", "unknown keys ['flags']"),
        ("args: [--target, pod]\nkube-versions: [1.30]\n", "quote each version"),
        ("args: [--target, pod]\n", "kube-versions: a list of versions"),
        ("sample: samples/none.yaml\nkube-versions: ['1.37']\n", "sample samples/none.yaml is no file of samples/"),
        ("kube-versions: ['1.37']\n", "neither a sample in case.yaml nor an input.yaml"),
    ],
)
def test_a_malformed_case_names_its_folder_and_fault(tmp_path: Path, text: str, fault: str) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "case.yaml").write_text(text)
    with pytest.raises(AssertionError, match=re.escape(fault)) as raised:
        golden_cases.discover(tmp_path)
    assert str(tmp_path / "bad") in str(raised.value)
