"""A program run bounded in memory, output and time, with every process it starts.

The Argo CD sidecar runs kustomize on a repository's kustomizations, and kustomize runs
msgen's steps: what a build costs is the repository's choice. Without a bound, a JSON patch
of 40 `copy` operations made kustomize alone take all the memory there was, and a build could
outlast Argo CD's timeout with its processes left behind. So the program runs:

- in a session of its own (a process group): at its deadline, past its output bound, and when
  it ends, the whole group is killed, whatever the program started in it;
- with `RLIMIT_DATA` (the writable private memory of each process, which Go's heap and
  Python's both count; a limit every child inherits, which a child may only lower);
- with its standard output read with a bound, never more than `max_output` bytes kept, and its
  standard error kept up to MAX_STDERR.

The limits are the operating system's (setrlimit, killpg): nothing here depends on the
program being well behaved.
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping
from typing import NamedTuple

#: The most of a program's standard error kept (its messages; the rest is read and dropped).
MAX_STDERR = 1 << 20
#: How often the program is checked for having ended while its output is read.
POLL_SECONDS = 0.2


class Finished(NamedTuple):
    """A program that ended within its bounds: its exit status and what it wrote."""

    returncode: int
    stdout: str
    stderr: str


class Stopped(Exception):
    """The program passed a bound and was stopped with every process it started; the message
    says which bound (`bound`: "time" or "output"), and `stderr` holds what it had said."""

    def __init__(self, message: str, bound: str, stderr: str):
        super().__init__(message)
        self.bound = bound
        self.stderr = stderr


def run(
    argv: list[str],
    env: Mapping[str, str],
    *,
    memory: int,
    max_output: int,
    timeout: float,
    cwd: str | None = None,
) -> Finished:
    """Run `argv`: `memory` bytes of data per process, at most `max_output` bytes on stdout,
    `timeout` seconds for all of it. Raises Stopped past a bound, OSError when it cannot start."""

    def limit() -> None:  # in the child, before exec
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    child = subprocess.Popen(
        argv,
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=limit,
    )
    try:
        out, err = _read(child, max_output, time.monotonic() + timeout, timeout)
    finally:
        _kill_group(child.pid)
        child.wait()
        _wait_gone(child.pid)
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()
        child.stderr.close()
    return Finished(child.returncode, _text(out), _text(err))


def _read(child: subprocess.Popen[bytes], max_output: int, deadline: float, timeout: float) -> tuple[bytes, bytes]:
    """Read both streams to their end; raises Stopped at the deadline or past `max_output`."""
    assert child.stdout is not None and child.stderr is not None
    out, err = bytearray(), bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ, out)
        selector.register(child.stderr, selectors.EVENT_READ, err)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise Stopped(f"it took over {timeout:g} s", "time", _text(err))
            for key, _events in selector.select(min(left, POLL_SECONDS)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                kept: bytearray = key.data
                if kept is err:
                    kept += chunk[: max(0, MAX_STDERR - len(kept))]
                    continue
                kept += chunk
                if len(kept) > max_output:
                    raise Stopped(f"its output passed {max_output} bytes", "output", _text(err))
            if child.poll() is not None:
                # The program ended: whatever it left running would hold the streams open.
                _kill_group(child.pid)
    return bytes(out), bytes(err)


def _kill_group(pid: int) -> None:
    """SIGKILL every process of the session the program leads (none left: nothing to do)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


#: How long the killed group's processes are given to die (SIGKILL is delivered, not awaited).
GONE_SECONDS = 5.0


def _wait_gone(group: int) -> None:
    """Return once no process of `group` runs any more (a zombie, awaiting its parent, runs
    nothing), or after GONE_SECONDS: the build's directory is removed next, and nothing of it
    may still be writing there."""
    deadline = time.monotonic() + GONE_SECONDS
    while _alive(group) and time.monotonic() < deadline:
        _kill_group(group)
        time.sleep(0.01)


def _alive(group: int) -> bool:
    """Whether a process of `group` that is not a zombie is left (Linux's /proc)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                state, _parent, pgrp = stat.read().rsplit(b")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if int(pgrp) == group and state not in (b"Z", b"X"):
            return True
    return False


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")
