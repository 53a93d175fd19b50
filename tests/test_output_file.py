"""`msgen render -o FILE`: whole or nothing, as the user's own file stays."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, SAMPLES, msgen

SAMPLE = str(SAMPLES / "mindspore" / "lenet-cpu.yaml")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    out.write_text("old\n")
    out.chmod(0o640)
    assert msgen("render", SAMPLE, "-o", str(out)).exit_code == 0
    assert mode(out) == 0o640
    assert "kind: Job" in out.read_text()


def test_a_new_file_gets_the_umasks_mode(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        assert msgen("render", SAMPLE, "-o", str(tmp_path / "new.yaml")).exit_code == 0
    finally:
        os.umask(previous)
    assert mode(tmp_path / "new.yaml") == 0o640


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.yaml"
    target.write_text("old\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    assert msgen("render", SAMPLE, "-o", str(link)).exit_code == 0
    assert link.is_symlink()
    assert "kind: Job" in target.read_text()
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["out.yaml"]


def test_a_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    run = msgen("render", SAMPLE, "-o", str(tmp_path / "nowhere" / "out.yaml"))
    assert run.exit_code == 2
    assert "no such directory" in run.stderr and "internal error" not in run.stderr


def test_an_unwritable_directory_is_an_input_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    tmp_path.chmod(0o500)
    try:
        run = msgen("render", SAMPLE, "-o", str(tmp_path / "out.yaml"))
    finally:
        tmp_path.chmod(0o700)
    assert run.exit_code == 1 and "cannot write the output" in run.stderr


# The signal arrives at the worst moment: the temporary file is written, not yet renamed.
_SIGNALLED_WRITE = """
import os, signal, sys
import msgen.yamlio.atomic_file as atomic_file
real_replace = os.replace
def replace(src, dst):
    os.kill(os.getpid(), signal.{signal})
    real_replace(src, dst)
atomic_file.os.replace = replace
atomic_file.write_whole(sys.argv[1], "new\\n")
"""


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_signal_while_writing_leaves_no_temporary_file(tmp_path: Path, signame: str) -> None:
    out = tmp_path / "out.yaml"
    out.write_text("old\n")
    code = _SIGNALLED_WRITE.format(signal=signame)
    done = subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT, capture_output=True)
    assert done.returncode == -getattr(signal, signame), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.yaml"]
    assert out.read_text() == "old\n"
