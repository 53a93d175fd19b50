"""Independent requests of one job sent together, a bounded number in flight.

A job's actions (deletions, suspensions), its end's Events and its end's records are each one
request on an object of its own: one after another, a loaded API server (0.3-1 s a write) held
a worker, and the cleanPodPolicy that follows an end, for seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

#: Requests of one job in flight at once (a bare-Pod job's TTL deletes up to 18 pods and
#: Services), beside the other jobs' reconciles (`msgen controller --workers`).
AT_MOST = 4


def send(calls: list[Callable[[], None]], name: str, at_most: int = AT_MOST) -> None:
    """Make `calls`, up to `at_most` at once (threads named `name`); once all have ended,
    raise the first failure. One call, or none, is made in the caller's thread."""
    if len(calls) < 2:
        for call in calls:
            call()
        return
    with ThreadPoolExecutor(max_workers=min(at_most, len(calls)), thread_name_prefix=name) as pool:
        sent = [pool.submit(call) for call in calls]
    failed = [f.exception() for f in sent if f.exception() is not None]
    if failed:
        raise failed[0]  # type: ignore[misc]
