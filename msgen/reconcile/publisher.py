"""Publishing a job's status on the cluster: the annotation `msgen/status` and an Event.

What is published, and on which object, is decided by `published` (pure); this module sends
it. `msgen controller` publishes on every pass, `msgen apply --wait` once at the job's end, so
both leave the same record for `msgen status` to read back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, NamedTuple

from lightkube import Client

from ..model import run_policy
from . import actions, at_once, kube, published, status
from .writes import Writes

STATUS_ANNOTATION = published.ANNOTATION
#: The Event source: the events say who wrote them.
COMPONENT = "msgen-controller"


class Published(NamedTuple):
    """What a pass published: the phase announced (an Event sent; None when the phase did
    not change) and the phase the job shows (an end, once published, whatever the objects
    left of its run say now)."""

    announced: str | None
    phase: str


def publish(client: Client, policy: run_policy.JobPolicy, found: status.JobStatus,
            workloads: list[dict[str, Any]], echo: Callable[[str], None],
            services: list[dict[str, Any]] | None = None, writes: Writes | None = None,
            read_from: list[dict[str, Any]] | None = None) -> Published:
    """Publish `found` on `workloads` (else `services`) merged with what was published before
    (what `writes` remembers this replica wrote, while the watched copies do not show it yet;
    else what they show, of `read_from` when given: the objects a pass is deleting too, whose
    record moves to what is left, as it was), for the run they are (`published.read`).
    An end also goes on each workload that is not a bare Pod (Jobs, whether cleanPodPolicy
    stops them or not, a JobSet, a StatefulSet...): Kubernetes' TTL deletes the finished
    holder without a pass seeing it go, and what is left must not read as running. A bare
    Pod's end stays on its holder, which msgen deletes last (`actions.due`)."""
    objects = [*workloads, *(services or [])]
    readable = objects if read_from is None else read_from
    run = [o for o in readable if o.get("kind") != "Service"]
    mine = [t for t in (writes.pending("status", o) for o in readable) if t] if writes is not None else []
    before = published.read([*({"metadata": {"annotations": {STATUS_ANNOTATION: t}}} for t in mine), *readable], run)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    shown = published.merged(before, found, now, published.run_created(run))
    target = published.keeper(policy, workloads, services or [])
    if target is None:
        return Published(None, str(shown["phase"]))
    announced = None
    if published.announce(before, shown):
        announced = str(shown["phase"])  # the Events first: a crash after them repeats them, never loses them
        echo(f"{target['metadata']['namespace']}/{found.job}: {shown['phase']}")
        on = [target] + [o for o in workloads if o is not target and o.get("kind") != "Pod"]
        at_once.send([functools.partial(_create_event, client, event(obj, found.job, shown)) for obj in on], "publish")
    text = published.text(shown)
    carriers = [target]
    if shown["phase"] in ("Succeeded", "Failed"):
        carriers += [o for o in workloads if o is not target and o.get("kind") != "Pod"]
    # The holder may have changed since this replica wrote the record elsewhere: written
    # anywhere and not shown yet, it is not written again (the copies catch up first).
    at_once.send([functools.partial(_record, client, obj, text, writes) for obj in carriers
                  if not ((obj is target and text in mine) or _holds(obj, text, writes))], "publish")
    return Published(announced, str(shown["phase"]))


def _record(client: Client, obj: dict[str, Any], text: str, writes: Writes | None) -> None:
    """The annotation `msgen/status` = `text` on `obj` (gone already: nothing to do)."""
    try:
        kube.merge_patch(client, obj, {"metadata": {"annotations": {STATUS_ANNOTATION: text}}})
    except kube.KubeError as exc:
        if exc.code != 404:  # 404: deleted in this pass
            raise
        return
    if writes is not None:
        writes.wrote("status", obj, text)


def _holds(obj: dict[str, Any], text: str, writes: Writes | None) -> bool:
    """Whether `obj` shows `text` published, or this replica wrote it there (the copy is behind)."""
    if ((obj.get("metadata") or {}).get("annotations") or {}).get(STATUS_ANNOTATION) == text:
        return True
    return writes is not None and writes.pending("status", obj) == text


def _create_event(client: Client, body: dict[str, Any]) -> None:
    try:
        kube.create(client, body)
    except kube.KubeError as exc:
        if exc.code not in (404, 409):  # 409: this announcement was made already (`event_name`)
            raise


def event_name(obj: dict[str, Any], reason: str) -> str:
    """The Event's name: one per object, run and reason (the uid: a workload made again gets
    new ones; the run's generation: a Job resumed for another run has a new one). The Event
    goes before the annotation that records it, so a replica stopped between the two (a
    leader killed; on a busy API server each write takes a second) left its successor to
    announce the phase again: the second Event of the same name is refused (409), not shown
    twice. So the name must not change with what the predecessor did after its Event: a Job
    suspended at the job's end has a new generation, but keeps its run's
    (`actions.run_generation`), or the successor's Event would be another, on each Job."""
    metadata = obj["metadata"]
    run = "-".join(str(v)[:8] for v in (metadata.get("uid"), actions.run_generation(obj)) if v)
    return f"{str(metadata['name'])[:200]}.{reason.lower()}{'-' + run if run else ''}"


def event(obj: dict[str, Any], job: str, shown: dict[str, Any]) -> dict[str, Any]:
    """A core Event on `obj`, so `kubectl describe` and `kubectl get events` show the phase."""
    metadata = obj["metadata"]
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    last = (shown.get("conditions") or [{}])[-1]
    detail = f" ({last.get('reason')}: {last['message']})" if last.get("message") else ""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name(obj, f"Job{shown['phase']}"), "namespace": metadata["namespace"]},
        "involvedObject": {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": metadata["name"],
                           "namespace": metadata["namespace"], "uid": metadata.get("uid")},
        "reason": f"Job{shown['phase']}",
        "message": f"job {job}: {shown['phase']}{detail}",
        "type": "Warning" if shown["phase"] == "Failed" else "Normal",
        "source": {"component": COMPONENT},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }  # fmt: skip
