"""A job's status as the controller publishes it, and as `msgen status` reads it back.

With no MSJob object there is no `MSJob.status`; the controller keeps its equivalent where a
kubectl user finds it: the annotation `msgen/status` (the MSJob.status shape, JSON) on one
workload of the job (`holder`; a Service of the job once no workload is left: `keeper`),
and an Event on the job's workloads when its phase changes.
What is published is the controller's only memory: after a restart it reads the annotation
back, so the times it saw conditions begin and the phase it announced are not lost, and a job
whose pods a policy removed still reads as it ended. Pure: plain dicts and values in and out.
"""

from __future__ import annotations

import json
from typing import Any

from ..model.run_policy import JobPolicy
from .status import JobStatus, pod_index, pod_role

ANNOTATION = "msgen/status"
_ENDED = ("Succeeded", "Failed")
_PROGRESS = {"Created": 0, "Running": 1, "Succeeded": 2, "Failed": 2}


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


def read(workloads: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The published status found on any of the job's workloads (the holder's, or one an
    older pass wrote before the holder changed); None when nothing readable is there."""
    found = []
    for obj in workloads:
        text = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
        try:
            value = json.loads(text) if text else None
        except ValueError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("phase"), str):
            found.append(value)
    # The furthest phase wins: an end over what was written before it, Running over a
    # Created left on a workload that held the status before the job's Worker workload
    # was there (a job's objects are created one by one, and may be seen so).
    return max(found, key=lambda v: _PROGRESS.get(v["phase"], 0), default=None)


def merged(published: dict[str, Any] | None, computed: JobStatus, now: str | None) -> dict[str, Any]:
    """The status to show and publish: computed from the live objects, with the times of
    conditions first seen earlier (published) kept, and conditions new now stamped `now`.
    A published end is final, as MSJob.status was: the policies that run at the end remove
    pods, and the job must not read differently (or lose its end) afterwards."""
    out: dict[str, Any] = {"phase": computed.phase, **computed.to_dict()}
    if published is None:
        seen: dict[str, str] = {}
    else:
        if published.get("phase") in _ENDED:
            return dict(published)
        seen = {str(c.get("type")): str(c["lastTransitionTime"])
                for c in published.get("conditions") or [] if c.get("lastTransitionTime")}
    for condition in out["conditions"]:
        when = seen.get(condition["type"]) or condition.get("lastTransitionTime") or now
        if when:
            condition["lastTransitionTime"] = when
    return out


def text(status: dict[str, Any]) -> str:
    """The annotation's value: compact JSON with sorted keys (a pass that changes nothing
    writes nothing)."""
    return json.dumps(status, sort_keys=True, separators=(",", ":"))


def announce(published: dict[str, Any] | None, status: dict[str, Any]) -> bool:
    """Whether the phase changed since it was last published (an Event is due)."""
    return published is None or published.get("phase") != status["phase"]
