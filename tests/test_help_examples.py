"""The examples of every `--help` run as printed wherever msgen is installed.

A user who has just run `pip install msgen` tries the help's examples in an empty directory.
Here msgen is built into a wheel (setuptools' PEP 517 hook, offline, in a copy of what the
wheel needs) and installed with `pip install --no-deps` into a fresh virtualenv, which reads
its dependencies from this test's environment; each command's examples then run in order in
an empty directory of their own, with bash, as printed. An example that needs something
more says so in a trailing `# needs ...` comment: files (`job.yaml`, `jobs/`) are provided
first, and one that needs a cluster, kustomize or Argo CD's directory is not run.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .conftest import ROOT, SAMPLES

#: What the wheel is built from (the rest of the tree is not packaged).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "MANIFEST.in", "msgen", "samples")
#: What a `# needs` comment may ask for that a test cannot give: the example is not run.
NOT_HERE = ("cluster", "kustomize", "helm", "here")
HEADER = re.compile(r"^\s+Examples?\b[^:]*:\s*$")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `bin` directory of a virtualenv holding msgen installed from its wheel."""
    pytest.importorskip("setuptools.build_meta", reason="setuptools (the [test] extra) builds the wheel")
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    for name in WHEEL_SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy(ROOT / name, source / name)
    code = "import setuptools.build_meta as b, sys; print('built:', b.build_wheel(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", code, str(base / "dist")], cwd=source, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    wheel = base / "dist" / done.stdout.split("built: ")[-1].strip()
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # Its dependencies: this environment's site-packages, as plain path entries (so the
    # checkout's own editable install, which a .pth there would activate, stays out).
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    Path(purelib, "test-dependencies.pth").write_text("".join(f"{p}\n" for p in sorted(ours)))
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                          "--disable-pip-version-check", "--ignore-installed", "--quiet", str(wheel)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr[-3000:]
    where = subprocess.run([str(python), "-c", "import msgen; print(msgen.__file__)"], cwd=base,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv)), where  # the wheel's msgen, not the checkout's
    return venv / "bin"


def examples(text: str) -> list[str]:
    """The example lines of one `--help` text."""
    found: list[str] = []
    taking = False
    for line in text.splitlines():
        if HEADER.match(line):
            taking = True
        elif taking and line.strip() and found and found[-1].endswith("\\"):
            found[-1] += "\n" + line.strip()  # a shell line continued
        elif taking and line.strip():
            found.append(line.strip())
        else:
            taking = False
    return found


def run(line: str, cwd: Path, bin_dir: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(home)}
    env.pop("KUBE_VERSION", None)
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def provide(needs: str, cwd: Path) -> None:
    """The files a `# needs` comment names: jobs of the user's, here the bundled samples."""
    if "jobs/" in needs and not (cwd / "jobs").exists():
        (cwd / "jobs").mkdir()
        for sample in ("mindspore/lenet-cpu.yaml", "mindspore-legacy/msjob-mnist-dist.yaml"):
            shutil.copy(SAMPLES / sample, cwd / "jobs" / Path(sample).name)
    if "job.yaml" in needs and not (cwd / "job.yaml").exists():
        shutil.copy(SAMPLES / "mindspore" / "lenet-cpu.yaml", cwd / "job.yaml")


def test_every_helps_examples_run_in_an_empty_directory(installed: Path, tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed: the examples are shell lines")
    home = tmp_path / "home"
    home.mkdir()
    top = run("msgen --help", tmp_path, installed, home)
    assert top.returncode == 0, top.stderr
    commands = re.findall(r"^  ([a-z][-a-z]*)\s", top.stdout.split("Commands:")[1], re.M)
    assert {"render", "convert", "samples", "validate", "completion", "version"} <= set(commands)
    ran: list[tuple[str, str, str]] = []
    skipped: list[str] = []
    failed: list[tuple[str, str, str]] = []
    for command in ["", *commands]:
        text = run(f"msgen {command} --help", tmp_path, installed, home).stdout
        workdir = tmp_path / (command or "msgen")
        workdir.mkdir()
        for line in examples(text):
            needs = line.partition("# needs")[2]
            if any(word in needs for word in NOT_HERE):
                skipped.append(line)
                continue
            provide(needs, workdir)
            done = run(line, workdir, installed, home)
            (ran if done.returncode == 0 else failed).append((command, line, done.stderr[-800:]))
    assert not failed, failed
    shown = {line for _, line, _ in ran}
    assert {"msgen render job.yaml > out.yaml", "msgen convert old-msjob.yaml > msjob.yaml",
            'msgen validate "$(msgen samples --path)"'} <= shown, shown  # fmt: skip
    assert len(ran) >= 15 and all("needs" in line for line in skipped), (len(ran), skipped)


def test_an_example_that_needs_more_says_so() -> None:
    assert examples("  Examples:\n    msgen a\n    msgen b   # needs jobs/\n\nOptions:\n") == [
        "msgen a", "msgen b   # needs jobs/"]
    assert examples("  Example:\n    msgen a \\\n      --b   # needs helm\n") == ["msgen a \\\n--b   # needs helm"]
