"""One job's reconcile in `msgen controller`: its status, the policy actions due, its record.

The order within a pass is the order a reader of the cluster relies on: a job's end is
published (the `JobSucceeded`/`JobFailed` Event, the `msgen/status` annotation) before the
actions it calls for (cleanPodPolicy's deletions and suspensions, a TTL's deletions), so that
the verdict neither waits behind them (a bare-Pod job's cleanPodPolicy deletes up to a pod per
Worker, one request each) nor is lost with them: published after a pass that deletes every
object that could carry it (a job whose TTL passed while the controller, or its API server,
was away), it would never be published at all. Before the end, the status (replica counts,
conditions) is published after the actions. The actions of one pass go out together
(`together`), each on an object of its own, as do an end's Events and then its records
(`at_once`).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from lightkube import Client

from . import actions, at_once, published, status, watch
from .metrics import NOTHING, Recorder
from .publisher import publish
from .writes import Writes



def reconcile_job(client: Client, namespace: str, job: str, objects: list[dict[str, Any]],
                  echo: Callable[[str], None], *, writes: Writes | None = None, recorder: Recorder = NOTHING,
                  queued: float | None = None,
                  leading: Callable[[], bool] = lambda: True) -> tuple[status.JobStatus, float | None]:
    """One job: status, due actions, published status and Event; and in how many seconds
    it must be looked at again with no change on the cluster (a TTL that falls due), if any.
    The status returned has the phase the job shows: its end once published, whatever what
    is left of its run says now (pods terminating, the rest deleted).
    `writes` keeps this replica from acting again on what its watches do not show yet;
    `queued` (monotonic) is when the change that queued the job was seen, for the delay of
    each action the recorder is told of; nothing is done once `leading` says no more."""
    policy, workloads, pods = watch.select(job, namespace, objects)
    found = status.aggregate(policy, workloads, pods)
    services = [o for o in objects if o.get("kind") == "Service"]
    # The end published for this run: what is left of it may no longer show it.
    end = published.ended(found, published.read([*workloads, *services], workloads))
    now = datetime.now(timezone.utc)
    due = actions.due(policy, found, workloads, pods, now, services, end)
    # Deleted now or by an earlier pass whose deletion the watches do not show yet: either
    # way not where the status goes (a record on a pod being deleted goes with it, and the
    # next pass would announce the phase again, on another pod).
    gone = {(a.kind, a.name) for a in due if a.verb == "delete"}
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in [*workloads, *pods, *services]}
    if writes is not None:  # done already; the watches have not brought the change back yet
        due = [a for a in due if writes.pending(a.verb, by_name.get((a.kind, a.name), {})) is None]
        # Deleted by an earlier pass, due again now or not: a Service the TTL deleted must not
        # take the record of a job whose other pods are still terminating (it looks Running).
        gone |= {key for key, o in by_name.items() if writes.pending("delete", o) is not None}
    earlier = gone - {(a.kind, a.name) for a in due if a.verb == "delete"}  # deleted by an earlier pass
    expired = [t for t in actions.ttl_expiries(policy, found, workloads, end) if t <= now]
    shown = found.phase
    suspended: dict[tuple[str, str], dict[str, Any]] = {}  # (kind, name) → the patch this pass made

    def done(action: actions.Action, ok: bool) -> None:
        if ok and writes is not None and (action.kind, action.name) in by_name:
            writes.wrote(action.verb, by_name[(action.kind, action.name)])
        if ok and action.verb == "suspend":
            suspended[(action.kind, action.name)] = actions.suspend_patch(action, now)
        delay = ((datetime.now(timezone.utc) - max(expired)).total_seconds()
                 if action.policy == actions.TTL and expired else _since(queued))
        recorder.action(action.policy, action.verb, action.kind, ok, delay)

    def announce(kept: list[dict[str, Any]], kept_services: list[dict[str, Any]]) -> None:
        nonlocal shown
        # What was published is read from every object of the job, those being deleted too:
        # when the one holding the record goes (a TTL deleting the Jobs), its record moves to
        # what is left (a Service) as it was, and is not announced again there.
        made = publish(client, policy, found, kept, echo, kept_services, writes, read_from=[*workloads, *services])
        shown = made.phase
        if made.announced in ("Succeeded", "Failed"):
            recorder.action("verdict", "publish", "Job", True, _since(queued))

    if end is not None:
        if not leading():
            return found, None
        if published.first(policy, True, workloads, services, gone):
            # Nothing would be left to carry the end: it goes on the objects as they are now,
            # those this pass deletes included (the Event outlives them).
            announce(published.without(workloads, earlier), published.without(services, earlier))
        else:
            announce(published.without(workloads, gone), published.without(services, gone))
    together(client, namespace, due, workloads, lambda line: echo(f"{namespace}/{job}: {line}"), done, leading)
    if not leading():
        return found, None
    # A Job this pass suspended counts its TTL from the time the suspension wrote on it: the
    # copies do not show it yet, and waiting for the watch to bring it back made the TTL
    # wait for that change's reconcile, behind every progress update queued before it.
    written = [_as_written(o, suspended[(o["kind"], o["metadata"]["name"])])
               if (o.get("kind"), (o.get("metadata") or {}).get("name")) in suspended else o for o in workloads]
    later = [t for t in actions.ttl_expiries(policy, found, written, end) if t > now]
    again = (min(later) - now).total_seconds() + 0.05 if later else None
    if end is None and not all(actions.stopped_by_policy(o) for o in workloads):
        wait = published.holder_due_in(policy, workloads, now)
        if wait is None:
            announce(published.without(workloads, gone), published.without(services, gone))
        else:  # its holder may still come (the job's objects are created one by one)
            again = min(again, wait + 0.05) if again is not None else wait + 0.05
    # Else published above; or what is left of a run that ended (its record went with its Worker Job).
    return (found if shown == found.phase else replace(found, phase=shown)), again


def together(client: Client, namespace: str, due: list[actions.Action], workloads: list[dict[str, Any]],
             echo: Callable[[str], None], done: Callable[[actions.Action, bool], None],
             leading: Callable[[], bool]) -> None:
    """Carry out `due`, up to `at_once.AT_MOST` requests in flight: they are independent (each
    on an object of its own; `actions.due` holds back the deletion of the object keeping the
    job's end while anything else is left), and one after another a job's deletions held a
    worker for seconds on a busy API server. Each is sent only while `leading` (a slow API
    server must not outlast the Lease); once all have been tried, the first failure is raised.
    A Volcano Job's CompleteJob command goes first, alone, as it did when every action went
    one after another: the pods cleanPodPolicy deletes are its pods."""
    first = [a for a in due if a.verb == "complete"]
    rest = [a for a in due if a.verb != "complete"]
    if len(rest) < 2:  # nothing to overlap: in order, one after another
        first, rest = due, []
    for action in first:
        if leading():
            watch.carry_out(client, namespace, [action], workloads, echo, done)
    if not rest:
        return
    said = threading.Lock()

    def say(line: str) -> None:  # one line at a time, whichever request's
        with said:
            echo(line)

    def one(action: actions.Action) -> None:
        if leading():
            watch.carry_out(client, namespace, [action], workloads, say, done)

    at_once.send([functools.partial(one, action) for action in rest], "action")


def _as_written(obj: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Pure: `obj` with a suspension's merge `patch` (annotations and spec) applied."""
    metadata = obj.get("metadata") or {}
    annotations = {**(metadata.get("annotations") or {}), **patch["metadata"]["annotations"]}
    return {**obj, "metadata": {**metadata, "annotations": annotations}, "spec": {**(obj.get("spec") or {}), **patch["spec"]}}


def _since(queued: float | None) -> float | None:
    return None if queued is None else time.monotonic() - queued
