"""Every shell command the README and the docs/ pages give in a code block runs, as written.

A reader copies these blocks into a shell, so each ```sh (or bash, shell, console) block runs
here with `bash` (`set -e -o pipefail`: a failing line fails the block) in a scratch directory
that holds what the commands name: `samples/`, `overlays/`, `job.yaml` (a sample MSJob),
`jobs/` (three samples, the 2020 MSJob among them), `old-msjob.yaml` (the 2020 MSJob) and
`chart/` (the Helm chart of tests/helm/training),
with the installed `msgen` first on PATH and HOME inside the scratch directory, so a command
that writes a plug-in or a config writes nothing of the user's.

A block that needs more than that carries a marker on the line before its fence:

    <!-- docs-test needs=KIND [exit=0,1]: why -->

`needs` says when it runs (see NEEDS); `exit` lists the statuses the text documents for it
(default 0). A marker without a reason, of an unknown kind, or on no shell block fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from .conftest import ROOT, SAMPLES, kustomize_binary

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = {"sh", "bash", "shell", "console"}

#: When a marked block runs; a kind not listed here is an error in the page.
NEEDS = {
    "cluster": "runs with MSGEN_TEST_KUBECONFIG (as KUBECONFIG) and kubectl on PATH",
    "kustomize": "runs with the kustomize binary ($MSGEN_KUSTOMIZE, .ci/tools or PATH)",
    "kubectl": "runs with kubectl on PATH (no cluster)",
    "install": "runs with MSGEN_TEST_INSTALL=1, in a copy of the source tree (it installs from the package index)",
    "helm": "runs with Helm 3 as `helm` on PATH (tests/test_helm.py finds it)",
    "helm4": "runs with Helm 4 as `helm` on PATH (tests/test_helm.py finds it)",
    "manual": "never runs here; the reason says what runs it instead",
}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
_MARKER = re.compile(r"<!--\s*docs-test\b(?P<options>[^:]*?):(?P<reason>.*?)-->", re.S)
#: A marker starts its line; the syntax quoted in running text (after a backtick) is not one.
_MARKER_LINE = re.compile(r"^[ \t]*(<!--\s*docs-test\b.*?-->)", re.M | re.S)


class Block(NamedTuple):
    page: str  # path relative to the project
    line: int  # of the opening fence
    info: str
    script: str
    marker: str | None  # the marker's text, when one precedes the fence


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a page, with the marker on the line before its fence."""
    text = path.read_text(encoding="utf-8")
    found = []
    for fence in _FENCE.finditer(text):
        before = text[: fence.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        marker = before if before.startswith("<!--") and "docs-test" in before else None
        indent = fence.group("indent")
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line
                         for line in fence.group("body").split("\n"))
        found.append(Block(str(path.relative_to(ROOT)), text.count("\n", 0, fence.start()) + 1,
                           fence.group("info").strip(), body, marker))
    return found


class Marker(NamedTuple):
    needs: str | None
    exits: frozenset[int]
    reason: str


def parse_marker(text: str | None) -> Marker:
    """`<!-- docs-test needs=cluster exit=0,1: why -->` → Marker('cluster', {0, 1}, 'why')."""
    if text is None:
        return Marker(None, frozenset({0}), "")
    match = _MARKER.fullmatch(text.strip())
    assert match is not None, f"not a docs-test marker: {text!r}"
    options = dict(part.split("=", 1) for part in match.group("options").split())
    assert set(options) <= {"needs", "exit"}, f"unknown marker option in {text!r}"
    exits = frozenset(int(n) for n in options.get("exit", "0").split(","))
    return Marker(options.get("needs"), exits, match.group("reason").strip())


def shell_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page) if b.info.split()[:1] and b.info.split()[0] in SHELLS]


SHELL_BLOCKS = shell_blocks()


def test_the_pages_give_shell_blocks_to_run() -> None:
    """The collection itself can fail: the README's first commands are among the blocks."""
    readme = [b for b in SHELL_BLOCKS if b.page == "README.md"]
    assert len(readme) >= 4, readme
    assert any("msgen render job.yaml > out.yaml" in b.script for b in readme)
    assert len({b.page for b in SHELL_BLOCKS}) >= 4


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fence_says_what_it_holds(page: Path) -> None:
    """A fence without an info string could hide a command from this test; each says its
    language (`sh`, `yaml`, `text`, ...)."""
    bare = [f"{b.page}:{b.line}" for b in blocks(page) if not b.info]
    assert bare == [], f"fences without an info string: {bare}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_marker_names_a_known_need_and_a_reason_and_sits_on_a_shell_block(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    markers = [m.group(1) for m in _MARKER_LINE.finditer(text)]
    placed = [b.marker for b in blocks(page) if b.marker is not None and b.info.split()[:1] and b.info.split()[0] in SHELLS]
    assert sorted(markers) == sorted(placed), "a docs-test marker on no shell block"
    for marker in markers:
        parsed = parse_marker(marker)
        assert parsed.needs is None or parsed.needs in NEEDS, f"unknown need in {marker!r}; known: {sorted(NEEDS)}"
        if parsed.needs is not None:
            assert len(parsed.reason.split()) >= 4, f"a marked block must say why: {marker!r}"


