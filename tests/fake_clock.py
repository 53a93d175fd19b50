"""A clock a test sets by hand, for the reconciler's queue and metrics (`clock=` arguments):
the times a test asserts are the ones it wrote, never the machine's."""

from __future__ import annotations


class Clock:
    """Monotonic seconds, starting at 100; a test moves `now` itself."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now
