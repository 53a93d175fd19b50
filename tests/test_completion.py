"""Shell completion, as the README's `eval "$(_MSGEN_COMPLETE=bash_source msgen)"` sets it up.

Once click's completion is registered, bash offers only what click returns, so an argument
that is not typed as a path completes nothing. PATH arguments and `-o FILE` are click paths:
click answers "complete a file name", and bash does.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT

BIN = Path(sys.executable).parent


def clicks_answer(*words: str) -> list[str]:
    """What msgen's completion tells bash for the last of `words` (being typed)."""
    env = {**os.environ, "_MSGEN_COMPLETE": "bash_complete", "COMP_WORDS": " ".join(["msgen", *words]),
           "COMP_CWORD": str(len(words))}
    done = subprocess.run([str(BIN / "msgen")], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("words", [
    ["render", "samples/mindspore/lenet-c"], ["render", "-t", "pod", "samp"], ["validate", "sam"],
    ["convert", "samples/mindspore-legacy/"], ["apply", "samples/m"], ["diff", "samples/m"],
    ["delete", "samples/m"], ["render", "-o", "out"],
])
def test_path_arguments_complete_as_file_names(words: list[str]) -> None:
    assert clicks_answer(*words) == [f"file,{words[-1]}"]


def test_choices_still_complete_as_choices() -> None:
    assert clicks_answer("render", "--target", "state") == ["plain,statefulset"]


def test_bash_completes_a_sample_path_after_the_readmes_eval_line(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    rcfile = tmp_path / "bashrc"
    rcfile.write_text(f'PS1="$ "\nPATH={BIN}:$PATH\neval "$(_MSGEN_COMPLETE=bash_source msgen)"\n'
                      'complete -p msgen && echo completion-ready\n')
    env = {"HOME": str(tmp_path), "TERM": "dumb", "INPUTRC": "/dev/null", "PATH": os.environ["PATH"]}
    # An interactive bash in the project directory, on a terminal of its own. subprocess, not
    # pty.fork(): forking a process that runs threads (pytest-xdist's) may deadlock the child.
    fd, terminal = pty.openpty()
    child = subprocess.Popen([bash, "--noprofile", "--rcfile", str(rcfile), "-i"], cwd=ROOT, env=env,
                             stdin=terminal, stdout=terminal, stderr=terminal, start_new_session=True)
    os.close(terminal)
    try:
        assert "completion-ready" in _read_until(fd, "completion-ready")
        os.write(fd, b"msgen render samples/mindspore/lenet-c\t")
        assert "lenet-cpu.yaml" in _read_until(fd, "lenet-cpu.yaml")
    finally:
        child.kill()
        child.wait()
        os.close(fd)


def _read_until(fd: int, wanted: str, timeout: float = 60.0) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 4096).decode(errors="replace")
            except OSError:
                break
    return seen
