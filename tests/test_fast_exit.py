"""The console scripts end a render with `os._exit` (msgen.hosts.command_line.entry.leave): nothing may be lost.

Skipping the interpreter's clean-up saves start-up time, but buffered output is then only
written if msgen flushes it itself, and a reader that has gone must still give status 1 with
no traceback. Each test runs a real process, as a host does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from msgen.hosts.kustomize.krm import run_bytes

from .conftest import ROOT, SAMPLES, msgen

BIN = Path(sys.executable).parent
#: Standard streams buffered, as hosts run msgen (PYTHONUNBUFFERED would hide a lost buffer).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
SAMPLE = SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml"


def _many_workers(tmp_path: Path, workers: int) -> Path:
    """An MSJob whose `--target pod` output is far larger than a pipe's buffer."""
    text = SAMPLE.read_text()
    assert "replicas: 4" in text
    job = tmp_path / "wide.yaml"
    job.write_text(text.replace("replicas: 4", f"replicas: {workers}", 1))
    return job


def test_output_larger_than_a_pipe_buffer_arrives_whole(tmp_path: Path) -> None:
    job = _many_workers(tmp_path, 400)
    expected = msgen("render", "--target", "pod", str(job))
    assert expected.exit_code == 0 and len(expected.stdout) > 1 << 18
    for command in ([str(BIN / "msgen")], [sys.executable, "-m", "msgen"]):
        done = subprocess.run(
            [*command, "render", "--target", "pod", str(job)], capture_output=True, text=True, cwd=ROOT,
            env=ENV,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected.stdout
        assert done.stderr == expected.stderr


@pytest.mark.parametrize("size", ["larger-than-a-pipe-buffer", "smaller-than-the-stream-buffer"])
def test_the_krm_function_delivers_its_whole_resource_list(tmp_path: Path, size: str) -> None:
    if size == "larger-than-a-pipe-buffer":
        item = yaml.safe_load(_many_workers(tmp_path, 400).read_text())
    else:  # passed through, so the output stays in the stream's 8 KiB buffer until flushed
        item = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}}
    resource_list = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"},
                           "data": {"target": "pod"}},
        "items": [item],
    }
    text = yaml.safe_dump(resource_list)
    done = subprocess.run([str(BIN / "msgen-krm")], input=text, capture_output=True, text=True, cwd=tmp_path,
                          env=ENV)
    status, expected, _ = run_bytes(text.encode(), str(tmp_path))
    assert (done.returncode, status) == (0, 0), done.stderr
    assert (len(expected) > 1 << 18) if size.startswith("larger") else (0 < len(expected) < 8192)
    assert done.stdout == expected  # to its last byte


def test_a_closed_standard_output_is_status_1_without_a_traceback(tmp_path: Path) -> None:
    job = _many_workers(tmp_path, 400)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before msgen writes anything
    try:
        done = subprocess.run(
            [str(BIN / "msgen"), "render", "--target", "pod", str(job)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=ENV,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


def test_exit_statuses_are_kept(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SAMPLE.read_text().replace("replicas: 4", "replicas: -2", 1))
    statuses = {}
    for name, args in {
        "ok": ["render", str(SAMPLE)],
        "bad input": ["render", str(bad)],
        "missing file": ["render", str(tmp_path / "absent.yaml")],
    }.items():
        done = subprocess.run([str(BIN / "msgen"), *args], capture_output=True, text=True, cwd=ROOT, env=ENV)
        statuses[name] = done.returncode
    assert statuses == {"ok": 0, "bad input": 1, "missing file": 2}
