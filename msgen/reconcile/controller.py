"""`msgen controller`: the run-time policies for every msgen job, however it was applied.

It watches (`informer`) the workloads labelled `app.kubernetes.io/managed-by: msgen` and the
pods labelled with a job name, in the namespaces it is given or all. Each change queues its
job (`workqueue`); a pass takes the queued jobs and, for each job carrying
`msgen/run-policy`, computes its status (status.aggregate), carries out the due policy
actions (actions.due, the same engine as `msgen apply --wait`) and publishes the status
(`published`): the annotation `msgen/status` on the job's holder workload (a Service of the
job, with its Services watched too, once no workload is left), and an Event on its workloads
when the phase changes. Every job is queued every `resync` seconds too, and a job whose TTL
falls due with no change on the cluster is queued for that moment.

It keeps no state of its own: what it published is read back from the cluster, so a
restart loses nothing; it remembers only its own writes until its watches bring them back
(`writes`), so that it never acts twice on a copy that is behind. With leader election (a
Lease, `lease`), of several replicas only the one holding the Lease acts; the others watch
and wait. It never acts on a copy that is not current: a watch that fails is logged, keeps
the replica not ready (`Health`, read by the Deployment's probes) and, with `--once`, makes
the command fail. What it does is counted for `/metrics` (`metrics`). Up to `workers` jobs
are reconciled at once (`workers`): a reconcile mostly waits for the API server.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, cast

from lightkube import Client

from ..model import run_policy
from ..targets.labels import JOB_NAME, MANAGED_BY
from .watch import JOBSET_JOBS
from . import informer, kube, ownership, published, records, status, watch, workqueue
from .lease import LEASE_SECONDS, Elector
from .metrics import NOTHING, Recorder
from .job_pass import reconcile_job as reconcile_job
from .workers import Workers
from .workqueue import WorkQueue
from .writes import Writes

STATUS_ANNOTATION = published.ANNOTATION
#: Seconds: the changes a replica saw in this long before it took over go first then; the
#: leader before it may not have acted on them (it stops acting up to a Lease's length
#: before another can take over). Older ones are background work (`WorkQueue.demote`).
TAKEOVER_WINDOW = 2.0 * LEASE_SECONDS


def group(objects: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Pure: (namespace, job) → the job's objects, for jobs with a workload msgen rendered."""
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for obj in objects:
        key = job_key(obj)
        if key is not None:
            found.setdefault(key, []).append(obj)
    return {key: objs for key, objs in found.items() if _rendered(objs)}


def _rendered(objects: list[dict[str, Any]]) -> bool:
    return any(run_policy.ANNOTATION in ((o.get("metadata") or {}).get("annotations") or {}) for o in objects)


def job_key(obj: dict[str, Any]) -> tuple[str, str] | None:
    """Pure: the (namespace, job) an object says it belongs to, by its job-name label (a
    JobSet's Job: by its JobSet's; `ownership.job_named`)."""
    job = ownership.job_named(obj)
    return (str((obj.get("metadata") or {}).get("namespace")), job) if job else None


