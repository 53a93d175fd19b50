"""Shared test helpers: paths, running msgen as a user would, and the golden-file switch."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from msgen.hosts.command_line.cli import main

from . import python_share

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MSGEN_SHARED", ROOT.parent / "shared"))
"""The project's reference material (operator CRDs, seed examples). CI checks it out next to the
repository; a plain clone has none, so tests reach it only through `shared()`, `shared_glob()`,
`shared_files()` and `needs_shared()`, which skip naming what is missing."""
SAMPLES = ROOT / "samples"
GOLDEN = ROOT / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite golden/ and schemas/ from the current code instead of comparing",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def objects(self) -> list[dict[str, Any]]:
        return [d for d in yaml.safe_load_all(self.stdout) if d is not None]


def msgen(*args: str, input: str | bytes | None = None) -> Run:
    """msgen in-process through click, as the command line would run it."""
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def msgen_process(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Run:
    """msgen as a separate process: real exit status, real streams."""
    done = subprocess.run(
        [sys.executable, "-m", "msgen", *args],
        input=input,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    return Run(done.returncode, done.stdout, done.stderr)


def _missing_reason(relative: str) -> str | None:
    path = SHARED / relative
    if path.exists():
        return None
    origin = "$MSGEN_SHARED" if "MSGEN_SHARED" in os.environ else "../shared"
    return f"{path} is missing: this test needs the reference material at {origin} ({relative})"


def needs_shared(*relative: str) -> pytest.MarkDecorator:
    """A skip marker for tests (or parameter sets collected from SHARED) that need these paths."""
    reasons = [r for r in map(_missing_reason, relative) if r is not None]
    return pytest.mark.skipif(bool(reasons), reason="; ".join(reasons))


def shared_files(directory: str, pattern: str) -> list[Path]:
    """The files matching `pattern` in SHARED/directory, for parametrizing; none when absent."""
    base = SHARED / directory
    return sorted(base.glob(pattern)) if base.is_dir() else []


def shared(relative: str) -> Path:
    """`SHARED/relative`, or skip the calling test naming what is missing.

    Every test that reads the reference material goes through here, so a clone without it
    runs the rest of the suite and reports these tests as skipped, not as crashes."""
    reason = _missing_reason(relative)
    if reason is not None:
        pytest.skip(reason)
    return SHARED / relative


def shared_glob(directory: str, pattern: str) -> Path:
    """The one file matching `pattern` in SHARED/directory, or skip naming what is missing."""
    found = sorted(shared(directory).glob(pattern))
    if not found:
        pytest.skip(f"no {pattern} in {SHARED / directory}: this test needs that reference file")
    return found[0]


def sample_files() -> list[Path]:
    return sorted(SAMPLES.rglob("*.yaml"))


def portable(stderr: str) -> str:
    """stderr with this checkout's path left out, so golden files read the same everywhere."""
    return stderr.replace(str(ROOT) + "/", "")


def kustomize_binary() -> str | None:
    """kustomize for the tests that need the real binary; CI installs it (.ci/fetch-kustomize)."""
    for candidate in (
        os.environ.get("MSGEN_KUSTOMIZE"),
        str(ROOT / ".ci" / "tools" / "kustomize"),
        shutil.which("kustomize"),
    ):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    if os.environ.get("CI"):
        pytest.fail("kustomize is missing: CI must install it (.ci/fetch-kustomize)")
    return None


#: kustomize 5.x, the one overlays/argocd/Dockerfile's image carries on the harness: the
#: harness builds it (`tests/live/cluster up --with argocd`) from tests/live/go/kustomize.
KUSTOMIZE5_VARIABLE = "MSGEN_TEST_KUSTOMIZE5"
KUSTOMIZE5_BUILD = (
    "kustomize 5 is not here: the live harness builds it into <harness>/bin/kustomize-v5, or "
    "`cd tests/live/go/kustomize && go build -o DIR/kustomize sigs.k8s.io/kustomize/kustomize/v5` "
    f"(the Go module proxy; go.mod pins v5.5.0) and name it in ${KUSTOMIZE5_VARIABLE}"
)


def kustomize5_binary() -> str | None:
    home = Path(os.environ.get("MSGEN_HARNESS_HOME", "/root/.cache/msgen-harness"))
    for candidate in (os.environ.get(KUSTOMIZE5_VARIABLE), str(home / "bin" / "kustomize-v5")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(params=["4.5.4", "5.x"])
def any_kustomize(request: pytest.FixtureRequest) -> str:
    """Each kustomize msgen supports: 4.5.4 (.ci/fetch-kustomize) and 5.x (the sidecar's)."""
    found = kustomize_binary() if request.param == "4.5.4" else kustomize5_binary()
    if found is None:
        pytest.skip("kustomize 4.5.4 is not installed (.ci/fetch-kustomize)" if request.param == "4.5.4" else KUSTOMIZE5_BUILD)
    return found


def pytest_report_header(config: pytest.Config) -> str | None:
    value = os.environ.get(python_share.VARIABLE)
    if not value:
        return None
    share, shares = python_share.parse(value)
    return (f"msgen: {python_share.VARIABLE}={value}: this run takes share {share} of {shares} of the tests "
            f"marked {python_share.MARKER} (tests/python_share.py); every other test runs")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    value = os.environ.get(python_share.VARIABLE)
    if not value:
        return
    kept, left = python_share.split(items, *python_share.parse(value))
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
