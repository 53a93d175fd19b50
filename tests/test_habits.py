"""Habits of kubectl, helm, kustomize and kpt users: `msgen completion SHELL`, `msgen version`,
`msgen validate --strict` (warnings fail, for CI) and `-q/--quiet` (warnings left out)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from msgen import __version__
from msgen.model import versions

from .conftest import ROOT, SAMPLES, msgen, msgen_process

#: Spread over the Pythons CI runs: its time is the real kustomize's (tests/python_share.py).
pytestmark = pytest.mark.spread

BIN = Path(sys.executable).parent
#: A job whose render warns: its annotation overrides --target, and statefulset cannot
#: express its restart and success policies.
WARNS = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text().replace(
    "metadata:\n", "metadata:\n  annotations: {msgen/target: statefulset}\n", 1)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_what_clicks_variable_would_install(shell: str) -> None:
    done = subprocess.run([str(BIN / "msgen"), "completion", shell], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "_MSGEN_COMPLETE": f"{shell}_source"}
    clicks = subprocess.run([str(BIN / "msgen")], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.stdout == clicks.stdout and "_MSGEN_COMPLETE" in done.stdout


def test_completion_of_another_shell_is_a_usage_error() -> None:
    run = msgen("completion", "powershell")
    assert run.exit_code == 2 and "'powershell' is not one of 'bash', 'zsh', 'fish'" in run.stderr


def test_version_names_the_kubernetes_range_and_the_mindspore_contract() -> None:
    run = msgen("version")
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert lines[0] == f"msgen {__version__}"
    assert lines[1].startswith(f"Kubernetes: {versions.show(versions.OLDEST)} to {versions.show(versions.NEWEST)}")
    assert lines[2].startswith("MindSpore: 2.7.0 to 2.10.0 (--mindspore-version, default 2.10.0): ")


def test_strict_validate_fails_on_warnings_and_shows_them(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(WARNS)
    assert msgen("validate", str(job)).exit_code == 0
    for args in (("--strict",), ("--strict", "-q")):
        run = msgen("validate", *args, str(job))
        assert run.exit_code == 1 and run.stdout == ""
        assert "warning: spec.msReplicaSpecs.worker: successPolicy" in run.stderr
        assert run.stderr.rstrip().endswith("msgen: 2 warning(s), which --strict makes fail"), run.stderr
    clean = msgen("validate", "--strict", str(SAMPLES / "mindspore" / "lenet-cpu.yaml"))
    assert clean.exit_code == 0, clean.stderr


@pytest.mark.parametrize("command", ["render", "validate"])  # the click-free render, and click
@pytest.mark.parametrize("flag", ["-q", "--quiet"])
def test_quiet_leaves_warnings_out_but_not_errors(tmp_path: Path, command: str, flag: str) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(WARNS)
    loud = msgen_process(command, str(job))
    assert "warning:" in loud.stderr
    quiet = msgen_process(command, flag, str(job))
    assert quiet.exit_code == 0 and "warning:" not in quiet.stderr, quiet.stderr
    assert quiet.stdout == loud.stdout
    job.write_text(WARNS.replace("replicas: 2", "replicas: -1"))
    failed = msgen_process(command, flag, str(job))
    assert failed.exit_code == 1 and "error: spec.msReplicaSpecs.worker.replicas" in failed.stderr
    assert "warning:" not in failed.stderr