def workspace(tmp: Path) -> Path:
    """The files the pages' commands name, as a user of a source checkout has them."""
    shutil.copytree(SAMPLES, tmp / "samples")
    shutil.copytree(ROOT / "overlays", tmp / "overlays", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(SAMPLES / "mindspore" / "lenet-cpu.yaml", tmp / "job.yaml")
    shutil.copy(SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml", tmp / "old-msjob.yaml")
    (tmp / "jobs").mkdir()
    for sample in ("mindspore/lenet-cpu.yaml", "mindspore/widedeep-ps.yaml", "mindspore-legacy/msjob-mnist-dist.yaml"):
        shutil.copy(SAMPLES / sample, tmp / "jobs" / Path(sample).name)
    shutil.copytree(ROOT / "tests" / "helm" / "training", tmp / "chart")
    (tmp / "home").mkdir()
    return tmp


def environment(tmp: Path, extra_path: list[str]) -> dict[str, str]:
    """HOME in the scratch directory; `extra_path` entries that are files (a Helm binary) are
    put on PATH as `helm`, directories as they are."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("KUBECONFIG", "KUSTOMIZE_PLUGIN_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "VIRTUAL_ENV")
           and not k.startswith("HELM_")}
    env["HOME"] = str(tmp / "home")
    directories = []
    for entry in extra_path:
        if Path(entry).is_file():
            linked = tmp / "bin"
            linked.mkdir(exist_ok=True)
            (linked / "helm").symlink_to(entry)
            entry = str(linked)
        directories.append(entry)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), *directories, os.environ.get("PATH", "")])
    return env


def skip_reason(need: str | None) -> tuple[str | None, list[str], dict[str, str]]:
    """Why a block cannot run here (None: it can), extra PATH entries, extra env."""
    if need is None:
        return None, [], {}
    if need == "kustomize":
        binary = kustomize_binary()
        if binary is None:
            return "kustomize is missing (.ci/fetch-kustomize installs it; or set MSGEN_KUSTOMIZE)", [], {}
        return None, [str(Path(binary).parent)], {}
    if need == "kubectl":
        return (None if shutil.which("kubectl") else "kubectl is not on PATH"), [], {}
    if need == "cluster":
        config = os.environ.get("MSGEN_TEST_KUBECONFIG")
        if not config or not shutil.which("kubectl"):
            return "needs a cluster: set MSGEN_TEST_KUBECONFIG and put kubectl on PATH", [], {}
        return None, [], {"KUBECONFIG": config}
    if need == "install":
        if os.environ.get("MSGEN_TEST_INSTALL") != "1":
            return "installs from the package index: set MSGEN_TEST_INSTALL=1 to run it", [], {}
        return None, [], {}
    if need in ("helm", "helm4"):
        from .test_helm import find_helm

        binary = find_helm(3 if need == "helm" else 4)
        if binary is None:
            return f"{need} is missing (python tests/live/harness/components/helm.py build builds it)", [], {}
        return None, [binary], {}
    return "not run by this test", [], {}


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: f"{b.page}:{b.line}")
def test_the_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    marker = parse_marker(block.marker)
    reason, extra_path, extra_env = skip_reason(marker.needs)
    if reason is not None:
        pytest.skip(f"{block.page}:{block.line}: {reason} ({marker.reason})")
    if marker.needs == "install":
        cwd = tmp_path / "tree"
        shutil.copytree(ROOT, cwd, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build"))
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    else:
        cwd = workspace(tmp_path)
        env = environment(tmp_path, extra_path)
    env.update(extra_env)
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    where = f"{block.page}:{block.line}"
    assert done.returncode in marker.exits, (
        f"{where}: exit {done.returncode}, documented {sorted(marker.exits)}\n"
        f"{block.script}\n--- stdout\n{done.stdout[-2000:]}\n--- stderr\n{done.stderr[-3000:]}"
    )
    assert "Traceback" not in done.stderr, f"{where}:\n{done.stderr[-3000:]}"
