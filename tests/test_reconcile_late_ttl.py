"""A job's end is announced even when the pass that first sees it is also the one its TTL
is due in. A bare-Pod job whose pods ended while the controller (or its API server) was
away, for longer than its `ttlSecondsAfterFinished`, has every pod and Service deleted by the
first passes that see the end (the pod that keeps the end last, once the rest is gone); the
`JobSucceeded`/`JobFailed` Event must still be sent, once, and a pass repeated on copies that
do not show the deletions yet must not send it again.
Against the API server in process (tests/fake_api.py)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import controller, published
from msgen.reconcile.writes import Writes

from .fake_api import Cluster
from .fake_api_client import job_objects, served, verdict_events
from .fake_kubelet import end, msjob, place, rendered, stamp, start

pytest.importorskip("lightkube")

NAMESPACE = "late"
TTL = 30


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Any]]:
    with served(tmp_path, NAMESPACE) as both:
        yield both


def objects_of(cluster: Cluster, job: str) -> list[dict[str, Any]]:
    return job_objects(cluster, NAMESPACE, job)


def verdicts(cluster: Cluster) -> Counter[str]:
    return Counter(w.body["reason"] for w in verdict_events(cluster))


def ended_long_ago(cluster: Cluster, name: str, exit_code: int, seconds: float) -> None:
    """The pod's container exited `seconds` ago (while no controller was there to see it)."""
    pod = end(cluster, NAMESPACE, name, exit_code)
    assert pod is not None, name
    statuses = pod["status"]["containerStatuses"]
    statuses[0]["state"]["terminated"]["finishedAt"] = stamp(time.time() - seconds)
    statuses[0]["state"]["terminated"]["startedAt"] = stamp(time.time() - 2 * seconds)
    cluster.patch("v1", "pods", NAMESPACE, name, {"status": {"containerStatuses": statuses}})


@pytest.mark.parametrize("clean", ["Running", "All"])
@pytest.mark.parametrize(("ends", "verdict"), [
    ({"j-worker-0": 0, "j-worker-1": 0}, "JobSucceeded"),
    ({"j-worker-1": 1}, "JobFailed"),
])
def test_a_bare_pod_job_whose_ttl_passed_before_it_was_seen_is_announced_once(
        api: tuple[Cluster, Any], clean: str, ends: dict[str, int], verdict: str) -> None:
    cluster, client = api
    pods = place(cluster, rendered(msjob("j", 2, clean=clean, ttl=TTL), NAMESPACE, "pod"))
    for pod in pods:
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    for name, code in ends.items():
        ended_long_ago(cluster, name, code, 2 * TTL)
    said: list[str] = []
    writes = Writes()
    seen = objects_of(cluster, "j")  # the first time the controller sees the job
    assert {o["kind"] for o in seen} == {"Pod", "Service"}, seen

    found, _ = controller.reconcile_job(client, NAMESPACE, "j", seen, said.append, writes=writes)
    assert found.finished
    assert verdicts(cluster) == Counter({verdict: 1}), said
    left = objects_of(cluster, "j")
    assert len(left) == 1 and published.ANNOTATION in left[0]["metadata"]["annotations"], \
        "the TTL deletes every pod and Service of the job, but the pod that keeps its end"

    controller.reconcile_job(client, NAMESPACE, "j", seen, said.append, writes=writes)  # watches behind
    controller.reconcile_job(client, NAMESPACE, "j", left, said.append, writes=writes)  # the rest is gone
    assert objects_of(cluster, "j") == [], "then the pod that kept the end goes too"
    assert verdicts(cluster) == Counter({verdict: 1}), said
    announced = [line for line in said if line.endswith((": Succeeded", ": Failed"))]
    assert len(announced) == 1, said


def test_an_indexed_job_whose_ttl_passed_before_it_was_seen_is_announced_once(api: tuple[Cluster, Any]) -> None:
    """Its Jobs still active are suspended by the pass that first sees the end, which
    publishes it on them; the next pass deletes them (their TTL passed) and announces nothing
    more: the record moves to a Service of the job, as it was (the phase announced on the Jobs
    being deleted is the one published, not a new one to announce on the Service)."""
    cluster, client = api
    pods = place(cluster, rendered(msjob("j", 2, ttl=TTL), NAMESPACE, "indexed-job"))
    for pod in pods:
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    worker0 = next(p["metadata"]["name"] for p in pods if p["metadata"]["name"].startswith("j-worker-0"))
    ended_long_ago(cluster, worker0, 0, 2 * TTL)
    said: list[str] = []
    writes = Writes()
    for _ in range(3):  # until the Jobs are gone (a job with no workload left is not reconciled)
        if any(o["kind"] == "Job" for o in objects_of(cluster, "j")):
            controller.reconcile_job(client, NAMESPACE, "j", objects_of(cluster, "j"), said.append, writes=writes)
    events = Counter((w.body["involvedObject"]["name"], w.body["reason"]) for w in verdict_events(cluster))
    assert events and set(events.values()) == {1} and {r for _, r in events} == {"JobSucceeded"}, said
    assert {name for name, _ in events} == {"j-scheduler", "j-worker"}, events  # the Jobs', no Service's
    left = objects_of(cluster, "j")
    assert left and {o["kind"] for o in left} == {"Service"}, left
    assert [json.loads(o["metadata"]["annotations"][published.ANNOTATION])["phase"] for o in left
            if published.ANNOTATION in o["metadata"].get("annotations", {})] == ["Succeeded"], left
    assert len([line for line in said if line.endswith(": Succeeded")]) == 1, said


def test_the_pass_that_suspends_an_indexed_jobs_jobs_comes_back_when_their_ttl_falls_due(
        api: tuple[Cluster, Any]) -> None:
    """The TTL of a Job cleanPodPolicy suspended counts from the time the suspension wrote on
    it. The pass that suspends it asks to be called back then, from what it wrote: waiting
    for its watch to show the suspension made the TTL wait for that change's reconcile, behind
    every progress update queued before it (90 s late at a thousand jobs)."""
    cluster, client = api
    pods = place(cluster, rendered(msjob("j", 2, ttl=TTL), NAMESPACE, "indexed-job"))
    for pod in pods:
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    worker0 = next(p["metadata"]["name"] for p in pods if p["metadata"]["name"].startswith("j-worker-0"))
    ended_long_ago(cluster, worker0, 0, 1)
    said: list[str] = []
    found, again = controller.reconcile_job(client, NAMESPACE, "j", objects_of(cluster, "j"), said.append,
                                            writes=Writes())
    assert found.phase == "Succeeded" and sum("suspend Job" in line for line in said) == 2, said
    assert again is not None and TTL - 3 <= again <= TTL, again