class ClusterView:
    """Every msgen workload and every job's pods in `namespaces` (["*"]: all), kept current
    and by job; each change queues its job (`queue`)."""

    def __init__(self, client: Client, namespaces: list[str], recorder: Recorder = NOTHING) -> None:
        self.changed = threading.Event()
        self.queue = WorkQueue(recorder, wake=self.changed.set)
        self._lock = threading.Lock()
        #: (namespace, job) → its objects by (apiVersion, kind, name): a pass looks up the
        #: jobs it takes, never every object (grouping 11,000 objects took 15-45 ms a pass)
        self._by_job: dict[tuple[str, str], dict[tuple[str, str, str], dict[str, Any]]] = {}
        kinds: list[tuple[str, str, dict[str, str | None]]] = [
            (v, k, {MANAGED_BY: "msgen"}) for v, k in [*watch.WORKLOADS, ("v1", "Service")] if k != "Pod"]
        kinds.append(("v1", "Pod", {JOB_NAME: None}))  # None: the label exists
        # The Jobs a JobSet makes carry none of msgen's labels (`--target jobset`): its pods
        # are followed through them (`ownership`), found by their JobSet's label.
        kinds.append(("batch/v1", "Job", JOBSET_JOBS))
        self.informers = [informer.Informer(client, v, k, ns, labels, self.changed, notify=self._changed,
                                            recorder=recorder, transform=records.essentials).start()
                          for ns in namespaces for v, k, labels in kinds]

    def _changed(self, obj: dict[str, Any], deleted: bool) -> None:
        key = job_key(obj)
        if key is None:
            return
        name = (str(obj.get("apiVersion")), str(obj.get("kind")), str((obj.get("metadata") or {}).get("name")))
        with self._lock:
            objects = self._by_job.setdefault(key, {})
            before = objects.get(name)
            if deleted:
                objects.pop(name, None)
                if not objects:
                    del self._by_job[key]
            else:
                objects[name] = obj
            # An object of a job that ended going away: the next of its actions may wait for
            # it (a TTL deletes the pod that keeps the end once the rest is gone).
            gone_after_end = deleted and any(status.shows_end(o) for o in objects.values())
        # A pod's end (or a workload's verdict) seen for the first time goes first: what
        # it calls for (cleanPodPolicy, the verdict) must not wait behind progress updates.
        self.queue.add(key, urgent=gone_after_end or (not deleted and status.shows_end(obj)
                                                      and (before is None or not status.shows_end(before))))

    def jobs(self, keys: list[tuple[str, str]] | None = None) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The objects of each of `keys` (None: every job) that has a workload msgen rendered."""
        with self._lock:
            found = {k: list(self._by_job[k].values()) for k in (self._by_job if keys is None else keys)
                     if k in self._by_job}
        return {k: objs for k, objs in found.items() if _rendered(objs)}

    def objects(self) -> list[dict[str, Any]]:
        return [o for i in self.informers for o in i.items()]

    def problems(self) -> list[str]:
        """What keeps a watch from being current, one line per watch, e.g.
        `watching Pod in every namespace: ... forbidden`."""
        return [f"watching {i.kind} in {_where(i.namespace)}: {i.problem}"
                for i in self.informers if i.problem and i.served]

    def synced(self) -> bool:
        return all(i.synced.is_set() for i in self.informers)

    def healthy(self) -> bool:
        """Every watch listed and current: what the readiness probe reports."""
        return all(i.healthy() for i in self.informers)

    def alive(self) -> bool:
        return all(i.alive() for i in self.informers)

    def stop(self) -> None:
        for each in self.informers:
            each.stop()


def _where(namespace: str) -> str:
    return "every namespace" if namespace == "*" else f"namespace {namespace}"


#: Seconds of a pass its background work has, counted from the first background job it
#: starts, before it gives the background jobs it has not reached back when changes wait (an
#: urgent change takes the place of any other at once). Counted from the pass's start, the
#: slice was spent on progress whenever progress took longer: under progress that never
#: stops (a thousand jobs' pods starting and ending), background work, a resync's and the
#: progress a takeover demoted, was given back on every pass and never done.
PASS_SLICE = 0.5
#: Workers kept free of progress updates and background work (of more than one), for a pod's
#: end: at a thousand jobs whose pods start all the time, every worker could be writing a
#: replica count when a pod ended, and its cleanPodPolicy waited for one of those writes
#: (0.3-1 s each on a loaded API server) before it could even start.
KEPT_FOR_ENDS = 1
#: Seconds the loop waits for a worker before it looks at the queue again (an end queued
#: meanwhile goes on the worker kept for it, not after the progress update waiting).
LOOK_AGAIN = 0.05


def reconcile_queued(client: Client, view: ClusterView, echo: Callable[[str], None], leading: Callable[[], bool],  # noqa: C901 - one pass loop: rank, start, collect, give back, each a branch of the same schedule
                     *, writes: Writes, recorder: Recorder, phases: dict[tuple[str, str], str],
                     workers: Workers | None = None, yielding: bool = True) -> None:
    """The queued jobs once each, by rank (`workqueue`: a pod's end first, then other
    changes, then background work), up to `workers.count` at once, KEPT_FOR_ENDS of them for
    ends alone; a failing job never stops
    the others (it is queued again, with backoff); no job is started once leadership is lost
    (those running stop before their next action). A pass gives back the jobs it has not
    started when something of a better rank is queued meanwhile (`_outranked`), so it goes
    first; a `yielding` pass ends once it has started every job it took, those still running
    going on beside the next pass (they hand over their results there): a pod's end queued
    meanwhile waits for a free worker, not for the slowest of them (a bare-Pod job's TTL or
    cleanPodPolicy deletes up to a pod per Worker, one request each). Background work gives
    way to progress only after PASS_SLICE of its own in the pass, so every pass that reaches
    it starts at least its oldest job: it is never starved. Each job is read from
    the view as it starts; a pass that must not end before its jobs (`--once`) is not
    `yielding`. `phases` keeps each job's last phase, for the `msgen_jobs` gauge."""
    workers = workers or Workers(1)
    workers.collect()  # what the passes before left running and has ended since
    ready = view.queue.take()
    if not ready:
        return
    started = time.monotonic()
    writes.expire()
    said = threading.Lock()

    def say(line: str) -> None:  # one line at a time, whichever worker says it
        with said:
            echo(line)

    def one(key: tuple[str, str], queued: float, objects: list[dict[str, Any]]) -> str | None:
        """One job, in a worker: its phase, None when it failed (then queued again)."""
        began = time.monotonic()
        ns, job = key
        try:
            found, again = reconcile_job(client, ns, job, objects, say, writes=writes, recorder=recorder,
                                         queued=queued, leading=leading)
        except (kube.KubeError, watch.NotFound, run_policy.PolicyError) as exc:
            say(f"{ns}/{job}: skipped: {exc}")
            recorder.reconciled("error", time.monotonic() - began)
            if isinstance(exc, kube.KubeError):  # the others wait for a change: they would fail alike
                view.queue.retry(key)
            return None
        except Exception as exc:  # a bug, or data no rule foresaw: one job's, never every tenant's
            say(f"{ns}/{job}: skipped: internal error: {type(exc).__name__}: {str(exc)[:200]!r}")
            recorder.reconciled("error", time.monotonic() - began)
            view.queue.retry(key)
            return None
        view.queue.forget(key)
        if again is not None:
            view.queue.add_after(key, again)
        recorder.reconciled("success" if again is None else "requeue_after", time.monotonic() - began)
        return found.phase

    def record(key: tuple[str, str]) -> Callable[[str | None], None]:
        def then(phase: str | None) -> None:  # in this thread: `phases` is the loop's alone
            if phase is not None:
                phases[key] = phase
        return then

    background_began: float | None = None  # when this pass started its first background job

    def background_had() -> float:
        return 0.0 if background_began is None else time.monotonic() - background_began

    try:
        for n, (key, queued, rank) in enumerate(ready):
            keep = KEPT_FOR_ENDS if rank != workqueue.URGENT and workers.count > KEPT_FOR_ENDS else 0
            while not workers.free(keep, LOOK_AGAIN if yielding else None):
                if _outranked(view.queue.best(), rank, background_had()) or not leading():
                    break
            outranked = yielding and _outranked(view.queue.best(), rank, background_had())
            if outranked or not leading():
                view.queue.give_back(ready[n:])
                break
            ns_job = cast(tuple[str, str], key)
            # Each job's objects as they are when it starts, not when the pass began (a pass
            # at a thousand jobs lasts seconds); a job with none left is forgotten.
            objects = view.jobs([ns_job]).get(ns_job)
            if objects is None:
                view.queue.drop([key])
                phases.pop(ns_job, None)
                continue
            recorder.working(started, time.monotonic(), workers.active() + 1)
            if rank == workqueue.BACKGROUND and background_began is None:
                background_began = time.monotonic()
            if not workers.run(key, functools.partial(one, ns_job, queued, objects), record(ns_job)):
                view.queue.give_back([(key, queued, rank)])  # still running: after it ends
    finally:
        if yielding:
            workers.collect()  # what comes next goes beside those still running
        else:
            workers.finish()
    recorder.jobs(dict(Counter(phases.values())))
    recorder.queue_worked(time.monotonic() - started)
    recorder.working(started if workers.active() else None, time.monotonic(), workers.active())


