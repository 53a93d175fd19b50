"""Several jobs reconciled at once, as controller-runtime's `MaxConcurrentReconciles`.

A reconcile spends most of its time waiting for the API server, one write after another
(a pod's DELETE, an Event, the status PATCH): on a real API server a job took 0.84 s while
the controller used a fortieth of a core. Jobs are independent (each writes only its own
objects), so a pass hands them to `count` threads and the waits overlap.

A key is never run by two workers at once: `run` refuses a key still running (the caller
gives it back to the queue). The controller's passes leave what they started running
(`collect` hands over those done), so that a pod's end queued meanwhile waits for a free
worker, not for the slowest of them; a pass that must end with its jobs (`--once`) waits
for them all (`finish`). What a job's reconcile
returns is handed to `then` in the thread that called `run` or `finish` (the loop's), so the
loop's own state (its `phases`) is only ever touched by one thread. With `count` 1 the work
runs in the caller's thread, as before there were workers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

T = TypeVar("T")


class Workers:
    """At most `count` reconciles running at once, never two of one key."""

    def __init__(self, count: int) -> None:
        if count < 1:
            raise ValueError(f"workers must be at least 1, not {count}")
        self.count = count
        self._pool = ThreadPoolExecutor(max_workers=count, thread_name_prefix="reconcile") if count > 1 else None
        self._running: dict[Future[Any], tuple[Hashable, Callable[[Any], None]]] = {}

    def free(self, keep: int = 0, timeout: float | None = None) -> bool:
        """Wait until more than `keep` workers are free (handing the finished ones' results to
        their `then`), at most `timeout` seconds (None: as long as it takes); whether they are."""
        room = max(1, self.count - keep)
        while len(self._running) >= room:
            if not self._settle(FIRST_COMPLETED, timeout) and timeout is not None:
                return False
        return True

    def run(self, key: Hashable, work: Callable[[], T], then: Callable[[T], None]) -> bool:
        """Start `work` for `key` on a free worker (waiting for one); False, and nothing
        started, when `key` is still running. `work` must catch its own errors: one
        job's failure is that job's alone."""
        if key in self.keys():
            return False
        if self._pool is None:
            then(work())
            return True
        self.free()
        self._running[self._pool.submit(work)] = (key, then)
        return True

    def keys(self) -> set[Hashable]:
        return {key for key, _ in self._running.values()}

    def active(self) -> int:
        return len(self._running)

    def finish(self) -> None:
        """Wait for every reconcile started, handing each result to its `then`."""
        while self._running:
            self._settle(ALL_COMPLETED)

    def collect(self) -> None:
        """Hand the reconciles that have ended to their `then`; wait for none."""
        for future in [f for f in self._running if f.done()]:
            _, then = self._running.pop(future)
            then(future.result())

    def close(self) -> None:
        self.finish()
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _settle(self, how: str, timeout: float | None = None) -> bool:
        """Hand what ended to its `then`; whether anything had (within `timeout`)."""
        done, _ = wait(list(self._running), timeout=timeout, return_when=how)
        for future in done:
            _, then = self._running.pop(future)
            then(future.result())
        return bool(done)
