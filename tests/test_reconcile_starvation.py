"""Nothing the controller has queued waits for ever behind progress that never stops.

At a thousand jobs on a slow API server the replica that led lost its Lease and took it again
several times; each time, the loop demoted what it had queued more than 30 s before to
background work (`WorkQueue.demote`), the ends it had not acted on yet included, and a pass
gave background work back whenever progress waited, counting its slice from the pass's start:
progress took longer than that slice on every pass, so a job whose worker 0 had ended was
never acted on (no verdict, its pods left running), and a bare-Pod job's TTL, whose last
deletion waits for the rest of the job to be gone, left the pod that keeps its end. Now a
takeover demotes progress only, and background work has a slice of each pass of its own.
No test here measures time: the slice is made 0 (progress always takes longer than it), and
what is done, and in which order, is checked."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import controller, status
from msgen.reconcile.metrics import NOTHING
from msgen.reconcile.workers import Workers
from msgen.reconcile.workqueue import BACKGROUND, CHANGE, URGENT, WorkQueue
from msgen.reconcile.writes import Writes

from .fake_api import Cluster
from .fake_api_client import job_objects, served
from .fake_kubelet import end, msjob, place, rendered, stamp, start
from .fake_clock import Clock

JOB_NAME = "training.kubeflow.org/job-name"
NAMESPACE = "starved"
#: Passes a test makes while progress keeps coming: far more than the work queued needs.
PASSES = 30


def test_a_takeover_demotes_the_progress_it_queued_long_before_never_an_end() -> None:
    clock = Clock()
    queue = WorkQueue(clock=clock)
    queue.add_all([("ns", "resynced")], background=True)
    clock.now = 110
    queue.add(("ns", "ended-long-ago"), urgent=True)  # a follower saw the pod end ...
    queue.add(("ns", "started-long-ago"))  # ... and a pod start
    clock.now = 200
    queue.add(("ns", "started-now"))
    queue.demote(before=150)  # the takeover: what was queued over TAKEOVER_WINDOW before
    assert queue.take() == [(("ns", "ended-long-ago"), 110.0, URGENT), (("ns", "started-now"), 200.0, CHANGE),
                            (("ns", "resynced"), 100.0, BACKGROUND), (("ns", "started-long-ago"), 110.0, BACKGROUND)]


def _pod(name: str, job: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Running"},
            "metadata": {"name": name, "namespace": NAMESPACE, "resourceVersion": "1",
                         "labels": {JOB_NAME: job}, "annotations": {"msgen/run-policy": "{}"}}}


def _progress_that_never_stops(view: controller.ClusterView, done: list[str],
                               then: Callable[..., tuple[status.JobStatus, float | None]] | None = None) -> Any:
    """A `reconcile_job` under which every progress job (`p...`) reconciled shows a pod of the
    next one starting (queued as progress before the pass reaches its background work); any
    other job is handed to `then` (none: it is Running). Each job reconciled is appended to
    `done`."""
    count = iter(range(1, 10_000))

    def reconcile(client: Any, namespace: str, job: str, objects: list[dict[str, Any]], *args: Any,
                  **kwargs: Any) -> tuple[status.JobStatus, float | None]:
        done.append(job)
        if job.startswith("p"):
            following = f"p{next(count):04d}"
            view._changed(_pod(f"{following}-worker-0", following), False)
            return status.JobStatus(job=job, phase="Running"), None
        if then is None:
            return status.JobStatus(job=job, phase="Running"), None
        return then(client, namespace, job, objects, *args, **kwargs)

    return reconcile


def _passes(client: Any, view: controller.ClusterView, until: Callable[[], bool]) -> int:
    """The loop's passes (one worker), at most PASSES, until `until` says so; how many."""
    workers = Workers(1)
    for n in range(1, PASSES + 1):
        controller.reconcile_queued(client, view, lambda line: None, lambda: True, writes=Writes(),
                                    recorder=NOTHING, phases={}, workers=workers)
        if until():
            return n
    return PASSES + 1


