"""A job's status as the controller publishes it, and as `msgen status` reads it back.

With no MSJob object there is no `MSJob.status`; the controller keeps its equivalent where a
kubectl user finds it: the annotation `msgen/status` (the MSJob.status shape, JSON) on one
workload of the job (`holder`; a Service of the job once no workload is left: `keeper`),
and an Event on the job's workloads when its phase changes.
What is published is the controller's only memory: after a restart it reads the annotation
back, so the times it saw conditions begin and the phase it announced are not lost, and a job
whose pods a policy removed still reads as it ended. An end is final for its run, wherever
it is read from and whatever is left of the run's objects: it names the run (`RUN_CREATED`),
and a job applied again (a workload created after it) is another run, read afresh.
Pure: plain dicts and values in and out.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..model.run_policy import JobPolicy
from .status import Condition, JobStatus, pod_index, pod_role

ANNOTATION = "msgen/status"
_ENDED = ("Succeeded", "Failed")
_PROGRESS = {"Created": 0, "Running": 1, "Succeeded": 2, "Failed": 2}
#: In a published end: the creationTimestamp of the newest workload of the run that ended
#: (the API server's clock, as every creationTimestamp it is compared with).
RUN_CREATED = "runCreated"


def holder(policy: JobPolicy, workloads: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The workload that carries the job's status: the Worker role's (its pod 0 with bare
    Pods, which outlives `cleanPodPolicy: Running`), else the first by kind and name."""
    if not workloads:
        return None
    worker = policy.worker_type()

    def rank(obj: dict[str, Any]) -> tuple[int, int, str, str]:
        template = (obj.get("spec") or {}).get("template") or {}
        role = pod_role(obj if obj.get("kind") == "Pod" else template, policy)
        index = pod_index(obj) if obj.get("kind") == "Pod" else 0
        return (0 if worker is not None and role == worker else 1, index if index is not None else 0,
                str(obj.get("kind")), str((obj.get("metadata") or {}).get("name")))

    return min((o for o in workloads if not (o.get("metadata") or {}).get("deletionTimestamp")),
               key=rank, default=None)


#: Seconds a bare-Pod job's status waits for its holder, Worker pod 0, to be seen: a job's
#: objects are applied together, seconds apart on a busy API server; far longer, and the pod
#: is not coming (a quota refused it), and the status goes on another pod.
HOLDER_GRACE = 60.0


def holder_due_in(policy: JobPolicy, workloads: list[dict[str, Any]], now: datetime) -> float | None:
    """Seconds until a bare-Pod job's status may go on a pod other than its holder, Worker
    pod 0, which is not there (not seen yet); None when it may go now. The Event that
    announces a phase is named after the pod it is on; a replica that sent it and was
    stopped before its record was written (a leader replaced; on an API server away) leaves
    its successor to announce the phase again, refused as the same Event (409) only if it
    goes on the same pod. Announced on Worker pod 1 because pod 0 was not seen yet, then on
    pod 0, it was shown twice (the tenth controller round, through a 12-minute outage)."""
    worker = policy.worker_type()
    if worker is None or not workloads or any(o.get("kind") != "Pod" for o in workloads):
        return None
    if any(pod_role(o, policy) == worker and pod_index(o) == 0 for o in workloads):
        return None  # there, or being deleted (it is not coming back)
    times = [when for o in workloads if (when := _time((o.get("metadata") or {}).get("creationTimestamp"))) is not None]
    if not times:
        return None
    left = HOLDER_GRACE - (now - min(times)).total_seconds()
    return left if left > 0 else None


def keeper(policy: JobPolicy, workloads: list[dict[str, Any]],
           services: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The object that carries the job's status: its `holder` workload while one is left,
    else one of its Services. With bare Pods and `cleanPodPolicy: All` every workload is
    deleted at the end, as the operator deleted every pod; the job's end must still be
    readable, as MSJob.status was, so the Service (which the policy keeps) carries it."""
    found = holder(policy, workloads)
    if found is not None:
        return found
    live = [s for s in services if not (s.get("metadata") or {}).get("deletionTimestamp")]
    return min(live, key=lambda s: str((s.get("metadata") or {}).get("name")), default=None)


def first(policy: JobPolicy, finished: bool, workloads: list[dict[str, Any]], services: list[dict[str, Any]],
          deleting: set[tuple[str, str]]) -> bool:
    """Whether a job's end must be published before the pass's deletions (`deleting`: kind,
    name) are carried out: it ended, and they leave no object to carry it. A bare-Pod job
    whose TTL had passed when the controller first saw its end (it was away, or the API
    server was) loses every pod and Service in one pass; published after that, its end
    would never be announced."""
    return finished and keeper(policy, without(workloads, deleting), without(services, deleting)) is None


def without(objects: list[dict[str, Any]], names: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """`objects` less those named in `names` (kind, name)."""
    return [o for o in objects if (o.get("kind"), (o.get("metadata") or {}).get("name")) not in names]


def read(objects: list[dict[str, Any]], run: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The published status found on any of the job's objects (the holder's, or one an
    older pass wrote before the holder changed, or a Service's once no workload is left);
    None when nothing readable is there. With `run` (the job's workloads now), an end
    published for an earlier run is passed over: one of these was created after that run's
    newest workload (the job was applied again; the Service that kept the end stays)."""
    newest = run_created(run or [])
    found = []
    for obj in objects:
        text = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
        try:
            value = json.loads(text) if text else None
        except ValueError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("phase"), str) and not _earlier_run(value, newest):
            found.append(value)
    # The furthest phase wins: an end over what was written before it, Running over a
    # Created left on a workload that held the status before the job's Worker workload
    # was there (a job's objects are created one by one, and may be seen so).
    return max(found, key=lambda v: _PROGRESS.get(v["phase"], 0), default=None)


