"""Several jobs reconciled at once (`msgen controller --workers`): their waits on the API
server overlap, one job is never in two workers at once, and one job's failure stays its own.

No test here measures time: overlap is shown by a barrier that only opens when `count`
reconciles wait at once (it breaks, after a timeout, when they run one after another)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from msgen.reconcile import controller, status
from msgen.reconcile.metrics import NOTHING
from msgen.reconcile.workers import Workers
from msgen.reconcile.workqueue import WorkQueue
from msgen.reconcile.writes import Writes

from .conftest import msgen

#: Seconds a barrier waits for the others before it breaks (only when the test fails).
PATIENCE = 10.0


class _View:
    """What reconcile_queued reads of the cluster view: the queue and each job's objects.
    The jobs are queued as ends (`urgent`), which may take every worker; progress leaves
    one free (`controller.KEPT_FOR_ENDS`)."""

    def __init__(self, jobs: list[tuple[str, str]], urgent: bool = True) -> None:
        self.queue = WorkQueue()
        self.keys = set(jobs)
        self.queue.add_all(sorted(jobs), urgent=urgent)

    def jobs(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
        return {k: [] for k in keys if k in self.keys}


class _Reconciles:
    """A stand-in for reconcile_job whose write waits (on a barrier, or not at all), and
    which counts the reconciles running at once and each job's."""

    def __init__(self, barrier: threading.Barrier | None = None, fail: str = "") -> None:
        self.barrier, self.fail = barrier, fail
        self.lock = threading.Lock()
        self.running: set[str] = set()
        self.peak = 0
        self.twice: list[str] = []
        self.done: list[str] = []
        self.queue: WorkQueue | None = None
        self.queued_again = 0  # with `queue`: how many times each job queues itself again
        self.started: dict[str, int] = {}

    def __call__(self, client: Any, namespace: str, job: str, objects: list[dict[str, Any]], *args: Any,
                 **kwargs: Any) -> tuple[status.JobStatus, float | None]:
        with self.lock:
            if job in self.running:
                self.twice.append(job)
            self.running.add(job)
            self.peak = max(self.peak, len(self.running))
            self.started[job] = self.started.get(job, 0) + 1
            again = self.started[job] <= self.queued_again
        try:
            if self.queue is not None and again:  # a watch event of this job while it is reconciled
                self.queue.add((namespace, job), urgent=True)
            if job == self.fail:
                raise ZeroDivisionError("a bug in one job")
            if self.barrier is not None:
                self.barrier.wait()  # the "write": returns once `parties` writes wait at once
            return status.JobStatus(job=job, phase="Running"), None
        finally:
            with self.lock:
                self.running.discard(job)
                self.done.append(job)


def _pass(view: _View, workers: Workers, said: list[str], phases: dict[tuple[str, str], str],
          leading: Any = lambda: True) -> None:
    controller.reconcile_queued(None, view, said.append, leading,  # type: ignore[arg-type]
                                writes=Writes(), recorder=NOTHING, phases=phases, workers=workers)


def _one_pass(view: _View, count: int, said: list[str], phases: dict[tuple[str, str], str]) -> None:
    """A pass with `count` workers of its own, closed after it."""
    workers = Workers(count)
    try:
        _pass(view, workers, said, phases)
    finally:
        workers.close()


def test_the_writes_of_several_jobs_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Reconciles(threading.Barrier(4, timeout=PATIENCE))
    monkeypatch.setattr(controller, "reconcile_job", fake)
    jobs = [("ns", f"j{n}") for n in range(8)]
    view, said, phases = _View(jobs), [], {}  # type: ignore[var-annotated]
    _one_pass(view, 4, said, phases)
    assert said == []  # no barrier broke: four writes waited at once, twice
    assert fake.peak == 4
    assert phases == {key: "Running" for key in jobs}
    assert view.queue.depth() == 0 and view.queue.next_in() is None


def test_progress_overlaps_on_every_worker_but_the_one_kept_for_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Reconciles(threading.Barrier(4 - controller.KEPT_FOR_ENDS, timeout=PATIENCE))
    monkeypatch.setattr(controller, "reconcile_job", fake)
    jobs = [("ns", f"j{n}") for n in range(6)]
    view, said, phases = _View(jobs, urgent=False), [], {}  # type: ignore[var-annotated]
    _one_pass(view, 4, said, phases)
    assert said == [] and fake.peak == 4 - controller.KEPT_FOR_ENDS
    assert phases == {key: "Running" for key in jobs}


def test_one_worker_reconciles_one_job_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Reconciles()
    monkeypatch.setattr(controller, "reconcile_job", fake)
    jobs = [("ns", f"j{n}") for n in range(5)]
    phases: dict[tuple[str, str], str] = {}
    _one_pass(_View(jobs), 1, [], phases)
    assert fake.peak == 1 and len(phases) == 5


