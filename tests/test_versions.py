"""The version gates table and version parsing."""

from __future__ import annotations

import pytest

from msgen.model import versions


def test_gates_follow_contracts_table() -> None:
    # contracts §8: feature, alpha, beta (on by default), GA
    assert versions.GATES["JobPodFailurePolicy"] == ((1, 25), (1, 26), (1, 31))
    assert versions.GATES["JobSuccessPolicy"] == ((1, 30), (1, 31), (1, 33))
    assert versions.GATES["JobBackoffLimitPerIndex"] == ((1, 28), (1, 29), (1, 33))
    assert versions.GATES["JobPodReplacementPolicy"] == ((1, 28), (1, 29), (1, 34))
    assert versions.GATES["JobManagedBy"] == ((1, 30), (1, 32), (1, 35))
    assert versions.GATES["PodIndexLabel"] == (None, (1, 28), (1, 32))


@pytest.mark.parametrize(
    "feature,version,on",
    [
        ("JobPodFailurePolicy", (1, 25), False),  # alpha: off by default
        ("JobPodFailurePolicy", (1, 26), True),
        ("JobSuccessPolicy", (1, 30), False),
        ("JobSuccessPolicy", (1, 31), True),
        ("IndexedJob", (1, 25), True),
    ],
)
def test_enabled_from_beta(feature: str, version: tuple[int, int], on: bool) -> None:
    assert versions.enabled(feature, version) is on


@pytest.mark.parametrize("text,parsed", [("1.29", (1, 29)), ("v1.31.2", (1, 31)), ("1.30+", (1, 30)), (" 1.37 ", (1, 37))])
def test_parse(text: str, parsed: tuple[int, int]) -> None:
    assert versions.parse(text) == parsed
