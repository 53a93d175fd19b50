"""The per-device launcher, executed with real POSIX shells and stub programs.

Each test runs the script msgen ships (the ConfigMap's text) and checks what the copies saw
and did: their environment, their log prefix, the exit status, and signal forwarding.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from msgen.launchers.launcher import script

def _shells() -> list[list[str]]:
    """Every distinct POSIX shell here (`sh` is often one of the others under another name)."""
    found: dict[str, list[str]] = {}
    for shell in (["dash"], ["bash", "--posix"], ["busybox", "sh"], ["sh"]):
        path = shutil.which(shell[0])
        if path is not None:
            found.setdefault(os.path.realpath(path), shell)
    return list(found.values())


SHELLS = _shells()

#: A stand-in for one MindSpore process: records its environment, prints two lines, then
#: behaves as STUB_<RANK_ID> says: "fail:<status>" (once every other copy is ready), "sleep"
#: (until TERM), "deaf" (ignores TERM).
STUB = """#!/bin/sh
out="$STUB_DIR"
env | grep -E '^(MS_NODE_ID|RANK_ID|DEVICE_ID)=' | sort > "$out/env.$RANK_ID"
echo "hello from $MS_NODE_ID"
printf 'no newline at the end'
echo >&2
eval "what=\\${STUB_$RANK_ID:-ok}"
case "$what" in
  fail:*)
    waited=0
    while [ "$(ls "$out" | grep -c '^ready\\.')" -lt "$((MS_LOCAL_WORKER - 1))" ] && [ "$waited" -lt 200 ]; do
      sleep 0.05; waited=$((waited + 1))
    done
    exit "${what#fail:}" ;;
  sleep) sleep 60 & trap 'touch "$out/term.$RANK_ID"; kill $!; exit 143' TERM; touch "$out/ready.$RANK_ID"; wait $! ;;
  deaf) trap '' TERM; touch "$out/ready.$RANK_ID"; sleep 60 ;;
  ok) exit 0 ;;
esac
"""


@pytest.fixture
def stub(tmp_path: Path) -> Path:
    path = tmp_path / "stub"
    path.write_text(STUB)
    path.chmod(0o755)
    (tmp_path / "launcher.sh").write_text(script())
    return path


def start(shell: list[str], stub: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    full = {
        "PATH": os.environ["PATH"],
        "STUB_DIR": str(stub.parent),
        "TMPDIR": str(stub.parent),
        **env,
    }
    return subprocess.Popen(
        [*shell, str(stub.parent / "launcher.sh"), str(stub)],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_env(directory: Path, rank: int) -> dict[str, str]:
    lines = (directory / f"env.{rank}").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def wait_for(paths: list[Path], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"never appeared: {[p for p in paths if not p.exists()]}"
        time.sleep(0.05)


@pytest.mark.parametrize("shell", SHELLS, ids=" ".join)
def test_each_copy_gets_its_rank_device_and_log_prefix(shell: list[str], stub: Path) -> None:
    run = start(shell, stub, {"MS_LOCAL_WORKER": "4", "MS_NODE_RANK": "2", "MSGEN_SET_DEVICE_ID": "1"})
    out, err = run.communicate(timeout=30)
    assert run.returncode == 0, err
    for i in range(4):
        rank = 2 * 4 + i
        assert read_env(stub.parent, rank) == {"MS_NODE_ID": str(rank), "RANK_ID": str(rank), "DEVICE_ID": str(i)}
        assert f"[rank {rank}] hello from {rank}\n" in out
        assert f"[rank {rank}] no newline at the end\n" in out
    assert {p.name for p in stub.parent.glob("env.*")} == {f"env.{r}" for r in range(8, 12)}
    assert list(stub.parent.glob("msgen-launcher.*")) == [], "the launcher cleans up after itself"


@pytest.mark.parametrize("shell", SHELLS, ids=" ".join)
def test_no_device_id_off_ascend(shell: list[str], stub: Path) -> None:
    run = start(shell, stub, {"MS_LOCAL_WORKER": "2", "MS_NODE_RANK": "0"})
    assert run.wait(timeout=30) == 0
    assert read_env(stub.parent, 1) == {"MS_NODE_ID": "1", "RANK_ID": "1"}


@pytest.mark.parametrize("shell", SHELLS, ids=" ".join)
def test_a_failed_copy_stops_the_others_and_its_status_is_the_launchers(shell: list[str], stub: Path) -> None:
    env = {"MS_LOCAL_WORKER": "3", "MS_NODE_RANK": "1", "STUB_3": "sleep", "STUB_4": "fail:7", "STUB_5": "sleep"}
    began = time.monotonic()
    run = start(shell, stub, env)
    _, err = run.communicate(timeout=30)
    assert run.returncode == 7
    assert "rank 4 exited with status 7; stopping the others" in err
    assert (stub.parent / "term.3").exists() and (stub.parent / "term.5").exists()
    assert time.monotonic() - began < 10


@pytest.mark.parametrize("shell", SHELLS, ids=" ".join)
def test_sigterm_reaches_every_copy(shell: list[str], stub: Path) -> None:
    env = {"MS_LOCAL_WORKER": "3", "MS_NODE_RANK": "0", "STUB_0": "sleep", "STUB_1": "sleep", "STUB_2": "sleep"}
    run = start(shell, stub, env)
    wait_for([stub.parent / f"ready.{r}" for r in range(3)])  # TERM traps installed
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=30)
    assert [(stub.parent / f"term.{r}").exists() for r in range(3)] == [True] * 3
    assert run.returncode == 143, err


@pytest.mark.parametrize("shell", SHELLS, ids=" ".join)
def test_a_copy_that_ignores_sigterm_is_killed_after_the_grace_period(shell: list[str], stub: Path) -> None:
    env = {"MS_LOCAL_WORKER": "2", "MS_NODE_RANK": "0", "STUB_0": "fail:3", "STUB_1": "deaf", "MSGEN_STOP_GRACE": "1"}
    run = start(shell, stub, env)
    _, err = run.communicate(timeout=30)
    assert run.returncode == 3
    assert "sending SIGKILL" in err


def watched_grep(directory: Path) -> Path:
    """A `grep` first on PATH that notes each search before it runs the real one: the
    launcher's checks of the rank table, counted (`checks`)."""
    real = shutil.which("grep")
    assert real is not None
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "grep"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{directory}/greps"\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    return bin_dir


