"""Golden cases: one folder each under golden/, found by looking, compared byte for byte.

A case is a directory `golden/<name>/` holding

- `case.yaml`: what to run, `msgen render <input> <args...> --kube-version <v>` for each `v`
  of `kube-versions` (every one must give the same result): `sample:` names a file of
  samples/ as the input (`samples/<dir>/<name>.yaml`), or the folder holds its own `input.yaml`;
  `args:` lists the options;
- the result: `expected.yaml` (the output) or `expected-errors.txt` (msgen's error, exit 1,
  with this checkout's path left out).

Every sample × target has cases with the default options, named `<dir>__<sample>.<target>`,
rendered for the oldest and the newest supported Kubernetes versions; where the two differ,
the older one has its own case `<dir>__<sample>.<target>@<version>`. `pytest --update-golden`
rewrites every expected file and the sample cases' folders (tests/test_golden.py).
"""

from __future__ import annotations

import functools
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from msgen.model import versions

from .conftest import GOLDEN, ROOT, SAMPLES, msgen, portable

CASE = "case.yaml"
INPUT = "input.yaml"
#: What a case expects: the output of a render, or the error of a refusal.
EXPECTED = "expected.yaml"
EXPECTED_ERRORS = "expected-errors.txt"
#: The Kubernetes versions every sample is rendered for.
VERSIONS = (versions.show(versions.OLDEST), versions.show(versions.NEWEST))


@dataclass(frozen=True)
class Case:
    """One folder of golden/, as its case.yaml describes it (`load` reads and checks it)."""

    folder: Path
    sample: Path | None
    args: tuple[str, ...]
    kube_versions: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def input(self) -> Path:
        return self.sample if self.sample is not None else self.folder / INPUT

    @property
    def command(self) -> str:
        shown = self.input.relative_to(ROOT) if self.input.is_relative_to(ROOT) else self.input
        return " ".join(["msgen render", str(shown), *self.args, "--kube-version"])

    def expected(self) -> tuple[str, str] | None:
        """(file name, content) of what the case expects; None while it has no expected file."""
        for name in (EXPECTED, EXPECTED_ERRORS):
            if (self.folder / name).is_file():
                return name, (self.folder / name).read_text()
        return None

    def render(self, version: str) -> tuple[str, str]:
        """(file name, content) of what msgen gives at `version`, as `expected()` reads."""
        return render(self.input, self.args, version)

    def write(self, result: tuple[str, str]) -> None:
        """Make `result` what the case expects (the other expected file goes)."""
        for name in (EXPECTED, EXPECTED_ERRORS):
            (self.folder / name).unlink(missing_ok=True)
        (self.folder / result[0]).write_text(result[1])


def render(path: Path, args: tuple[str, ...], version: str) -> tuple[str, str]:
    """`msgen render path args --kube-version version` as (expected file name, its content)."""
    run = msgen("render", str(path), *args, "--kube-version", version)
    assert run.exit_code in (0, 1), f"msgen render {path} {' '.join(args)} {version}: exit {run.exit_code}\n{run.stderr}"
    return (EXPECTED, run.stdout) if run.exit_code == 0 else (EXPECTED_ERRORS, portable(run.stderr))


def load(folder: Path) -> Case:
    """The case in `folder`; AssertionError naming the folder and the fault when it is malformed."""
    assert (folder / CASE).is_file(), f"{folder}: no {CASE}"
    spec: Any = yaml.safe_load((folder / CASE).read_text())
    assert isinstance(spec, dict), f"{folder / CASE}: not a mapping"
    unknown = sorted(set(spec) - {"sample", "args", "kube-versions"})
    assert not unknown, f"{folder / CASE}: unknown keys {unknown}; accepted: sample, args, kube-versions"
    args, kube_versions = spec.get("args", []), spec.get("kube-versions")
    assert isinstance(args, list) and all(isinstance(a, str) for a in args), f"{folder / CASE}: args: a list of strings"
    assert isinstance(kube_versions, list) and kube_versions, f"{folder / CASE}: kube-versions: a list of versions"
    assert all(isinstance(v, str) for v in kube_versions), f"{folder / CASE}: kube-versions: quote each version"
    sample = spec.get("sample")
    if sample is None:
        assert (folder / INPUT).is_file(), f"{folder}: neither a sample in {CASE} nor an {INPUT}"
        return Case(folder, None, tuple(args), tuple(kube_versions))
    path = ROOT / sample
    assert path.is_file() and path.is_relative_to(SAMPLES), f"{folder / CASE}: sample {sample} is no file of samples/"
    assert not (folder / INPUT).exists(), f"{folder}: both a sample and an {INPUT}"
    return Case(folder, path, tuple(args), tuple(kube_versions))


def discover(root: Path = GOLDEN) -> list[Case]:
    """Every case folder under `root`, by name."""
    return list(_discover(root))


@functools.cache
def _discover(root: Path) -> tuple[Case, ...]:
    return tuple(load(folder) for folder in sorted(root.iterdir()) if folder.is_dir())


def sample_stem(sample: Path) -> str:
    return sample.relative_to(SAMPLES).with_suffix("").as_posix().replace("/", "__")


def sample_cases(sample: Path, target: str, root: Path = GOLDEN) -> list[Case]:
    """The cases of `sample` on `target` with the default options, newest first."""
    found = [c for c in discover(root) if c.sample == sample and c.args == ("--target", target)]
    return sorted(found, key=lambda c: [versions.parse(v) for v in c.kube_versions], reverse=True)


def write_sample_cases(sample: Path, target: str, rendered: dict[str, tuple[str, str]], root: Path = GOLDEN) -> None:
    """Lay out the cases of `sample` on `target` for `rendered` (version → result): one case for
    the newest version and every version that renders as it does, one for each other version."""
    newest = VERSIONS[-1]
    wanted: dict[str, list[str]] = {}
    for version in VERSIONS:
        same = rendered[version] == rendered[newest]
        wanted.setdefault(f"{sample_stem(sample)}.{target}" + ("" if same else f"@{version}"), []).append(version)
    for stale in sample_cases(sample, target, root):
        if stale.name not in wanted:
            shutil.rmtree(stale.folder)
    for name, case_versions in wanted.items():
        folder = root / name
        folder.mkdir(exist_ok=True)
        (folder / CASE).write_text(
            f"sample: {sample.relative_to(ROOT).as_posix()}\n"
            f"args: {json.dumps(['--target', target])}\n"
            f"kube-versions: {json.dumps(case_versions)}\n"
        )
        load(folder).write(rendered[case_versions[0]])
    _discover.cache_clear()


def refused(sample: Path, target: str, version: str) -> bool:
    """Whether the golden cases say `target` refuses `sample` (default options) at `version`."""
    for case in sample_cases(sample, target):
        if version in case.kube_versions:
            expected = case.expected()
            return expected is not None and expected[0] == EXPECTED_ERRORS
    raise AssertionError(f"no golden case renders {sample} for {target} at {version}: run pytest --update-golden")
