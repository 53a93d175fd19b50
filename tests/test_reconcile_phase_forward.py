"""A job's phase only moves forward: once Running, it reads Running until its end.

The tenth controller round (bench/README.md) announced a phase twice on 55 bare-Pod jobs: a
worker that kwok had started was ended by the benchmark before the job's other pods had
started (kwok far behind), so for a moment none of the job's pods ran; the status computed
from the pods went back to Created, which was announced again (and Running after it, when
the next pod started), on whichever pod held the status then. The operators msgen stands in
for only ever add conditions (`updateStatusSingle`: Running once a replica runs, an end once
it is reached), so their jobs never read Created again; neither may msgen's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import controller, published, records, status
from msgen.reconcile.writes import Writes
from msgen.targets import NAMES as TARGETS

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
