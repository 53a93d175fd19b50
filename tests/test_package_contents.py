"""What the sdist and the wheel carry, built by the project's own build backend (setuptools).

The sdist must run its own tests (conftest, helpers, samples, golden files, schemas, overlays,
the pinned constraints); the wheel must carry the samples `msgen samples` prints. Both are
built offline in a copy of the tree, in-process through the PEP 517 hooks.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT
from .pyproject_file import PYPROJECT

PROJECT = PYPROJECT
#: What a working tree holds that is not the project (never packaged, never compared).
NOT_PROJECT = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".pytest_cache",
    ".hypothesis", ".mypy_cache", "tools",
)  # fmt: skip
#: The directories the sdist carries whole (MANIFEST.in grafts them).
SHIPPED_TREES = ("tests", "docs", "samples", "golden", "schemas", "overlays", "bench")


def _files(root: Path, top: str) -> set[str]:
    found = set()
    for path in (root / top).rglob("*"):
        relative = path.relative_to(root)
        if path.is_file() and not NOT_PROJECT(str(path.parent), [p for p in relative.parts]):
            found.add(str(relative))
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("setuptools.build_meta", reason="setuptools (the [test] extra) builds the packages")
    source = tmp_path_factory.mktemp("source") / "msgen"
    shutil.copytree(ROOT, source, ignore=NOT_PROJECT)
    dist = source / "dist"
    built = {}
    for kind in ("sdist", "wheel"):  # one process each, as a build frontend runs the hooks
        code = f"import setuptools.build_meta as b, sys; print('built:', b.build_{kind}(sys.argv[1]))"
        done = subprocess.run([sys.executable, "-c", code, str(dist)], cwd=source, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "is absent from the `packages` configuration" not in done.stderr, done.stderr[-3000:]
        (line,) = [line for line in done.stdout.splitlines() if line.startswith("built: ")]
        built[kind] = dist / line.split()[1]
    return built


def test_the_packages_listed_are_those_under_msgen() -> None:
    listed = set(PROJECT["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "msgen").rglob("__init__.py")}
    # The samples' directories Python could import: setuptools warns of each one not listed.
    samples = {f"msgen.samples.{d.name}" for d in (ROOT / "samples").iterdir() if d.is_dir() and d.name.isidentifier()}
    assert listed == found | {"msgen.samples"} | samples
    assert PROJECT["tool"]["setuptools"]["package-dir"] == {"msgen.samples": "samples"}


def test_the_sdist_carries_what_its_tests_need(built: dict[str, Path]) -> None:
    with tarfile.open(built["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    expected = set().union(*(_files(ROOT, top) for top in SHIPPED_TREES))
    assert {"tests/conftest.py", "tests/__init__.py", "tests/kube_schemas.py"} <= expected
    assert expected - names == set()
    assert {".ci/constraints.txt", ".ci/run", ".ci/fetch-kustomize", "README.md", "CHANGELOG.md",
            "LICENSE", "pyproject.toml"} - names == set()
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or n.startswith(".ci/tools")]


def test_the_unpacked_sdist_runs_its_tests(built: dict[str, Path], tmp_path: Path) -> None:
    with tarfile.open(built["sdist"]) as sdist:
        sdist.extractall(tmp_path, filter="data") if hasattr(tarfile, "data_filter") else sdist.extractall(tmp_path)
    (unpacked,) = tmp_path.iterdir()
    env = {**os.environ, "MSGEN_SHARED": str(tmp_path / "no-shared-material")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_input_schemas.py",
         "tests/test_golden.py", "-k", "lenet-cpu or checked_in_schema", "tests/test_samples.py"],
        cwd=unpacked, capture_output=True, text=True, env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^\d+ passed", done.stdout, re.M), done.stdout[-500:]


def test_the_wheel_carries_the_samples_msgen_samples_prints(built: dict[str, Path], tmp_path: Path) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = set(wheel.namelist())
        wheel.extractall(tmp_path / "site")
    samples = {f"msgen/{name}" for name in _files(ROOT, "samples")}
    assert samples and samples <= names
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "msgen").rglob("*.py")}
    assert modules - names == set()
    assert {"msgen/py.typed", "msgen/checks/pod_template_schema.py"} <= names
    assert not [n for n in names if n.startswith(("tests/", "golden/", "samples/"))]
    # The installed package, away from any checkout: its own samples.
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    where = subprocess.run([sys.executable, "-m", "msgen", "samples", "--path"], cwd=tmp_path,
                           capture_output=True, text=True, env=env)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()) == tmp_path / "site" / "msgen" / "samples"
    shown = subprocess.run([sys.executable, "-m", "msgen", "samples", "mindspore/lenet-cpu"], cwd=tmp_path,
                           capture_output=True, text=True, env=env)
    assert shown.stdout == (ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text()


def test_the_readme_has_no_link_an_index_page_would_break() -> None:
    """PyPI shows the README as the project's description, away from the source tree: a link
    to a file or directory of the tree (`[overlays](overlays)`) leads nowhere there."""
    text = (ROOT / "README.md").read_text()
    relative = re.findall(r"\]\((?!https?://|#)([^)]*)\)", text) + re.findall(r'(?:href|src)="(?!https?://|#)([^"]*)"', text)
    assert relative == []
