"""Each phase of a job is announced once (one Event), through what made the tenth controller
round (bench/README.md) announce a phase twice on 55 bare-Pod jobs.

- A job's phase only moves forward: once Running, it reads Running until its end (48 of them).
  A worker that kwok had started was ended by the benchmark before the job's other pods had
  started (kwok far behind), so for a moment none of the job's pods ran; the status computed
  from the pods went back to Created, which was announced again (and Running after it, when
  the next pod started). The operators msgen stands in for only ever add conditions
  (`updateStatusSingle`: Running once a replica runs, an end once it is reached), so their
  jobs never read Created again; neither may msgen's.
- A bare-Pod job's status waits for its holder, Worker pod 0 (the other 7). The Event goes
  before the record; a replica stopped between the two (the API server away, the leader
  replaced) leaves its successor to announce the phase again, which the API server refuses
  as the same Event (409) only on the same pod. Announced on pod 1 while pod 0 was not seen
  yet, then on pod 0 by the successor, the phase was shown twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import controller, kube, published, records, status
from msgen.reconcile.writes import Writes
from msgen.targets import NAMES as TARGETS

from .controller_clock import later
from .fake_api import CUSTOM, SERVED, Cluster
from .fake_api_client import served
from .made_by_controllers import NAMESPACE, made, pod_status, pods_by_replica, rendered, workload_status

#: Many passes over an API server in process (tests/python_share.py).
pytestmark = pytest.mark.spread

pytest.importorskip("lightkube")


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Any]]:
    with served(tmp_path, NAMESPACE, Cluster({**SERVED, **CUSTOM})) as (cluster, client):
        yield cluster, client


def _watched(cluster: Cluster) -> list[dict[str, Any]]:
    objects = [records.essentials(o) for collection in cluster.served for o in cluster.listing(collection, NAMESPACE, "")[0]
               if controller.job_key(o) == (NAMESPACE, "j")]
    return controller.group(objects).get((NAMESPACE, "j")) or []


def _set(cluster: Cluster, pod: dict[str, Any], how: str) -> None:
    live = cluster.get("v1", "pods", NAMESPACE, pod["metadata"]["name"])
    assert live is not None
    pod_status(live, how)
    cluster.put(live)


@pytest.mark.parametrize("target", TARGETS)
def test_a_job_whose_running_pods_all_ended_before_the_rest_started_still_reads_running(
        api: tuple[Cluster, Any], target: str) -> None:
    """Pending everywhere, then worker 2 runs and succeeds (not an end: the others have not),
    while the Scheduler and the other workers still wait for a node; then they run. Each
    phase is announced once: Created, Running."""
    cluster, client = api
    objects = rendered(target, clean="None")
    children = made(target, objects)
    pods = pods_by_replica([*objects, *children])
    for pod in pods.values():
        pod_status(pod, "pending")
    for obj in [*objects, *children]:
        workload_status(obj, None)
        cluster.put(obj)
    said: list[str] = []
    writes = Writes()

    def phase() -> str:
        found, _ = controller.reconcile_job(client, NAMESPACE, "j", _watched(cluster), said.append, writes=writes)
        return found.phase

    assert phase() == "Created", said
    early = pods[("worker", 2)]
    _set(cluster, early, "running")
    assert phase() == "Running", said
    _set(cluster, early, "succeeded")
    assert phase() == "Running", said
    for pod in pods.values():
        if pod is not early:
            _set(cluster, pod, "running")
    assert phase() == "Running", said
    assert [line.rsplit(": ", 1)[1] for line in said if line.startswith(f"{NAMESPACE}/j: ")] == ["Created", "Running"]


def test_the_running_condition_and_its_time_stay_with_the_phase() -> None:
    """What is published while no pod runs: Running, with the time the job first ran (the
    one published), beside the Created condition computed now."""
    before = {"phase": "Running", "conditions": [
        {"type": "Created", "reason": "JobCreated", "lastTransitionTime": "2026-01-01T10:00:00Z"},
        {"type": "Running", "reason": "JobRunning", "message": "", "lastTransitionTime": "2026-01-01T10:00:05Z"}]}
    computed = status.JobStatus(job="j", phase="Created",
                                conditions=[status.Condition("Created", "JobCreated", "", "2026-01-01T10:00:00Z")])
    shown = published.merged(before, computed, "2026-01-01T10:09:00Z")
    assert shown["phase"] == "Running"
    assert [(c["type"], c["lastTransitionTime"]) for c in shown["conditions"]] == [
        ("Created", "2026-01-01T10:00:00Z"), ("Running", "2026-01-01T10:00:05Z")]
    assert not published.announce(before, shown)
    # Nothing published before, or Created only: the pods decide, as before.
    assert published.merged(None, computed, "2026-01-01T10:09:00Z")["phase"] == "Created"
    assert published.merged({"phase": "Created"}, computed, "2026-01-01T10:09:00Z")["phase"] == "Created"


# --- the holder of a bare-Pod job's status ------------------------------------------------------


def _created(cluster: Cluster, reason: str = "JobCreated") -> list[str]:
    """The pods the cluster holds a `reason` Event on."""
    return sorted(e["involvedObject"]["name"] for e in cluster.listing(("v1", "events"), NAMESPACE, "")[0]
                  if e["reason"] == reason)


def _records_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record (the `msgen/status` annotation) goes unanswered: the API server went away
    after the Event."""
    def refused(client: Any, obj: dict[str, Any], patch: dict[str, Any]) -> None:
        raise kube.KubeError(f"patching {obj['metadata']['name']}: no answer: Connection reset by peer (ConnectError)")

    monkeypatch.setattr(kube, "merge_patch", refused)


