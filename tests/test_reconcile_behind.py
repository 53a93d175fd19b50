"""The controller's copies behind the cluster, as a real API server under load showed them.

- A copy may come back at a newer version that does not hold this replica's write yet: a
  kubelet's status update made just before the write. Taken as caught up, it made the
  controller announce `JobCreated` twice, on two pods. A write is remembered until the copy
  shows it.
- A bare-Pod job's TTL deleted worker 0 (which held the job's end) and its Services while its
  other pods, deleted at the end by cleanPodPolicy, were still terminating (their phase still
  Running, until the kubelet ends them). With worker 0's deletion seen and the Services' not
  yet, the job looked Running, and `JobRunning` was announced again, on a Service already
  deleted. Worker 0 now goes last, once the rest is gone (tests/test_reconcile_end_stays.py).
Against the API server in process (tests/fake_api.py), the copies made behind by hand."""

from __future__ import annotations

import copy
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import controller, published
from msgen.reconcile.writes import Writes

from .controller_clock import later
from .fake_api import Cluster
from .fake_api_client import job_objects, served
from .fake_kubelet import end, msjob, place, rendered, stamp, start

NAMESPACE = "behind"


def pod(name: str, version: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "spec": {},
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": version, **metadata}}


def test_a_write_is_remembered_until_the_copy_shows_it_not_only_until_another_version() -> None:
    writes = Writes()
    writes.wrote("delete", pod("p", "5"))
    assert writes.pending("delete", pod("p", "6")) == ""  # a kubelet's update, not the deletion
    assert writes.pending("delete", pod("p", "7", deletionTimestamp="2026-01-01T00:00:00Z")) is None
    assert len(writes) == 0
    writes.wrote("status", pod("p", "5"), '{"phase":"Created"}')
    assert writes.pending("status", pod("p", "6")) == '{"phase":"Created"}'
    assert writes.pending("status", pod("p", "8", annotations={published.ANNOTATION: '{"phase":"Created"}'})) is None
    job: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns", "resourceVersion": "3"},
           "spec": {"suspend": False}}
    writes.wrote("suspend", job)
    assert writes.pending("suspend", {**job, "metadata": {**job["metadata"], "resourceVersion": "4"}}) == ""
    assert writes.pending("suspend", {**job, "spec": {"suspend": True}}) is None
    writes.wrote("complete", job)  # a verb whose effect is not read: the version says
    assert writes.pending("complete", job) == ""
    assert writes.pending("complete", {**job, "metadata": {**job["metadata"], "resourceVersion": "4"}}) is None


pytest.importorskip("lightkube")


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Any]]:
    with served(tmp_path, NAMESPACE) as both:
        yield both


def announcements(cluster: Cluster) -> Counter[str]:
    return Counter(w.body["reason"] for w in cluster.writes
                   if w.kind == "Event" and w.method == "POST" and w.result is not None)


def test_a_phase_is_announced_once_when_the_copy_comes_back_newer_without_the_record(
        api: tuple[Cluster, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The job's first pass sees its Scheduler's pod alone (the Workers' refused for over a
    minute: `published.HOLDER_GRACE`) and announces Created on it; the copy then comes back
    with the kubelet's update made before the record was written. The next pass, worker 0's
    pod there, must not announce again."""
    cluster, client = api
    later(monkeypatch, published.HOLDER_GRACE + 1)
    objects = rendered(msjob("j", 2), NAMESPACE, "pod")
    place(cluster, [o for o in objects if "worker" not in o["metadata"]["name"]])
    first = job_objects(cluster, NAMESPACE, "j")
    writes = Writes()
    said: list[str] = []
    controller.reconcile_job(client, NAMESPACE, "j", first, said.append, writes=writes)
    assert announcements(cluster) == Counter({"JobCreated": 1}), said
    # The copy the watch brings: the pod as the kubelet's status update left it, before the record.
    scheduler = next(o for o in first if o["kind"] == "Pod")
    newer = copy.deepcopy(scheduler)
    newer["metadata"]["resourceVersion"] = str(int(scheduler["metadata"]["resourceVersion"]) + 1)
    newer["status"] = {"phase": "Pending"}
    place(cluster, [o for o in objects if "worker" in o["metadata"]["name"]])
    copies = [newer if o["metadata"]["name"] == scheduler["metadata"]["name"] and o["kind"] == "Pod" else o
              for o in job_objects(cluster, NAMESPACE, "j")]
    controller.reconcile_job(client, NAMESPACE, "j", copies, said.append, writes=writes)
    assert announcements(cluster) == Counter({"JobCreated": 1}), said


def test_a_job_whose_end_went_with_its_ttl_is_not_announced_running_on_what_the_watches_still_show(
        api: tuple[Cluster, Any]) -> None:
    cluster, client = api
    pods = place(cluster, rendered(msjob("j", 2, ttl=30), NAMESPACE, "pod"))
    for each in pods:
        start(cluster, NAMESPACE, each["metadata"]["name"])
    end(cluster, NAMESPACE, "j-worker-0", 0)
    writes = Writes()
    said: list[str] = []
    ended = job_objects(cluster, NAMESPACE, "j")
    controller.reconcile_job(client, NAMESPACE, "j", ended, said.append, writes=writes)  # Succeeded; clean
    # The pods cleanPodPolicy deleted are still terminating (the kubelet has not ended them).
    terminating = [{**o, "metadata": {**o["metadata"], "deletionTimestamp": stamp()}} for o in ended
                   if o["kind"] == "Pod" and o["metadata"]["name"] != "j-worker-0"]
    # The job's end passed its TTL: worker 0 and the Services are deleted.
    statuses = next(o for o in ended if o["metadata"]["name"] == "j-worker-0")["status"]["containerStatuses"]
    statuses[0]["state"]["terminated"]["finishedAt"] = stamp(time.time() - 60)
    cluster.patch("v1", "pods", NAMESPACE, "j-worker-0", {"status": {"containerStatuses": statuses}})
    worker0 = cluster.get("v1", "pods", NAMESPACE, "j-worker-0")
    assert worker0 is not None
    services = [o for o in ended if o["kind"] == "Service"]
    controller.reconcile_job(client, NAMESPACE, "j", [worker0, *services, *terminating], said.append, writes=writes)
    assert cluster.get("v1", "pods", NAMESPACE, "j-worker-0") is not None and not [
        o for o in job_objects(cluster, NAMESPACE, "j") if o["kind"] == "Service"], said
    before = announcements(cluster)
    # The watches do not bring the Services' deletion yet, and the pods still terminate:
    # worker 0, which keeps the job's end, stays; nothing is announced.
    found, _ = controller.reconcile_job(client, NAMESPACE, "j", [worker0, *services, *terminating], said.append,
                                        writes=writes)
    assert found.phase == "Succeeded" and cluster.get("v1", "pods", NAMESPACE, "j-worker-0") is not None
    # Worker 0 alone is left: it goes.
    found, _ = controller.reconcile_job(client, NAMESPACE, "j", [worker0], said.append, writes=writes)
    assert found.phase == "Succeeded" and cluster.get("v1", "pods", NAMESPACE, "j-worker-0") is None
    assert announcements(cluster) == before == Counter({"JobSucceeded": 1}), said
