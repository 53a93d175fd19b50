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
    assert versions.GATES["GenericWorkload"] == ((1, 35), (1, 37), None)


def test_a_beta_that_is_off_by_default_is_not_enabled_but_served() -> None:
    # Kubernetes v1.37.2: GenericWorkload {1.35 Alpha false, 1.37 Beta false}
    assert "GenericWorkload" in versions.OFF_BY_DEFAULT
    assert not versions.enabled("GenericWorkload", (1, 37))
    assert versions.served("GenericWorkload", (1, 37)) and not versions.served("GenericWorkload", (1, 36))
    assert versions.since("GenericWorkload") == "1.37"


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
