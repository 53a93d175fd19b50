"""A job's phase is announced once, whichever replica announces it and whenever the one
before it stopped. The Event goes before the annotation that records it; a replica stopped
between the two (a leader killed, its API server out of reach) leaves its successor to
announce the phase again, and the successor's Events must be refused (409) as the same
ones, on the same objects. Here against the API server in process (tests/fake_api.py, which
keeps `metadata.generation` as Kubernetes does) with its simulated Job controller: a
replica's pass carries out the job's end (cleanPodPolicy suspends the Jobs still active, a
new generation for each, or deletes pods) and stops after its Events; a second replica, with
nothing of the first's memory, reconciles the job from what the server holds. And a replica
whose pass failed after its deletions tries again on copies that do not show them yet."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import controller, kube, published
from msgen.reconcile.writes import Writes

from .fake_api import Cluster
from .fake_api_client import job_objects, served, verdict_events
from .fake_kubelet import end, msjob, place, rendered, start

pytest.importorskip("lightkube")

NAMESPACE = "takeover"


class Killed(Exception):
    """The replica stops here: nothing after it is sent."""


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Any]]:
    with served(tmp_path, NAMESPACE) as both:
        yield both


def objects_of(cluster: Cluster, job: str) -> list[dict[str, Any]]:
    return job_objects(cluster, NAMESPACE, job)


def reconcile(cluster: Cluster, client: Any, job: str) -> None:
    """One pass of a replica that starts afresh (no memory of writes in flight)."""
    controller.reconcile_job(client, NAMESPACE, job, objects_of(cluster, job), lambda line: None, writes=Writes())


def verdicts(cluster: Cluster) -> Counter[tuple[str, str]]:
    return Counter((w.body["involvedObject"]["name"], w.body["reason"]) for w in verdict_events(cluster))


@pytest.mark.parametrize(("target", "clean", "ends"), [
    # Success by worker 0 (rendered for 1.30: no successPolicy on the Worker Job), the other
    # Worker running: cleanPodPolicy suspends both Jobs.
    ("indexed-job", "Running", {"j-worker-0": 0}),
    # The Worker Job completes, or fails: cleanPodPolicy suspends the Scheduler Job.
    ("indexed-job", "Running", {"j-worker-0": 0, "j-worker-1": 0}),
    ("indexed-job", "Running", {"j-worker-1": 1}),
    # Success by worker 0: the pods still running are deleted, worker 0's keeps the status.
    ("pod", "Running", {"j-worker-0": 0}),
])
def test_a_verdict_is_announced_once_across_a_replica_stopped_after_its_event(
        api: tuple[Cluster, Any], monkeypatch: pytest.MonkeyPatch, target: str, clean: str,
        ends: dict[str, int]) -> None:
    cluster, client = api
    pods = place(cluster, rendered(msjob("j", 2, clean=clean), NAMESPACE, target))
    for pod in pods:
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    reconcile(cluster, client, "j")  # Created, then Running, recorded
    for pod in pods:
        name = pod["metadata"]["name"]
        for prefix, code in ends.items():
            if name == prefix or name.startswith(prefix + "-"):
                end(cluster, NAMESPACE, name, code)

    patch = kube.merge_patch

    def killed_before_the_record(client: Any, obj: dict[str, Any], body: dict[str, Any]) -> Any:
        if published.ANNOTATION in ((body.get("metadata") or {}).get("annotations") or {}):
            raise Killed(obj["metadata"]["name"])
        return patch(client, obj, body)

    monkeypatch.setattr(kube, "merge_patch", killed_before_the_record)
    with pytest.raises(Killed):
        reconcile(cluster, client, "j")
    first = verdicts(cluster)
    assert first and max(first.values()) == 1, first
    monkeypatch.setattr(kube, "merge_patch", patch)

    reconcile(cluster, client, "j")  # the successor: the policy's actions are done, the end not recorded
    reconcile(cluster, client, "j")  # once recorded, nothing more is announced
    assert verdicts(cluster) == first, "the successor announced the verdict again"
    kept = [o for o in objects_of(cluster, "j") if published.ANNOTATION in (o["metadata"].get("annotations") or {})]
    phases = {json.loads(o["metadata"]["annotations"][published.ANNOTATION])["phase"] for o in kept}
    assert phases & {"Succeeded", "Failed"}, phases


def test_a_pass_that_failed_after_its_deletions_does_not_record_the_end_on_a_deleted_pod(
        api: tuple[Cluster, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker 1 fails while worker 0 and the Scheduler run: cleanPodPolicy deletes their
    pods (worker 0's held the status), and the second deletion fails (the API server out of
    reach). The replica tries again before its watches show the first deletion: it must not
    take the deleted pod for the status's holder (the Event and the record would go on it, the
    record with it, and the next pass would announce the end again, on worker 1's pod)."""
    cluster, client = api
    pods = place(cluster, rendered(msjob("j", 2), NAMESPACE, "pod"))
    for pod in pods:
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    writes = Writes()
    say: list[str] = []
    controller.reconcile_job(client, NAMESPACE, "j", objects_of(cluster, "j"), say.append, writes=writes)
    end(cluster, NAMESPACE, "j-worker-1", 1)
    before = objects_of(cluster, "j")  # the watches' copies, until they catch up
    delete = kube.delete
    deleted: list[str] = []

    def out_of_reach(client: Any, obj: dict[str, Any], **options: Any) -> None:
        if deleted:
            raise kube.KubeError("the server is currently unable to handle the request", 503)
        deleted.append(obj["metadata"]["name"])
        delete(client, obj, **options)

    monkeypatch.setattr(kube, "delete", out_of_reach)
    with pytest.raises(kube.KubeError):
        controller.reconcile_job(client, NAMESPACE, "j", before, say.append, writes=writes)
    assert len(deleted) == 1 and cluster.get("v1", "pods", NAMESPACE, deleted[0]) is None  # one deletion done
    monkeypatch.setattr(kube, "delete", delete)
    controller.reconcile_job(client, NAMESPACE, "j", before, say.append, writes=writes)  # behind
    controller.reconcile_job(client, NAMESPACE, "j", objects_of(cluster, "j"), say.append, writes=writes)
    assert verdicts(cluster) == Counter({("j-worker-1", "JobFailed"): 1}), say
    holder = cluster.get("v1", "pods", NAMESPACE, "j-worker-1") or {}
    assert json.loads(holder["metadata"]["annotations"][published.ANNOTATION])["phase"] == "Failed"
    assert {p["metadata"]["name"] for p in objects_of(cluster, "j") if p["kind"] == "Pod"} == {"j-worker-1"}