def test_background_work_has_a_slice_of_every_pass_while_progress_never_stops(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A resync's jobs (background) while every pass finds new progress queued: each pass
    starts at least the oldest background job, so the three are reconciled within three
    passes (before, the slice counted from the pass's start was spent on progress, and
    background work was given back on every pass, for ever)."""
    monkeypatch.setattr(controller, "PASS_SLICE", 0.0)  # progress always outlasts the slice
    view = controller.ClusterView(None, [])  # type: ignore[arg-type]  # no namespace: no watch, no client
    for job in ("b1", "b2", "b3", "p0000"):
        view._changed(_pod(f"{job}-worker-0", job), False)
    view.queue.take()
    view.queue.add_all([(NAMESPACE, "b1"), (NAMESPACE, "b2"), (NAMESPACE, "b3")], background=True)
    view.queue.add((NAMESPACE, "p0000"))
    done: list[str] = []
    monkeypatch.setattr(controller, "reconcile_job", _progress_that_never_stops(view, done))
    passes = _passes(None, view, lambda: {"b1", "b2", "b3"} <= set(done))
    assert passes <= 3, [j for j in done if not j.startswith("p")]
    assert [j for j in done if j.startswith("b")] == ["b1", "b2", "b3"]  # oldest first
    assert done[0] == "p0000" and done.count("p0000") == 1  # progress still goes ahead of it


TTL = 30


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Any]]:
    with served(tmp_path, NAMESPACE) as both:
        yield both


def test_a_bare_pod_jobs_last_pod_is_deleted_by_the_replica_that_takes_over_under_steady_progress(
        api: tuple[Cluster, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's miss, against the API server in process. A bare-Pod job ended over its TTL
    ago; the leader's pass announced it, deleted the Scheduler, the other Worker and the
    Services, and kept worker 0, which keeps the end, for last (the rest gone). It was killed
    before its next pass. The follower saw every deletion (each queues the job ahead of
    progress: the next deletion may wait for it), and takes over more than TAKEOVER_WINDOW
    later, with progress queued on every pass. It must delete worker 0."""
    cluster, client = api
    monkeypatch.setattr(controller, "PASS_SLICE", 0.0)  # progress always outlasts the slice
    pods = place(cluster, rendered(msjob("j", 2, ttl=TTL), NAMESPACE, "pod"))
    for pod in pods:
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    ended = end(cluster, NAMESPACE, "j-worker-0", 0)
    assert ended is not None
    statuses = ended["status"]["containerStatuses"]
    statuses[0]["state"]["terminated"]["finishedAt"] = stamp(time.time() - 2 * TTL)
    cluster.patch("v1", "pods", NAMESPACE, "j-worker-0", {"status": {"containerStatuses": statuses}})

    view = controller.ClusterView(None, [])  # type: ignore[arg-type]  # the follower: changes told by hand
    seen = job_objects(cluster, NAMESPACE, "j")
    for obj in seen:
        view._changed(obj, False)
    controller.reconcile_job(client, NAMESPACE, "j", seen, lambda line: None, writes=Writes())  # the leader
    left = job_objects(cluster, NAMESPACE, "j")
    assert [o["metadata"]["name"] for o in left] == ["j-worker-0"], "the leader keeps the end's pod for last"
    names = {o["metadata"]["name"] for o in left}
    for obj in seen:
        if obj["metadata"]["name"] not in names:
            view._changed(obj, True)
    view.queue.demote(time.monotonic())  # taken over: everything queued was queued long before
    view._changed(_pod("p0000-worker-0", "p0000"), False)  # progress from then on

    done: list[str] = []
    monkeypatch.setattr(controller, "reconcile_job",
                        _progress_that_never_stops(view, done, then=controller.reconcile_job))
    _passes(client, view, lambda: "j" in done)
    assert "j" in done, "the ended job was never reconciled"
    assert job_objects(cluster, NAMESPACE, "j") == [], "worker 0, which kept the end, was left"
