"""msgen's Dockerfiles can build msgen: each one's build context is assembled exactly as its
COPY lines say, and pip builds a wheel from the directory its `pip install` names.

No container tool is needed: the files a build sees are those COPY puts into the image, so a
file the package needs but no COPY line names (as `samples/`, which pyproject maps to
`msgen.samples`) fails here as it fails in `docker build`. The images themselves are built
for real by the live harness (`tests/live/cluster up`).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT

#: Spread over the Pythons CI runs: its time is building images' contexts and the reference material's checks (tests/python_share.py).
pytestmark = pytest.mark.spread

DOCKERFILES = sorted(ROOT.glob("overlays/*/Dockerfile"))


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(instruction, arguments) of the last stage, continuation lines joined."""
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word.upper() == "FROM":
            found = []
        found.append((word.upper(), rest.strip()))
    return found


def assemble(dockerfile: Path, root: Path) -> None:
    """The image's files from the build context (the repository), as COPY puts them."""
    for word, arguments in instructions(dockerfile):
        if word not in ("COPY", "ADD"):
            continue
        parts = shlex.split(arguments)
        if any(p.startswith("--from=") for p in parts):
            continue  # from another image, not the context
        *sources, target = [p for p in parts if not p.startswith("--")]
        for source in sources:
            path = ROOT / source
            assert path.exists(), f"{dockerfile.relative_to(ROOT)}: COPY {source}: not in the build context"
            destination = root / target.lstrip("/")
            if path.is_dir():
                # COPY dir dest copies the directory's contents into dest
                shutil.copytree(path, destination, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                into = destination / path.name if target.endswith("/") else destination
                into.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, into)


def pip_install(dockerfile: Path) -> list[str]:
    """The words of the RUN line that pip-installs msgen."""
    for word, arguments in instructions(dockerfile):
        if word == "RUN" and "pip install" in arguments:
            return shlex.split(arguments.split("&&")[0])
    raise AssertionError(f"{dockerfile.relative_to(ROOT)} installs nothing with pip")


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_the_build_context_builds_msgen(dockerfile: Path, tmp_path: Path) -> None:
    image = tmp_path / "image"
    assemble(dockerfile, image)
    words = pip_install(dockerfile)
    targets, rest = [], iter(words[words.index("install") + 1:])
    for word in rest:
        if word in ("-c", "--constraint", "-r", "--requirement"):
            value = next(rest)
            assert (image / value.lstrip("/")).is_file(), f"{dockerfile.relative_to(ROOT)}: {word} {value}: no such file in the image"
        elif word.startswith("/"):
            targets.append(word)
    assert targets, f"no /path to install in {' '.join(words)}"
    source = image / targets[0].split("[")[0].lstrip("/")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-q", "-w", str(tmp_path / "wheel"), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, f"{dockerfile.relative_to(ROOT)}: pip cannot build msgen from its context:\n{done.stderr[-3000:]}"
    wheel = next((tmp_path / "wheel").glob("msgen_k8s-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("msgen/samples/") and n.endswith(".yaml") for n in names), "the samples are missing from the wheel"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_the_image_runs_as_non_root_with_pinned_dependencies(dockerfile: Path) -> None:
    steps = instructions(dockerfile)
    users = [arguments for word, arguments in steps if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root"), f"{dockerfile.relative_to(ROOT)} runs as root"
    words = pip_install(dockerfile)
    assert "-c" in words or "--constraint" in words, f"{dockerfile.relative_to(ROOT)}: pip install without .ci/constraints.txt"


def _context_allowlist() -> tuple[list[str], list[str]]:
    """(what `.dockerignore` lets into the build context, what it then leaves out again)."""
    ignore = ROOT / ".dockerignore"
    assert ignore.is_file(), "no .dockerignore: the build context would carry .venv, .git, .ci/tools"
    patterns = [line.strip() for line in ignore.read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert patterns[0] == "*", "the context is an allowlist: everything out first, then what the images take"
    allowed = [p[1:] for p in patterns[1:] if p.startswith("!")]
    dropped = [p for p in patterns[1:] if not p.startswith("!")]
    return allowed, dropped


def test_the_build_context_is_what_the_dockerfiles_copy_and_nothing_else() -> None:
    allowed, dropped = _context_allowlist()
    copied: set[str] = set()
    for dockerfile in DOCKERFILES:
        for word, arguments in instructions(dockerfile):
            parts = shlex.split(arguments)
            if word in ("COPY", "ADD") and not any(p.startswith("--from=") for p in parts):
                copied.update(p for p in parts[:-1] if not p.startswith("--"))
    assert set(allowed) == copied
    assert {"**/__pycache__", "**/*.py[cod]"} <= set(dropped)
    for left_out in (".venv", ".git", ".ci/tools", "tests", "golden", "bench", "docs"):
        assert not any(left_out == a or left_out.startswith(a + "/") for a in allowed), left_out
    # What a context of the allowed paths weighs: a few MB, whatever the checkout holds.
    size = sum(f.stat().st_size for a in allowed for f in ([ROOT / a] if (ROOT / a).is_file() else (ROOT / a).rglob("*"))
               if f.is_file() and "__pycache__" not in f.parts)
    assert size < 16 << 20, size


def test_buildah_sends_only_the_allowlisted_context(tmp_path: Path) -> None:
    """The real builder's reading of .dockerignore: what `COPY . /ctx/` of the repository gets."""
    if shutil.which("buildah") is None:
        pytest.skip("buildah is not installed (the live harness builds msgen's images with it)")
    (tmp_path / "Containerfile").write_text("FROM scratch\nCOPY . /ctx/\n")
    tag = f"localhost/msgen-context-probe:{tmp_path.name.lower()}"
    built = subprocess.run(["buildah", "bud", "--isolation", "chroot", "--pull=never", "--layers=false", "-q",
                            "-f", str(tmp_path / "Containerfile"), "-t", tag, str(ROOT)], capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"buildah cannot build here: {built.stderr[-500:]}")
    container = subprocess.run(["buildah", "from", tag], capture_output=True, text=True, check=True).stdout.strip()
    try:
        mounted = Path(subprocess.run(["buildah", "mount", container], capture_output=True, text=True,
                                      check=True).stdout.strip()) / "ctx"
        found = {str(p.relative_to(mounted)).split("/")[0] for p in mounted.rglob("*")}
        assert found == {"pyproject.toml", "README.md", "LICENSE", ".ci", "msgen", "samples"}, found
        assert [str(p.relative_to(mounted)) for p in (mounted / ".ci").iterdir()] == [".ci/constraints.txt"]
        assert not [p for p in mounted.rglob("__pycache__")]
    finally:
        subprocess.run(["buildah", "umount", container], capture_output=True)
        subprocess.run(["buildah", "rm", container], capture_output=True)
        subprocess.run(["buildah", "rmi", tag], capture_output=True)