def _outranked(waiting: int | None, rank: int, background_had: float) -> bool:
    """Whether a pass gives back the jobs it has not started, `rank` the next one's, when
    `waiting` is the best rank queued meanwhile: at once for an urgent change (a pod's end
    waits for no progress update), for a change over background work only once the pass's
    background work has had PASS_SLICE (`background_had`: seconds since the pass started its
    first background job): background work must go on too."""
    if waiting is None or waiting >= rank:
        return False
    return waiting == workqueue.URGENT or background_had > PASS_SLICE


class Health:
    """What the probes read: ready while every watch is current; alive while the loop
    turns and its watches' threads run."""

    def __init__(self, resync: float) -> None:
        self.view: ClusterView | None = None
        self.turned = time.monotonic()
        #: a loop silent for longer than this is stuck (a pass waits at most `resync`)
        self.stuck_after = max(3 * resync, 90.0)

    def ready(self) -> bool:
        return self.view is not None and self.view.healthy()

    def alive(self) -> bool:
        if time.monotonic() - self.turned > self.stuck_after:
            return False
        return self.view is None or self.view.alive()


def run(client: Client, namespaces: list[str], *, resync: float, once: bool, echo: Callable[[str], None],  # noqa: C901 - the loop's parts (lease, watches, probes, queue, shutdown) in the order they start and stop
        elector: Elector | None = None, health: Health | None = None, sync_timeout: float = 60.0,
        recorder: Recorder = NOTHING, workers: int = 1) -> None:
    """Until stopped: the jobs each change queues (up to `workers` reconciled at once), every job at least every `resync`
    seconds, and a job again when its TTL falls due. No pass acts on watches that are not
    current; what keeps them so is logged when it begins and when it ends. With `once`, a
    watch or Lease that fails is an error (KubeError)."""
    health = health or Health(resync)
    if elector is not None:
        if once:
            if not elector.try_once():
                if elector.problem:
                    raise kube.KubeError(f"cannot take the Lease: {elector.problem}")
                echo(f"not leading: Lease {elector.namespace}/{elector.name} is held by another replica")
                return
    leading = elector.leading if elector is not None else (lambda: True)
    view = health.view = ClusterView(client, namespaces, recorder)
    if elector is not None and not once:
        elector.changed = view.changed
        elector.start()
    was_leading = False
    acting = False
    resynced = 0.0
    writes = Writes()
    pool = Workers(workers)
    phases: dict[tuple[str, str], str] = {}
    shown: set[str] = set()
    lease_problem: str | None = None
    started = time.monotonic()
    try:
        while True:
            view.changed.clear()
            health.turned = time.monotonic()
            problems = view.problems()
            if once and problems:
                raise kube.KubeError("the controller cannot watch what it acts on:\n  " + "\n  ".join(problems))
            for line in sorted(set(problems) - shown):
                echo(f"{line}; retrying")
            failing = {line.split(": ", 1)[0] for line in problems}  # a new problem of one watch is no recovery
            for where in sorted({line.split(": ", 1)[0] for line in shown} - failing):
                echo(f"{where}: working again")
            shown = set(problems)
            if elector is not None and elector.problem != lease_problem:
                lease_problem = elector.problem
                echo(f"Lease {elector.namespace}/{elector.name}: {lease_problem or 'working again'}")
            if once and not view.synced():
                if time.monotonic() - started > sync_timeout:
                    raise kube.KubeError(f"the controller's watches did not list within {sync_timeout:.0f}s")
                view.changed.wait(0.5)
                continue
            if once and elector is not None and not leading() and not elector.try_once():
                echo(f"not leading: Lease {elector.namespace}/{elector.name} is held by another replica")
                return
            now_leading = leading()
            recorder.leading(now_leading)
            if now_leading != was_leading and elector is not None:
                echo(f"{'leading' if now_leading else 'not leading'} (Lease {elector.namespace}/{elector.name}, "
                     f"identity {elector.identity})")
                was_leading = now_leading
            if not now_leading:
                view.queue.demote(time.monotonic() - TAKEOVER_WINDOW)
            can_act = now_leading and view.healthy()
            if can_act and (not acting or time.monotonic() - resynced >= resync):
                known = view.jobs()
                view.queue.add_all(sorted(known), background=True)  # a change missed, ...
                for gone in [k for k in phases if k not in known]:
                    del phases[gone]
                resynced = time.monotonic()
            acting = can_act
            if can_act:
                reconcile_queued(client, view, echo, leading, writes=writes, recorder=recorder, phases=phases,
                                 workers=pool, yielding=not once)
                if once:
                    return
            wait = max(0.0, resync - (time.monotonic() - resynced)) if acting else min(resync, 2.0)
            later = view.queue.next_in()
            if later is not None:
                wait = min(wait, later)
            if not (acting and view.queue.depth()):
                view.changed.wait(wait if view.synced() else min(wait, 2.0))
            time.sleep(0.1)  # one pass for a burst of events
    finally:
        pool.close()
        view.stop()
        if elector is not None:
            elector.release()
