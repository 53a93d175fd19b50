"""`msgen controller`: the run-time policies for every msgen job, however it was applied.

A loop over the cluster: each pass lists the workloads labelled
`app.kubernetes.io/managed-by: msgen` that carry `msgen/run-policy`, groups them by job,
and for each job computes its status (status.aggregate), carries out the due policy
actions (actions.due, the same engine as `msgen apply --wait`) and publishes the status:
the annotation `msgen/status` (the MSJob.status shape, JSON) on the job's workloads and an
Event on a workload whenever the job's phase changes. It keeps no state of its own: what
it published is read back from the cluster, so a restart loses nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from lightkube import Client

from .. import run_policy
from ..targets.labels import JOB_NAME, MANAGED_BY
from . import actions, kube, status, watch

STATUS_ANNOTATION = "msgen/status"
COMPONENT = "msgen-controller"


def jobs(client: Client, namespace: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(namespace, job) → its workloads, for every workload msgen rendered."""
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for api_version, kind in watch.WORKLOADS:
        if api_version != "v1" and not kube.exists(client, api_version, kind, namespace):
            continue
        for obj in kube.listing(client, api_version, kind, namespace, {MANAGED_BY: "msgen"}):
            metadata = obj.get("metadata") or {}
            job = (metadata.get("labels") or {}).get(JOB_NAME)
            if job and run_policy.ANNOTATION in (metadata.get("annotations") or {}):
                found.setdefault((metadata["namespace"], job), []).append(obj)
    return found


def reconcile_job(client: Client, namespace: str, job: str, echo: Callable[[str], None]) -> status.JobStatus:
    """One job: status, due actions, published status and Event."""
    policy, workloads, pods = watch.observe(client, job, namespace)
    found = status.aggregate(policy, workloads, pods)
    due = actions.due(policy, found, workloads, pods, datetime.now(timezone.utc))
    watch.carry_out(client, namespace, due, workloads, lambda line: echo(f"{namespace}/{job}: {line}"))
    publish(client, found, workloads, echo)
    return found


def publish(client: Client, found: status.JobStatus, workloads: list[dict[str, Any]],
            echo: Callable[[str], None]) -> None:
    text = json.dumps({"phase": found.phase, **found.to_dict()}, sort_keys=True, separators=(",", ":"))
    announced = False
    for obj in workloads:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        before = annotations.get(STATUS_ANNOTATION)
        if before == text or (obj.get("metadata") or {}).get("deletionTimestamp"):
            continue
        try:
            kube.merge_patch(client, obj, {"metadata": {"annotations": {STATUS_ANNOTATION: text}}})
        except kube.KubeError as exc:
            if exc.code == 404:  # deleted by a policy action in this pass
                continue
            raise
        if _phase(before) != found.phase and not announced:  # one Event per change
            announced = True
            echo(f"{obj['metadata']['namespace']}/{found.job}: {found.phase}")
            kube.create(client, event(obj, found))


def _phase(text: str | None) -> str | None:
    if not text:
        return None
    try:
        return str(json.loads(text).get("phase"))
    except (ValueError, AttributeError):
        return None


def event(obj: dict[str, Any], found: status.JobStatus) -> dict[str, Any]:
    """A core Event on `obj`, so `kubectl describe` and `kubectl get events` show the phase."""
    metadata = obj["metadata"]
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    last = found.conditions[-1] if found.conditions else None
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{metadata['name']}.", "namespace": metadata["namespace"]},
        "involvedObject": {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": metadata["name"],
                           "namespace": metadata["namespace"], "uid": metadata.get("uid")},
        "reason": f"Job{found.phase}",
        "message": f"job {found.job}: {found.phase}" + (f" ({last.reason}: {last.message})" if last and last.message else ""),
        "type": "Warning" if found.phase == "Failed" else "Normal",
        "source": {"component": COMPONENT},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }  # fmt: skip


def run(client: Client, namespace: str, *, interval: float, once: bool,
        echo: Callable[[str], None]) -> None:
    """Passes every `interval` seconds until stopped; a failing job never stops the others."""
    while True:
        for (ns, job) in sorted(jobs(client, namespace)):
            try:
                reconcile_job(client, ns, job, echo)
            except (kube.KubeError, watch.NotFound, run_policy.PolicyError) as exc:
                echo(f"{ns}/{job}: skipped: {exc}")
        if once:
            return
        time.sleep(interval)
