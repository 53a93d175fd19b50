"""A job's policy actions are sent together, not one request after another.

A bare-Pod job's cleanPodPolicy deletes a pod per running Worker and its TTL every pod and
Service of the job, one request each: on a busy API server (a write taking 0.3-1 s) one job's
deletions held a worker for seconds, and a pod's end queued meanwhile waited for a free one.
Overlap is shown by a barrier that opens only when the deletions wait at once (it breaks,
after a timeout, when they run one after another); no test here measures time."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("lightkube")

from msgen.reconcile import controller, kube  # noqa: E402
from msgen.reconcile.writes import Writes  # noqa: E402

from .fake_api import Cluster  # noqa: E402
from .fake_api_client import job_objects, served  # noqa: E402
from .fake_kubelet import end, msjob, place, rendered, start  # noqa: E402

#: Seconds a barrier waits for the others before it breaks (only when the test fails).
PATIENCE = 10.0
NAMESPACE = "together"


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Any]]:
    with served(tmp_path, NAMESPACE) as both:
        yield both


def _ended(cluster: Cluster, workers: int, ttl: int | None = None) -> None:
    for pod in place(cluster, rendered(msjob("j", workers, ttl=ttl), NAMESPACE, "pod")):
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    end(cluster, NAMESPACE, "j-worker-0", 0)


def test_a_jobs_deletions_are_in_flight_together(api: tuple[Cluster, Any],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """cleanPodPolicy Running of a bare-Pod job of 4 Workers: the Scheduler's and three
    Workers' pods, four DELETEs waiting at once; the verdict Event still goes first."""
    cluster, client = api
    _ended(cluster, 4)
    barrier = threading.Barrier(4, timeout=PATIENCE)
    original = kube.delete

    def delete(client: Any, obj: dict[str, Any], **kwargs: Any) -> None:
        barrier.wait()  # returns once four deletions wait at once
        original(client, obj, **kwargs)

    monkeypatch.setattr(kube, "delete", delete)
    first = len(cluster.writes)
    writes = Writes()
    objects = copy.deepcopy(job_objects(cluster, NAMESPACE, "j"))  # as the pass read them
    controller.reconcile_job(client, NAMESPACE, "j", objects, lambda line: None, writes=writes)
    done = [(w.method, w.kind, w.name) for w in cluster.writes[first:] if w.result is not None]
    deleted = sorted(name for method, kind, name in done if (method, kind) == ("DELETE", "Pod"))
    assert deleted == ["j-scheduler-0", "j-worker-1", "j-worker-2", "j-worker-3"], done
    assert [m for m, _, _ in done].index("POST") < [m for m, _, _ in done].index("DELETE"), done
    by_name = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Pod"}  # each deletion remembered
    assert [name for name in deleted if writes.pending("delete", by_name[name]) is None] == []


def test_one_failed_deletion_fails_the_reconcile_after_the_others_are_done(
        api: tuple[Cluster, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The others are sent and remembered (a retry does not send them again); the failure
    reaches the caller, which queues the job again with backoff."""
    cluster, client = api
    _ended(cluster, 4)
    original = kube.delete

    def delete(client: Any, obj: dict[str, Any], **kwargs: Any) -> None:
        if obj["metadata"]["name"] == "j-scheduler-0":
            raise kube.KubeError("deleting Pod j-scheduler-0: the server is restarting", 503)
        original(client, obj, **kwargs)

    monkeypatch.setattr(kube, "delete", delete)
    first = len(cluster.writes)
    writes = Writes()
    objects = copy.deepcopy(job_objects(cluster, NAMESPACE, "j"))
    with pytest.raises(kube.KubeError, match="j-scheduler-0"):
        controller.reconcile_job(client, NAMESPACE, "j", objects, lambda line: None, writes=writes)
    deleted = sorted(w.name for w in cluster.writes[first:] if w.method == "DELETE" and w.result is not None)
    assert deleted == ["j-worker-1", "j-worker-2", "j-worker-3"]
    by_name = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Pod"}
    assert [n for n in deleted if writes.pending("delete", by_name[n]) is None] == []
    assert writes.pending("delete", by_name["j-scheduler-0"]) is None


def test_no_action_is_sent_once_leadership_is_lost(api: tuple[Cluster, Any]) -> None:
    cluster, client = api
    _ended(cluster, 4)
    asked = iter([True])  # the end published; then no longer leading
    first = len(cluster.writes)
    controller.reconcile_job(client, NAMESPACE, "j", job_objects(cluster, NAMESPACE, "j"), lambda line: None,
                             writes=Writes(), leading=lambda: next(asked, False))
    assert [w for w in cluster.writes[first:] if w.method == "DELETE"] == []


def test_a_volcano_jobs_complete_command_goes_before_the_deletions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Volcano's CompleteJob command first, alone; the pod deletions after it, together (a
    barrier of two: both wait at once)."""
    from msgen.reconcile import actions, job_pass, watch

    barrier = threading.Barrier(2, timeout=PATIENCE)
    order: list[str] = []

    def carry_out(client: Any, namespace: str, due: list[actions.Action], *args: Any) -> None:
        for action in due:
            order.append(f"{action.verb} {action.name}")
            if action.verb == "delete":
                barrier.wait()

    monkeypatch.setattr(watch, "carry_out", carry_out)
    due = [actions.Action("delete", "v1", "Pod", "j-worker-1", "cleanPodPolicy All"),
           actions.Action("delete", "v1", "Pod", "j-worker-2", "cleanPodPolicy All"),
           actions.Action("complete", "batch.volcano.sh/v1alpha1", "Job", "j", "worker success ends the job")]
    job_pass.together(None, "ns", due, [], lambda line: None, lambda action, ok: None,  # type: ignore[arg-type]
                      lambda: True)
    assert order[0] == "complete j" and sorted(order[1:]) == ["delete j-worker-1", "delete j-worker-2"]


def test_an_indexed_jobs_end_is_announced_and_recorded_on_its_jobs_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """The end of an indexed-job is an Event on each of its two Jobs, then the record on each:
    the two Events wait at once (a barrier of two), then the two records, never an Event
    after a record (a crash between them must repeat the Events, not lose them)."""
    from msgen.reconcile import publisher, status, watch

    barrier = threading.Barrier(2, timeout=PATIENCE)
    order: list[str] = []
    lock = threading.Lock()

    def create(client: Any, body: dict[str, Any]) -> dict[str, Any]:
        barrier.wait()
        with lock:
            order.append(f"event {body['involvedObject']['name']}")
        return body

    def merge_patch(client: Any, obj: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        barrier.wait()
        with lock:
            order.append(f"record {obj['metadata']['name']}")
        return obj

    monkeypatch.setattr(kube, "create", create)
    monkeypatch.setattr(kube, "merge_patch", merge_patch)
    policy, workloads, _ = watch.select("j", NAMESPACE, rendered(msjob("j", 2), NAMESPACE, "indexed-job"))
    assert sorted(o["kind"] for o in workloads) == ["Job", "Job"]
    made = publisher.publish(None, policy, status.JobStatus(job="j", phase="Succeeded"),  # type: ignore[arg-type]
                             workloads, lambda line: None)
    assert made.announced == "Succeeded"
    assert sorted(order[:2]) == ["event j-scheduler", "event j-worker"], order
    assert sorted(order[2:]) == ["record j-scheduler", "record j-worker"], order
