"""A job's independent requests go out together, never more than `at_once.AT_MOST` in flight."""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from msgen.reconcile import at_once


def test_requests_go_out_together() -> None:
    together = threading.Barrier(at_once.AT_MOST, timeout=30)  # passes only with AT_MOST in flight
    made: list[int] = []

    def call(n: int) -> None:
        together.wait()
        made.append(n)

    at_once.send([functools.partial(call, n) for n in range(2 * at_once.AT_MOST)], "test")
    assert sorted(made) == list(range(2 * at_once.AT_MOST))


@pytest.mark.parametrize("calls", [2, at_once.AT_MOST, 18])
def test_no_more_than_the_bound_are_in_flight(calls: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """However many objects a job has (a bare-Pod job's TTL deletes up to 18), as many threads
    as the bound at the most."""
    pools: list[int] = []
    real = ThreadPoolExecutor

    def pool(max_workers: int, thread_name_prefix: str) -> ThreadPoolExecutor:
        pools.append(max_workers)
        return real(max_workers=max_workers, thread_name_prefix=thread_name_prefix)

    monkeypatch.setattr(at_once, "ThreadPoolExecutor", pool)
    at_once.send([lambda: None] * calls, "test")
    assert pools == [min(calls, at_once.AT_MOST)]


def test_every_call_is_made_before_the_first_failure_is_raised() -> None:
    made: list[int] = []

    def call(n: int) -> None:
        made.append(n)
        if n in (1, 3):
            raise RuntimeError(f"request {n} failed")

    with pytest.raises(RuntimeError, match="request 1 failed"):
        at_once.send([functools.partial(call, n) for n in range(6)], "test")
    assert sorted(made) == list(range(6))


def test_a_single_call_is_made_in_the_callers_thread() -> None:
    threads: list[threading.Thread] = []
    at_once.send([lambda: threads.append(threading.current_thread())], "test")
    assert threads == [threading.current_thread()]
