"""Which of the tests marked `spread` a run takes, when CI runs the suite on several Pythons.

A test marked `spread` spends its time in a program that is not msgen: the real kustomize
(about a second of CPU per build, most of it its own OpenAPI document), Argo CD's plugin
commands around it, Helm, or Kubernetes' schemas validating msgen's output at every minor.
The msgen code those runs reach is the code every Python's in-process tests reach, and the
bytes it writes are held equal on every Python by the golden tests; yet these tests are most
of the suite's time, and CI runs the suite once per claimed Python.

So `.ci/run` gives each claimed Python a share (`MSGEN_TEST_SHARE=k/n`, k from 0, n the
number of claimed Pythons, the newest among them): the tests whose id hashes to k modulo n.
Together the Pythons run each of these tests once, and a test added or removed moves no other
test between shares. What can differ between Pythons is msgen's own code, which every other
test runs on every Python (the golden tests hold the bytes these hosts are given equal on each);
running a host program twice on the same bytes checks the same thing twice. Unset, as the
README's test command runs, every test runs.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import pytest

MARKER = "spread"
VARIABLE = "MSGEN_TEST_SHARE"


def parse(value: str) -> tuple[int, int]:
    """`k/n` as (k, n), with 0 <= k < n; anything else is a usage error naming the form."""
    share, slash, shares = value.partition("/")
    if slash and share.isdigit() and shares.isdigit() and int(share) < int(shares):
        return int(share), int(shares)
    raise pytest.UsageError(f"{VARIABLE}={value!r}: expected k/n with 0 <= k < n (such as 0/3), or unset")


def taken(test_id: str, share: int, shares: int) -> bool:
    """Whether share `share` of `shares` takes the test `test_id` (its node id)."""
    return zlib.crc32(test_id.encode("utf-8")) % shares == share


def split(items: Iterable[pytest.Item], share: int, shares: int) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """(kept, left to the other shares): tests not marked `spread` are always kept."""
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        if item.get_closest_marker(MARKER) is None or taken(item.nodeid, share, shares):
            kept.append(item)
        else:
            left.append(item)
    return kept, left