def run_created(workloads: list[dict[str, Any]]) -> str | None:
    """The creationTimestamp of the newest of `workloads` (None: none says when)."""
    times = [(when, text) for text in ((o.get("metadata") or {}).get("creationTimestamp") for o in workloads)
             if (when := _time(text)) is not None]
    return max(times)[1] if times else None


def _earlier_run(record: dict[str, Any], newest: str | None) -> bool:
    """Whether `record` is the end of a run before the one whose newest workload is `newest`."""
    if record.get("phase") not in _ENDED or newest is None:
        return False
    ended, latest = _time(record.get(RUN_CREATED)), _time(newest)
    return ended is not None and latest is not None and latest > ended


def _time(text: Any) -> datetime | None:
    """A creationTimestamp as a time; None for anything else (a record is an annotation
    anyone who may edit the object may write)."""
    if not isinstance(text, str) or len(text) > 64:
        return None
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


def ended(found: JobStatus, record: dict[str, Any] | None) -> JobStatus | None:
    """The job's end, for what follows it (its TTL): `found` once the objects show it, else
    the end published for this run (`read` with the run), which what is left of the objects
    may no longer show (the rest deleted: the TTL goes on to the object that kept the end,
    which alone may not decide the job); None before the end."""
    if found.finished:
        return found
    if record is None or record.get("phase") not in _ENDED:
        return None
    completed = record.get("completionTime")
    said = [c for c in record.get("conditions") or [] if isinstance(c, dict) and c.get("type") == record["phase"]]
    last = said[-1] if said else {}
    return JobStatus(job=found.job, phase=str(record["phase"]),
                     conditions=[Condition(str(record["phase"]), str(last.get("reason") or "JobEnded"),
                                           str(last.get("message") or ""))],
                     completion_time=completed if isinstance(completed, str) else None)


def merged(published: dict[str, Any] | None, computed: JobStatus, now: str | None,
           created: str | None = None) -> dict[str, Any]:
    """The status to show and publish: computed from the live objects, with the times of
    conditions first seen earlier (published) kept, and conditions new now stamped `now`.
    A published end is final, as MSJob.status was: the policies that run at the end remove
    pods, and the job must not read differently (or lose its end) afterwards; an end
    computed now names its run by `created` (`run_created` of its workloads). Nor does a
    job that ran read Created again when, for a moment, none of its pods runs (one ended
    before the others started): the operators only ever added conditions
    (`updateStatusSingle`), and the phase announced again would be an Event too many."""
    out: dict[str, Any] = {"phase": computed.phase, **computed.to_dict()}
    if published is None:
        seen: dict[str, str] = {}
    else:
        if published.get("phase") in _ENDED:
            return dict(published)
        seen = {str(c.get("type")): str(c["lastTransitionTime"])
                for c in published.get("conditions") or [] if c.get("lastTransitionTime")}
        if published.get("phase") == "Running" and computed.phase == "Created":
            out["phase"] = "Running"  # its time: the one published (`seen`)
            out["conditions"].append({"type": "Running", "status": "True", "reason": "JobRunning"})
    for condition in out["conditions"]:
        when = seen.get(condition["type"]) or condition.get("lastTransitionTime") or now
        if when:
            condition["lastTransitionTime"] = when
    if computed.finished and created is not None:
        out[RUN_CREATED] = created
    return out


def text(status: dict[str, Any]) -> str:
    """The annotation's value: compact JSON with sorted keys (a pass that changes nothing
    writes nothing)."""
    return json.dumps(status, sort_keys=True, separators=(",", ":"))


def announce(published: dict[str, Any] | None, status: dict[str, Any]) -> bool:
    """Whether the phase changed since it was last published (an Event is due)."""
    return published is None or published.get("phase") != status["phase"]