def test_a_job_is_never_in_two_workers_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reconcile queues its own job again (as a watch event of its own write does);
    pass after pass (a pass leaves what it started running: the next ones find the jobs
    still running and give them back), the job is reconciled again, never while it still runs."""
    import time

    fake = _Reconciles(threading.Barrier(3, timeout=PATIENCE))
    monkeypatch.setattr(controller, "reconcile_job", fake)
    jobs = [("ns", f"j{n}") for n in range(3)]
    view, said, phases = _View(jobs), [], {}  # type: ignore[var-annotated]
    fake.queue, fake.queued_again = view.queue, 4
    workers = Workers(3)
    deadline = time.monotonic() + PATIENCE
    try:
        while (view.queue.depth() or workers.active()) and time.monotonic() < deadline:
            _pass(view, workers, said, phases)
            time.sleep(0.01)  # the loop's pause between passes
    finally:
        workers.close()
    assert said == [] and fake.twice == []
    assert {job: fake.done.count(job) for _, job in jobs} == {"j0": 5, "j1": 5, "j2": 5}


def test_workers_refuse_a_key_still_running() -> None:
    release = threading.Event()
    results: list[str] = []

    def first() -> str:
        release.wait(PATIENCE)
        return "first"

    workers = Workers(2)
    try:
        assert workers.run("a", first, results.append)
        assert not workers.run("a", lambda: "second", results.append)
        assert workers.keys() == {"a"}
        release.set()
        workers.finish()
        assert workers.run("a", lambda: "third", results.append)
        workers.finish()
    finally:
        workers.close()
    assert results == ["first", "third"]


def test_a_failing_job_does_not_stop_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _Reconciles(threading.Barrier(3, timeout=PATIENCE), fail="j1")
    monkeypatch.setattr(controller, "reconcile_job", fake)
    jobs = [("ns", f"j{n}") for n in range(4)]
    view, said, phases = _View(jobs), [], {}  # type: ignore[var-annotated]
    _one_pass(view, 4, said, phases)
    assert phases == {("ns", "j0"): "Running", ("ns", "j2"): "Running", ("ns", "j3"): "Running"}
    assert said == ["ns/j1: skipped: internal error: ZeroDivisionError: 'a bug in one job'"]
    assert view.queue.next_in() is not None  # j1 tried again later, with backoff


def test_no_job_starts_once_leadership_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """The jobs running finish; the rest go back to the queue for the next leader's pass."""
    fake = _Reconciles(threading.Barrier(2, timeout=PATIENCE))
    monkeypatch.setattr(controller, "reconcile_job", fake)
    jobs = [("ns", f"j{n}") for n in range(6)]
    view, said, phases = _View(jobs), [], {}  # type: ignore[var-annotated]
    asked = iter([True, True])  # leading for two jobs, then no more
    workers = Workers(2)
    try:
        _pass(view, workers, said, phases, leading=lambda: next(asked, False))
    finally:
        workers.close()
    assert said == [] and sorted(fake.done) == ["j0", "j1"]
    assert view.queue.depth() == 4


def test_the_options_say_how_many_workers() -> None:
    refused = msgen("controller", "--workers", "0")
    assert refused.exit_code == 2 and "--workers" in refused.stderr and refused.stdout == ""
    help_text = msgen("controller", "--help").stdout
    assert "--workers" in help_text and "default: 4" in help_text


def test_metrics_say_how_many_reconciles_may_run_at_once() -> None:
    pytest.importorskip("prometheus_client")
    from msgen.reconcile.metrics import Metrics, families

    counted = Metrics("0", workers=6)
    counted.working(0.0, 1.0, 3)
    found = families(counted.exposition()[0].decode())
    assert [s.value for s in found["controller_runtime_max_concurrent_reconciles"].samples] == [6]
    assert [s.value for s in found["controller_runtime_active_workers"].samples] == [3]


class _SlowWrites:
    """A hook of the fake API server that holds each write (in the server's thread, before
    it answers) until `parties` writes are held at once, or PATIENCE has passed; after the
    first meeting, writes pass at once. `peak` is the most writes held at once."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.held = 0
        self.peak = 0
        self.met = False
        self.lock = threading.Condition()

    def __call__(self, write: Any) -> None:
        with self.lock:
            self.held += 1
            self.peak = max(self.peak, self.held)
            if self.held >= self.parties:
                self.met = True
                self.lock.notify_all()
            self.lock.wait_for(lambda: self.met, timeout=PATIENCE)
            self.met = True  # one wait at most: a test that fails, fails soon
            self.held -= 1


def test_jobs_writes_to_the_api_server_overlap(tmp_path: Any) -> None:
    """The real reconciles over HTTP (tests/fake_api.py): of four workers, three jobs' first
    writes are in the server at the same time (a resync's work, which leaves one worker for
    a pod's end), and each job is acted on once."""
    pytest.importorskip("lightkube")
    import json

    from msgen.reconcile import kube

    from .fake_api import Cluster, Server
    from .fake_kubelet import msjob, place, rendered, start

    cluster = Cluster()
    server = Server(cluster).start()
    try:
        config = tmp_path / "kubeconfig"
        config.write_text(json.dumps(server.kubeconfig("big")))
        for n in range(4):
            for pod in place(cluster, rendered(msjob(f"job{n}", 1), "big", "pod")):
                start(cluster, "big", pod["metadata"]["name"])
        slow = _SlowWrites(4 - controller.KEPT_FOR_ENDS)
        cluster.hooks.append(slow)
        said: list[str] = []
        controller.run(kube.connect(str(config), None), ["big"], resync=30, once=True, echo=said.append,
                       workers=4)
        assert slow.peak == 4 - controller.KEPT_FOR_ENDS, (slow.peak, said)
        running = sorted(w.name for w in cluster.writes if w.kind == "Event" and "jobrunning" in w.name)
        assert len(running) == len(set(running)) >= 4, running
        assert sum("Running" in line for line in said) == 4, said
    finally:
        server.shutdown()
