"""Paths named on the command line that are no regular file, read as kubectl reads them.

`msgen render <(generate-jobs)` hands msgen `/dev/fd/63`, a pipe; `/dev/stdin` and a named
FIFO are pipes too. kubectl reads each once, as it reads standard input; so does msgen (a
long one through a temporary file, as standard input). A path that exists but cannot be read
(a socket) is one positioned error, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from .conftest import SAMPLES

SAMPLE = SAMPLES / "mindspore" / "lenet-cpu.yaml"


def _msgen(*args: str, input: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "msgen", *args], input=input, capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def _expected() -> str:
    done = _msgen("render", str(SAMPLE))
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_process_substitution_is_read(command: str) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash makes the process substitution")
    line = f"{sys.executable} -m msgen {command} <(cat {SAMPLE})"
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    if command == "render":
        assert done.stdout == _expected()
    else:
        assert "valid: 1 job(s)" in done.stderr


def test_dev_stdin_is_read() -> None:
    done = _msgen("render", "/dev/stdin", input=SAMPLE.read_text())
    assert done.returncode == 0, done.stderr
    assert done.stdout == _expected()


def _fifo(tmp_path: Path, text: str) -> tuple[Path, threading.Thread]:
    fifo = tmp_path / "jobs.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "w") as stream:
            stream.write(text)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return fifo, writer


def test_a_named_fifo_with_an_error_is_reported_at_its_line(tmp_path: Path) -> None:
    text = SAMPLE.read_text().replace("replicas: 2", "replicas: two", 1)
    fifo, writer = _fifo(tmp_path, text)
    done = _msgen("render", str(fifo))
    writer.join(10)
    assert done.returncode == 1 and done.stdout == ""
    line = text[: text.index("replicas: two")].count("\n") + 1
    assert done.stderr.startswith(f"{fifo}:{line}:"), done.stderr
    assert f"{line:>5} |       replicas: two" in done.stderr  # the excerpt: read once, kept


#: Jobs in the long stream: few, each padded, so that the stream passes 4 MiB without a long render.
JOBS = 70


def test_a_long_stream_through_a_fifo_is_read_whole(tmp_path: Path) -> None:
    """Over 4 MiB, what a pipe holds is parsed from a temporary file, as standard input is."""
    job = yaml.safe_load(SAMPLE.read_text())
    docs = []
    for i in range(JOBS):
        job["metadata"]["name"] = f"lenet-{i}"
        job["metadata"]["annotations"] = {"padding": "x" * 64_000}
        docs.append(yaml.safe_dump(job, width=1 << 20))
    text = "---\n".join(docs)
    assert len(text.encode()) > 4 << 20
    fifo, writer = _fifo(tmp_path, text)
    done = _msgen("render", "-q", str(fifo))
    writer.join(30)
    assert done.returncode == 0, done.stderr[-2000:]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where PyYAML has it: megabytes
    names = {d["metadata"]["name"] for d in yaml.load_all(done.stdout, Loader=loader) if d["kind"] == "Job"}
    assert len(names) == JOBS * 2  # a Scheduler Job and a Worker Job per job


def test_a_socket_is_an_error_at_its_path(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        done = _msgen("render", str(path))
    finally:
        server.close()
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"{path}:1:1: error: cannot be read ("), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_a_missing_path_is_still_a_usage_error() -> None:
    done = _msgen("render", "no/such/file.yaml")
    assert done.returncode == 2 and "no such file or directory: no/such/file.yaml" in done.stderr
