"""The MindSpore releases msgen knows, and what each reads (msgen.model.mindspore_versions)."""

from __future__ import annotations

import pytest

from msgen.model import mindspore_versions as ms


@pytest.mark.parametrize(
    "text,release",
    [("2.7", (2, 7, 0)), ("2.7.2", (2, 7, 2)), ("2.7.1.post1", (2, 7, 1)), ("v2.10.0", (2, 10, 0)), (" 2.9 ", (2, 9, 0))],
)
def test_parse(text: str, release: tuple[int, int, int]) -> None:
    assert ms.parse(text) == release


@pytest.mark.parametrize("text", ["2.6", "2.6.9", "2.11", "3.0", "1.10.1", "2", "latest", "2.7.x", ""])
def test_parse_refuses_what_it_does_not_know_saying_what_is_accepted(text: str) -> None:
    with pytest.raises(ValueError, match=r"accepted: MAJOR\.MINOR\[\.PATCH\] from 2\.7 to 2\.10"):
        ms.parse(text)


def test_the_facts_per_release_as_read_from_each_wheel() -> None:
    # contracts §2, "MindSpore releases 2.7 to 2.10": each row read from that release's wheel
    table = {fact: [ms.has(fact, r) for r in ms.KNOWN] for fact in ms.FACTS}
    assert ms.KNOWN == ((2, 7, 0), (2, 7, 1), (2, 7, 2), (2, 8, 0), (2, 9, 0), (2, 10, 0))
    assert table == {
        "RecoveryPath": [True, False, False, False, False, False],
        "HeartbeatRetryTimeout": [False, False, False, True, True, True],
        "ParameterServerTraining": [True, False, False, False, False, False],
    }
    assert ms.releases_with("RecoveryPath") == "2.7.0"
    assert ms.releases_with("HeartbeatRetryTimeout") == "2.8.0 and newer"


def test_the_defaults_keep_the_heartbeat_retry_below_the_node_timeout() -> None:
    assert ms.DEFAULT_HEARTBEAT_RETRY_TIMEOUT < ms.DEFAULT_NODE_TIMEOUT