def checks(directory: Path, table: Path) -> int:
    greps = directory / "greps"
    return sum(str(table) in line for line in greps.read_text().splitlines()) if greps.exists() else 0


@pytest.mark.parametrize("shell", SHELLS[:1], ids=" ".join)
def test_waits_for_a_completed_rank_table(shell: list[str], stub: Path) -> None:
    table = stub.parent / "hccl.json"
    table.write_text('{"status":"initializing"}')
    env = {"MS_LOCAL_WORKER": "1", "MS_NODE_RANK": "0", "RANK_TABLE_FILE": str(table), "MSGEN_RANK_TABLE_TIMEOUT": "20",
           "PATH": f"{watched_grep(stub.parent)}:{os.environ['PATH']}"}
    run = start(shell, stub, env)
    # The positive signal: the launcher found the table incomplete and looked again, so it had
    # its chance to start a process in between.
    deadline = time.monotonic() + 15
    while checks(stub.parent, table) < 2:
        assert time.monotonic() < deadline and run.poll() is None, "the launcher never checked the table twice"
        time.sleep(0.05)
    assert not (stub.parent / "env.0").exists(), "no process starts before the table is complete"
    table.write_text('{"version": "1.0", "server_count": "1", "status": "completed"}')
    _, err = run.communicate(timeout=30)
    assert run.returncode == 0, err
    assert (stub.parent / "env.0").exists()


@pytest.mark.parametrize("shell", SHELLS[:1], ids=" ".join)
def test_rank_table_wait_is_bounded(shell: list[str], stub: Path) -> None:
    table = stub.parent / "hccl.json"
    table.write_text('{"status":"initializing"}')
    env = {"MS_LOCAL_WORKER": "1", "MS_NODE_RANK": "0", "RANK_TABLE_FILE": str(table), "MSGEN_RANK_TABLE_TIMEOUT": "1"}
    run = start(shell, stub, env)
    _, err = run.communicate(timeout=30)
    assert run.returncode == 1
    assert f"the rank table {table} was not completed within 1s" in err
    assert not (stub.parent / "env.0").exists()


@pytest.mark.parametrize(
    "env,message",
    [
        ({"MS_NODE_RANK": "0"}, "MS_LOCAL_WORKER must be a whole number, got ''"),
        ({"MS_LOCAL_WORKER": "8", "MS_NODE_RANK": "x"}, "MS_NODE_RANK must be a whole number, got 'x'"),
        ({"MS_LOCAL_WORKER": "0", "MS_NODE_RANK": "0"}, "MS_LOCAL_WORKER must be at least 1"),
    ],
)
def test_bad_environment_is_a_usage_error(env: dict[str, str], message: str, stub: Path) -> None:
    run = start(SHELLS[0], stub, env)
    _, err = run.communicate(timeout=30)
    assert run.returncode == 2
    assert message in err


def _can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="needs unshare of a PID namespace (root)")
def test_sigterm_reaches_every_copy_when_the_launcher_is_pid_1(stub: Path) -> None:
    """In a container the launcher is PID 1, which only receives signals it handles."""
    env = {
        "PATH": os.environ["PATH"], "STUB_DIR": str(stub.parent), "TMPDIR": str(stub.parent),
        "MS_LOCAL_WORKER": "2", "MS_NODE_RANK": "0", "STUB_0": "sleep", "STUB_1": "sleep",
    }
    run = subprocess.Popen(
        ["unshare", "--pid", "--fork", "--mount-proc", "sh", str(stub.parent / "launcher.sh"), str(stub)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    wait_for([stub.parent / f"ready.{r}" for r in range(2)])
    children = Path(f"/proc/{run.pid}/task/{run.pid}/children").read_text().split()
    assert len(children) == 1
    os.kill(int(children[0]), signal.SIGTERM)
    _, err = run.communicate(timeout=30)
    assert [(stub.parent / f"term.{r}").exists() for r in range(2)] == [True, True]
    assert run.returncode == 143, err
