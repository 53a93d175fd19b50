"""`tests/live/cluster up` after a stop without `down`: the components' `down` runs first.

Nothing here starts a process: the node and the components are recorded stand-ins.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from .test_live_harness import harness

cli, components, core, node = harness("cli"), harness("components"), harness("core"), harness("node")


@pytest.fixture()
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []

    def record(call: str) -> dict[str, str]:
        made.append(call)
        return {}

    def component(name: str) -> Any:
        return SimpleNamespace(NAME=name, build=lambda h: record(f"build {name}"), up=lambda h: record(f"up {name}"),
                               down=lambda h: record(f"down {name}"))

    monkeypatch.setattr(components, "load", component)
    monkeypatch.setattr(node, "build", lambda h: record("build node"))
    monkeypatch.setattr(node, "up", lambda h, count, resources: record("up node"))
    return made


def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api_server_runs: bool) -> Any:
    h = core.Harness(home=tmp_path / "home", node_ip="192.0.2.7")
    monkeypatch.setattr(h, "alive", lambda name: api_server_runs and name == "kube-apiserver")
    for name in ("jobset", "kueue"):
        components.remember(h, name)
    return h


def test_after_a_stop_without_down_every_remembered_component_is_taken_down_before_any_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    h = home(tmp_path, monkeypatch, api_server_runs=False)
    assert cli._up(h, ["jobset", "kueue"]) == 0
    assert calls == ["build node", "up node", "down kueue", "down jobset",
                     "build jobset", "build kueue", "up jobset", "up kueue"]


def test_a_running_cluster_keeps_its_components(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                calls: list[str]) -> None:
    h = home(tmp_path, monkeypatch, api_server_runs=True)
    assert cli._up(h, ["jobset", "kueue"]) == 0
    assert not [call for call in calls if call.startswith("down")]


def test_an_up_that_fails_after_the_api_server_is_back_leaves_the_stop_to_the_next_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    h = home(tmp_path, monkeypatch, api_server_runs=False)

    def fails(h: Any, count: Any, resources: Any) -> dict[str, str]:
        raise core.HarnessError("no space left on device")

    monkeypatch.setattr(node, "up", fails)
    with pytest.raises(core.HarnessError):
        cli._up(h, ["jobset", "kueue"])
    monkeypatch.setattr(h, "alive", lambda name: name == "kube-apiserver")  # the failed up started it

    def comes_up(h: Any, count: Any, resources: Any) -> dict[str, str]:
        calls.append("up node")
        return {}

    monkeypatch.setattr(node, "up", comes_up)
    assert cli._up(h, ["jobset", "kueue"]) == 0
    assert calls == ["build node", "build node", "up node", "down kueue", "down jobset",
                     "build jobset", "build kueue", "up jobset", "up kueue"]
    calls.clear()
    assert cli._up(h, ["jobset", "kueue"]) == 0  # finished once: a later up keeps its components
    assert not [call for call in calls if call.startswith("down")]
