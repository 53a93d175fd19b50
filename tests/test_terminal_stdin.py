"""With no input given on a terminal, the commands that read stdin say so instead of waiting
silently. Driven through a real pseudo-terminal, as a person would meet it."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT

BIN = Path(sys.executable).parent
JOB = (ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text()


def on_terminal(command: list[str], stdin_text: str) -> tuple[int, str]:
    """Run `command` with a pty as stdin, wait for its first words on stderr, then type
    `stdin_text` and Ctrl-D; its exit status and stderr."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            command, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
        )
        os.close(terminal)
        assert process.stderr is not None
        ready, _, _ = select.select([process.stderr], [], [], 30)
        assert ready, f"{command[0]} waited silently on a terminal"
        first = os.read(process.stderr.fileno(), 4096).decode()
        for line in stdin_text.splitlines():
            os.write(controller, line.encode() + b"\n")
            time.sleep(0.001)
        os.write(controller, b"\x04")  # Ctrl-D at the start of a line: end of input
        _, rest = process.communicate(timeout=60)
        return process.returncode, first + rest.decode()
    finally:
        os.close(controller)


@pytest.mark.parametrize(
    "command, expected",
    [
        (["msgen", "render"], "msgen: reading YAML from standard input (a terminal)"),
        (["msgen", "convert"], "msgen: reading YAML from standard input (a terminal)"),
        (["msgen-krm"], "msgen-krm: reading a ResourceList from standard input (a terminal)"),
    ],
)
def test_reading_stdin_on_a_terminal_is_announced(command: list[str], expected: str) -> None:
    status, stderr = on_terminal([str(BIN / command[0]), *command[1:]], "" if command == ["msgen-krm"] else JOB)
    assert expected in stderr
    if command == ["msgen", "render"]:
        assert status == 0, stderr  # what was typed is read and rendered


def test_piped_stdin_is_read_without_a_note() -> None:
    done = subprocess.run([str(BIN / "msgen"), "render"], input=JOB, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "standard input" not in done.stderr
