"""A pod's end is acted on ahead of everything else the controller has queued.

At a thousand jobs whose pods start all the time, every start queues its job (its status's
replica counts change, a write each); a pass took the whole queue, oldest first, and a job
whose worker 0 had just succeeded waited behind hundreds of such updates: cleanPodPolicy's
p99 was a minute on a real API server. A change that shows an end is queued URGENT, a pass
gives back what it has not started when one arrives, and a job's end is published before the
actions it calls for. No test here measures time: the order of what is done is checked."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import controller, status, workqueue
from msgen.reconcile.metrics import NOTHING
from msgen.reconcile.workers import Workers
from msgen.reconcile.workqueue import BACKGROUND, CHANGE, URGENT, WorkQueue
from msgen.reconcile.writes import Writes

from .fake_api import Cluster
from .fake_api_client import served
from .fake_kubelet import end, msjob, place, rendered, start
from .fake_clock import Clock

#: No API server: the code under test never reaches one (a typed stand-in for lightkube's Client).
NO_CLIENT: Any = None

JOB_NAME = "training.kubeflow.org/job-name"
#: Seconds a reconcile waits for another before it gives up (only when the test fails).
PATIENCE = 10.0


def test_an_urgent_key_goes_before_changes_and_background_work_timed_from_its_end() -> None:
    clock = Clock()
    queue = WorkQueue(clock=clock)
    queue.add_all([("ns", "old")], background=True)
    clock.now = 101
    queue.add(("ns", "started"))  # a pod started: progress
    clock.now = 102
    queue.add(("ns", "ended"), urgent=True)  # a pod ended
    queue.add(("ns", "started-then-ended"))
    clock.now = 103
    queue.add(("ns", "started-then-ended"), urgent=True)  # the same job again, now urgent
    assert queue.best() == URGENT
    assert queue.take() == [(("ns", "ended"), 102.0, URGENT), (("ns", "started-then-ended"), 103.0, URGENT),
                            (("ns", "started"), 101.0, CHANGE), (("ns", "old"), 100.0, BACKGROUND)]
    assert queue.best() is None
    queue.add(("ns", "x"), urgent=True)
    queue.add(("ns", "x"))  # a later change does not lower its rank
    assert queue.take() == [(("ns", "x"), 103.0, URGENT)]


def test_what_is_given_back_keeps_the_better_rank_and_old_progress_is_demoted() -> None:
    clock = Clock()
    queue = WorkQueue(clock=clock)
    queue.add(("ns", "a"))
    taken = queue.take()
    queue.add(("ns", "a"), urgent=True)  # ended while the pass held it
    queue.give_back(taken)
    assert queue.take() == [(("ns", "a"), 100.0, URGENT)]
    queue.add(("ns", "long-ago"))  # a follower queued it; the leader then acted on it
    clock.now = 200
    queue.add(("ns", "now"))
    queue.demote(before=150)
    assert queue.best() == CHANGE
    assert [(k, r) for k, _, r in queue.take()] == [(("ns", "now"), CHANGE), (("ns", "long-ago"), BACKGROUND)]


def test_an_end_on_a_job_waiting_as_progress_is_timed_from_the_end_on_every_path() -> None:
    """The time a key carries is what the actions' delay histogram counts from. A job queued
    by progress at 100 whose pod ends at 160 waited 0 s for its end when taken at 160, not
    60 s (the seventh round's histogram put most cleanPodPolicy actions above 60 s while the
    cluster showed them seconds after the pod's end): raised to urgent by a change, given
    back beside an end queued meanwhile, or falling due (a TTL, a retry)."""
    clock = Clock()
    queue = WorkQueue(clock=clock)
    queue.add(("ns", "raised"))
    clock.now = 160
    queue.add(("ns", "raised"), urgent=True)
    assert queue.take() == [(("ns", "raised"), 160.0, URGENT)]

    clock.now = 200
    queue.add(("ns", "given-back"))
    taken = queue.take()  # a pass takes the progress update ...
    clock.now = 260
    queue.add(("ns", "given-back"), urgent=True)  # ... its pod ends before the pass reaches it
    queue.give_back(taken)
    assert queue.take() == [(("ns", "given-back"), 260.0, URGENT)]

    clock.now = 300
    queue.add(("ns", "falls-due"))  # progress, then its TTL falls due at 330
    queue.add_after(("ns", "falls-due"), 30)
    clock.now = 330
    assert queue.take() == [(("ns", "falls-due"), 330.0, URGENT)]

    clock.now = 400  # an end already urgent keeps its own, older time when the TTL falls due too
    queue.add(("ns", "urgent-then-due"), urgent=True)
    queue.add_after(("ns", "urgent-then-due"), 5)
    clock.now = 405
    assert queue.take() == [(("ns", "urgent-then-due"), 400.0, URGENT)]

    clock.now = 500  # two entries of one rank: the older time stays
    queue.add(("ns", "same-rank"))
    taken = queue.take()
    clock.now = 510
    queue.add(("ns", "same-rank"))
    queue.give_back(taken)
    assert queue.take() == [(("ns", "same-rank"), 500.0, CHANGE)]


def test_the_view_times_a_job_from_its_pods_end_not_from_the_progress_queued_before() -> None:
    view = controller.ClusterView(NO_CLIENT, [])  # no namespace: no watch starts
    view._changed(_pod("a-worker-0", "a", "Running", "1"), False)  # progress, queued first
    before_end = time.monotonic()
    view._changed(_pod("a-worker-0", "a", "Succeeded", "2"), False)
    ((key, queued, rank),) = view.queue.take()
    assert key == ("ns", "a") and rank == URGENT and queued >= before_end


def _pod(name: str, job: str, phase: str, version: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "status": {"phase": phase},
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": version,
                         "labels": {JOB_NAME: job}, "annotations": {"msgen/run-policy": "{}"}}}


def test_the_view_queues_a_job_urgent_when_a_pod_first_shows_its_end_or_a_pod_of_an_ended_job_goes() -> None:
    view = controller.ClusterView(NO_CLIENT, [])  # no namespace: no watch starts; changes are told by hand

    def queued() -> list[tuple[str, int]]:
        return [(k[1], r) for k, _, r in view.queue.take()]  # type: ignore[index]

    view._changed(_pod("a-worker-0", "a", "Running", "1"), False)
    assert queued() == [("a", CHANGE)]
    view._changed(_pod("a-worker-0", "a", "Succeeded", "2"), False)
    assert queued() == [("a", URGENT)]
    view._changed(_pod("a-worker-0", "a", "Succeeded", "3"), False)  # its record written back: no news
    view._changed(_pod("a-worker-0", "a", "Succeeded", "3"), True)  # deleted: no end to act on
    assert queued() == [("a", CHANGE)]
    # A pod of a job that ended goes: the pod keeping the end is deleted once the rest is gone,
    # and a TTL's last deletion must not wait behind progress updates either.
    view._changed(_pod("e-worker-0", "e", "Succeeded", "5"), False)
    view._changed(_pod("e-worker-1", "e", "Running", "6"), False)
    view._changed(_pod("f-worker-1", "f", "Running", "7"), False)
    view._changed(_pod("f-worker-0", "f", "Running", "7"), False)
    assert sorted(queued()) == [("e", URGENT), ("f", CHANGE)]
    view._changed(_pod("e-worker-1", "e", "Running", "6"), True)
    view._changed(_pod("f-worker-1", "f", "Running", "7"), True)  # no end: progress
    assert sorted(queued()) == [("e", URGENT), ("f", CHANGE)]
    view._changed(_pod("b-worker-0", "b", "Failed", "4"), False)  # first seen ended (a relist)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "c-worker", "namespace": "ns",
                                                                  "labels": {JOB_NAME: "c"}},
           "status": {"conditions": [{"type": "FailureTarget", "status": "True"}]}}
    view._changed(job, False)
    assert sorted(queued()) == [("b", URGENT), ("c", URGENT)]
    assert status.shows_end(job) and not status.shows_end({**job, "status": {}})


class _View:
    """What reconcile_queued reads: the queue and each job's objects, read when asked."""

    def __init__(self, jobs: list[str]) -> None:
        self.queue = WorkQueue()
        self.objects: dict[tuple[str, str], list[dict[str, Any]]] = {("ns", j): [] for j in jobs}
        self.queue.add_all(sorted(self.objects))

    def jobs(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
        return {k: list(self.objects[k]) for k in keys if k in self.objects}


def test_a_pass_gives_back_its_changes_when_a_pods_end_is_queued_and_reads_each_job_as_it_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty jobs queued by progress; while the first is reconciled, a pod of job `z` ends.
    `z` is reconciled next, not after the other nineteen; and a job reconciled later in the
    pass is read as it is then, with what changed since the pass began."""
    view = _View([f"j{n:02d}" for n in range(20)] + ["z"])
    view.queue.take()
    view.queue.add_all([("ns", f"j{n:02d}") for n in range(20)])
    order: list[str] = []
    seen: dict[str, int] = {}

    def reconcile(client: Any, namespace: str, job: str, objects: list[dict[str, Any]], *args: Any,
                  **kwargs: Any) -> tuple[status.JobStatus, float | None]:
        order.append(job)
        seen[job] = len(objects)
        if job == "j00":
            view.objects[("ns", "z")].append(_pod("z-worker-0", "z", "Succeeded", "9"))
            view.objects[("ns", "j05")].append(_pod("j05-worker-0", "j05", "Running", "9"))
            view.queue.add(("ns", "z"), urgent=True)
        return status.JobStatus(job=job, phase="Running"), None

    monkeypatch.setattr(controller, "reconcile_job", reconcile)
    workers = Workers(1)
    phases: dict[tuple[str, str], str] = {}
    for _ in range(3):
        controller.reconcile_queued(None, view, lambda line: None, lambda: True,  # type: ignore[arg-type]
                                    writes=Writes(), recorder=NOTHING, phases=phases, workers=workers)
    assert order[:2] == ["j00", "z"], order
    assert sorted(order) == sorted(["z", *(f"j{n:02d}" for n in range(20))])
    assert seen["z"] == 1 and seen["j05"] == 1


def _slow_until_z(view: _View, gate: threading.Event, released: list[bool], *, slow_ends: str) -> Any:
    """A `reconcile_job` under which job `a-slow` queues an urgent `z` (a pod of `z` ended)
    and then waits on the API server until `z` has been reconciled, at most PATIENCE seconds
    (whether `z` released it is appended to `released`); `a-slow` then reports `slow_ends`,
    `z` Running."""

    def reconcile(client: Any, namespace: str, job: str, objects: list[dict[str, Any]], *args: Any,
                  **kwargs: Any) -> tuple[status.JobStatus, float | None]:
        if job == "a-slow":
            view.queue.add(("ns", "z"), urgent=True)
            released.append(gate.wait(PATIENCE))
        elif job == "z":
            gate.set()
        return status.JobStatus(job=job, phase="Running" if job == "z" else slow_ends), None

    return reconcile


def test_an_urgent_job_does_not_wait_for_the_slowest_reconcile_of_the_pass_it_cut_short(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Job `slow` waits on the API server (here: until `z` has been reconciled, at most
    PATIENCE seconds); meanwhile a pod of `z` ends. The pass is cut short and `z` goes on
    the free worker while `slow` still runs, not once the pass's last reconcile has ended."""

    view = _View(["a-slow"] + [f"j{n:02d}" for n in range(20)] + ["z"])
    view.queue.take()
    view.queue.add_all([("ns", "a-slow"), *(("ns", f"j{n:02d}") for n in range(20))])
    gate = threading.Event()
    released: list[bool] = []
    monkeypatch.setattr(controller, "reconcile_job", _slow_until_z(view, gate, released, slow_ends="Running"))
    workers = Workers(2)
    try:
        for _ in range(5):
            controller.reconcile_queued(None, view, lambda line: None, lambda: True,  # type: ignore[arg-type]
                                        writes=Writes(), recorder=NOTHING, phases={}, workers=workers)
            if gate.is_set():
                break
    finally:
        workers.close()
    assert released == [True]


def test_an_urgent_job_does_not_wait_for_the_slowest_reconcile_of_a_pass_that_started_everything(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass has started every job it took (here one, `slow`, waiting on the API server
    until `z` has been reconciled, at most PATIENCE seconds) when a pod of `z` ends. Nothing is
    left to give back, so no pass is cut short: the pass must still not hold `z` until `slow`
    has ended. It returns with `slow` running; the next pass runs `z` on the free worker."""

    view = _View(["a-slow", "z"])
    view.queue.take()
    view.queue.add(("ns", "a-slow"))
    gate = threading.Event()
    released: list[bool] = []
    phases: dict[tuple[str, str], str] = {}
    monkeypatch.setattr(controller, "reconcile_job", _slow_until_z(view, gate, released, slow_ends="Succeeded"))
    workers = Workers(2)
    try:
        for _ in range(5):
            controller.reconcile_queued(None, view, lambda line: None, lambda: True,  # type: ignore[arg-type]
                                        writes=Writes(), recorder=NOTHING, phases=phases, workers=workers)
            if gate.is_set():
                break
    finally:
        workers.close()
    assert released == [True]
    # What a reconcile left running hands its phase over at a later pass (here: at close).
    controller.reconcile_queued(None, view, lambda line: None, lambda: True,  # type: ignore[arg-type]
                                writes=Writes(), recorder=NOTHING, phases=phases, workers=workers)
    assert phases.get(("ns", "z")) == "Running"


def test_progress_never_takes_the_worker_kept_for_a_pods_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers, two progress updates (`a-slow`, `b-slow`) waiting on the API server until
    `z` has been reconciled (at most PATIENCE seconds each). While `a-slow` runs, a pod of `z`
    ends. `b-slow` must not have taken the last worker: `z` goes on it, and the progress
    update after. (Before, both workers were busy with progress and the end waited.)"""
    view = _View(["a-slow", "b-slow", "z"])
    view.queue.take()
    view.queue.add_all([("ns", "a-slow"), ("ns", "b-slow")])
    gate, b_started = threading.Event(), threading.Event()
    released: list[bool] = []
    order: list[str] = []

    def reconcile(client: Any, namespace: str, job: str, objects: list[dict[str, Any]], *args: Any,
                  **kwargs: Any) -> tuple[status.JobStatus, float | None]:
        order.append(job)
        if job == "a-slow":
            b_started.wait(0.5)  # the end comes once b-slow runs, or half a second on
            view.queue.add(("ns", "z"), urgent=True)
            released.append(gate.wait(PATIENCE))
        elif job == "b-slow":
            b_started.set()
            released.append(gate.wait(PATIENCE))
        else:
            gate.set()
        return status.JobStatus(job=job, phase="Running"), None

    monkeypatch.setattr(controller, "reconcile_job", reconcile)
    workers = Workers(2)
    try:
        deadline = time.monotonic() + 3 * PATIENCE
        while len(order) < 3 and time.monotonic() < deadline:  # the loop's passes, as `run` makes them
            controller.reconcile_queued(None, view, lambda line: None, lambda: True,  # type: ignore[arg-type]
                                        writes=Writes(), recorder=NOTHING, phases={}, workers=workers)
            time.sleep(0.01)
    finally:
        workers.close()
    assert order == ["a-slow", "z", "b-slow"] and released == [True, True]


def test_a_job_queued_for_later_by_a_reconcile_still_running_wakes_the_loop() -> None:
    """A pass no longer waits for every reconcile it started, so the loop may be waiting
    already when one of them queues its job for later (a TTL due, a retry): the queue wakes
    it, so that it waits no longer than until that time."""
    woken: list[int] = []
    queue = WorkQueue(wake=lambda: woken.append(1))
    queue.add_after(("ns", "a"), 5.0)
    assert woken == [1] and queue.next_in() is not None


def test_background_work_is_given_back_only_after_a_slice_and_changes_never_for_background() -> None:
    assert controller._outranked(URGENT, CHANGE, 0.0) and controller._outranked(URGENT, BACKGROUND, 0.0)
    assert not controller._outranked(CHANGE, BACKGROUND, 0.0)
    assert controller._outranked(CHANGE, BACKGROUND, controller.PASS_SLICE + 0.1)
    assert not controller._outranked(BACKGROUND, CHANGE, 10.0) and not controller._outranked(None, URGENT, 10.0)
    assert not controller._outranked(URGENT, URGENT, 10.0) and workqueue.URGENT < workqueue.CHANGE


pytest.importorskip("lightkube")


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Any]]:
    with served(tmp_path, "urgent") as both:
        yield both


def test_a_jobs_end_is_published_before_the_deletions_it_calls_for(api: tuple[Cluster, Any]) -> None:
    """A bare-Pod job of 4 Workers ends by worker 0's success: cleanPodPolicy Running deletes the
    Scheduler's and three Workers' pods, one request each. The verdict Event goes first."""
    from .fake_api_client import job_objects

    cluster, client = api
    for pod in place(cluster, rendered(msjob("j", 4), "urgent", "pod")):
        start(cluster, "urgent", pod["metadata"]["name"])
    end(cluster, "urgent", "j-worker-0", 0)
    first = len(cluster.writes)
    controller.reconcile_job(client, "urgent", "j", job_objects(cluster, "urgent", "j"), lambda line: None,
                             writes=Writes())
    done = [(w.method, w.kind) for w in cluster.writes[first:] if w.result is not None]
    assert done.count(("DELETE", "Pod")) == 4, done
    assert done.index(("POST", "Event")) < done.index(("DELETE", "Pod")), done