def _pending_pods(cluster: Cluster, but: str | None) -> dict[tuple[str, int], dict[str, Any]]:
    """A bare-Pod job's objects, its pods Pending, on the cluster but for the pod `but`."""
    objects = rendered("pod", clean="None")
    for obj in objects:
        if obj["kind"] == "Pod":
            pod_status(obj, "pending")
        if obj["metadata"]["name"] != but:
            cluster.put(obj)
    return pods_by_replica(objects)


def test_a_phase_whose_record_failed_is_announced_again_on_the_same_pod_only(
        api: tuple[Cluster, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker pod 0 not seen yet: nothing is announced (the others would carry it); once it
    is, Created goes on it, and a successor that announces it again after the record failed
    is refused as the same Event."""
    cluster, client = api
    pods = _pending_pods(cluster, but="j-worker-0")
    said: list[str] = []
    found, again = controller.reconcile_job(client, NAMESPACE, "j", _watched(cluster), said.append, writes=Writes())
    assert found.phase == "Created" and said == [] and _created(cluster) == []
    assert again is not None and 0 < again <= published.HOLDER_GRACE + 1, "looked at again once the wait is over"
    cluster.put(pods[("worker", 0)])
    with monkeypatch.context() as patched:
        _records_fail(patched)
        with pytest.raises(kube.KubeError):
            controller.reconcile_job(client, NAMESPACE, "j", _watched(cluster), said.append, writes=Writes())
    assert _created(cluster) == ["j-worker-0"]
    controller.reconcile_job(client, NAMESPACE, "j", _watched(cluster), said.append, writes=Writes())
    assert said == ["ns/j: Created", "ns/j: Created"], "announced by each replica, shown once"
    assert _created(cluster) == ["j-worker-0"]


def test_a_holder_that_never_comes_is_waited_for_a_minute_at_most(
        api: tuple[Cluster, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker pod 0 refused (a quota): after HOLDER_GRACE the status goes on the pod that ranks
    next, as before."""
    cluster, client = api
    _pending_pods(cluster, but="j-worker-0")
    said: list[str] = []
    controller.reconcile_job(client, NAMESPACE, "j", _watched(cluster), said.append, writes=Writes())
    assert said == []

    later(monkeypatch, published.HOLDER_GRACE + 1)
    found, again = controller.reconcile_job(client, NAMESPACE, "j", _watched(cluster), said.append, writes=Writes())
    assert said == ["ns/j: Created"] and _created(cluster) == ["j-worker-1"] and again is None
