"""What `msgen controller` keeps of each object it watches: the fields its decisions read.

The controller keeps a copy of every pod, workload and Service of the jobs it watches, and
its memory grows with them: at a thousand jobs (~9 objects each) the copies made most of
its memory, 5-6 KiB of Python objects per pod for under 1 KiB of JSON. So each object is
reduced once, on receipt, to a record (as controller-runtime's cache transforms do):

- `metadata`: what identifies the object and what the decisions read (`KEPT_METADATA`);
  no `managedFields`, no finalizers; of the labels, those a decision reads (`KEPT_LABELS`);
  of the annotations, msgen's own (`msgen/...`), the
  GitOps tool's tracking mark and the pod index some targets keep there (`kept_annotation`):
  `kubectl.kubernetes.io/last-applied-configuration` alone is the whole object again.
- a pod's `spec`: its node, restart policy, scheduler and containers' names, for a reader
  of the copy (no decision reads them); its `status`: the phase, reason and message, start
  time and each container's name, restarts and states (`_POD_STATUS_KEPT`); no IPs,
  conditions, images or resources.
- a workload's pod template: its metadata (the role's labels) and its restartPolicy (whether
  a Job's failed pod is a failure its controller counts: `retries.past_own_backoff_limit`),
  not the rest of its spec.
- every string is interned: every object of a job repeats the same label keys and values,
  the same run-policy annotation, the same field names; parsed one watch event at a time,
  each would otherwise be a copy of its own.

The records are plain dicts, so the decisions (`status`, `actions`, `published`) stay pure
functions of data shaped as the API server sends it; tests/test_reconcile_records_targets.py
checks that every decision comes out the same on the records as on the full objects a cluster
returns, for every target and in every state a policy acts on (tests/test_reconcile_records.py:
what a record holds).
"""

from __future__ import annotations

import sys
from typing import Any

from ..targets.labels import JOB_NAME, MANAGED_BY, REPLICA_TYPE
from .actions import TRACKING_ANNOTATIONS, TRACKING_LABELS
from .ownership import JOB_UID_LABELS, JOBSET_NAME_LABEL
from .pods import INDEX_LABELS

#: What of `metadata` is kept: what names the object, what the decisions read, and its
#: version (the writes this replica remembers are matched by it).
KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                 "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences")

#: The labels a decision reads (a job's name, a pod's role and index, a JobSet's name, the
#: UID of the Job whose selector a pod matches, a GitOps tool's mark) and msgen's own mark; a
#: rendered pod carries ten, and a tenant's object may carry thousands. A new decision that
#: reads another label adds it here.
KEPT_LABELS = frozenset({JOB_NAME, MANAGED_BY, REPLICA_TYPE, JOBSET_NAME_LABEL, *JOB_UID_LABELS, *INDEX_LABELS,
                         *TRACKING_LABELS})

#: What of a pod's spec stays: none of it is read by a decision; these help a reader of the
#: copies (a debugger, a log line). Containers are kept by name only.
_POD_SPEC_KEPT = ("nodeName", "restartPolicy", "schedulerName")

#: What of a pod's status the decisions read (phase, failures, restarts, start and end times,
#: why a container waits).
_POD_STATUS_KEPT = ("phase", "reason", "message", "startTime")
_CONTAINER_STATUS_KEPT = ("name", "restartCount", "state", "lastState")

#: Nesting below this depth is kept as received, not interned: hostile data may nest
#: deeper than a recursion should go.
_DEEPEST = 32


def kept_annotation(key: str) -> bool:
    """Whether a decision reads the annotation `key`: msgen's own (its run policy, its
    published status, a suspension's reason and time), a GitOps tool's tracking mark,
    and a pod's index where a target keeps it among annotations."""
    return key.startswith("msgen/") or key in TRACKING_ANNOTATIONS or key in INDEX_LABELS


def essentials(obj: dict[str, Any]) -> dict[str, Any]:
    """The record kept of `obj` (see the module's notes); `obj` is not changed."""
    out: dict[str, Any] = dict(obj)
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        out["metadata"] = _metadata(metadata)
    spec, status = obj.get("spec"), obj.get("status")
    if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
        if isinstance(spec, dict):
            kept = {k: spec[k] for k in _POD_SPEC_KEPT if k in spec}
            kept["containers"] = [{"name": c.get("name")} for c in spec.get("containers") or [] if isinstance(c, dict)]
            out["spec"] = kept
        if isinstance(status, dict):
            out["status"] = _pod_status(status)
    elif isinstance(spec, dict) and isinstance(spec.get("template"), dict) and "spec" in spec["template"]:
        template, kept_spec = spec["template"], {}
        if isinstance(template.get("spec"), dict) and "restartPolicy" in template["spec"]:
            kept_spec = {"spec": {"restartPolicy": template["spec"]["restartPolicy"]}}
        out["spec"] = {**spec, "template": {"metadata": template.get("metadata") or {}, **kept_spec}}
    shared = _shared(out, 0)
    assert isinstance(shared, dict)
    return shared


def _metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    kept = {k: metadata[k] for k in KEPT_METADATA if k in metadata}
    annotations = kept.get("annotations")
    if isinstance(annotations, dict):
        kept["annotations"] = {k: v for k, v in annotations.items() if isinstance(k, str) and kept_annotation(k)}
    labels = kept.get("labels")
    if isinstance(labels, dict):
        kept["labels"] = {k: v for k, v in labels.items() if k in KEPT_LABELS}
    return kept


def _pod_status(status: dict[str, Any]) -> dict[str, Any]:
    kept = {k: status[k] for k in _POD_STATUS_KEPT if k in status}
    for key in ("initContainerStatuses", "containerStatuses"):
        if isinstance(status.get(key), list):
            kept[key] = [{k: c[k] for k in _CONTAINER_STATUS_KEPT if k in c} if isinstance(c, dict) else c
                         for c in status[key]]
    return kept


def _shared(value: Any, depth: int) -> Any:
    """`value` rebuilt with every string interned (one copy of each text for all records)."""
    if type(value) is str:
        return sys.intern(value)
    if depth >= _DEEPEST:
        return value
    if isinstance(value, dict):
        return {(sys.intern(k) if type(k) is str else k): _shared(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_shared(v, depth + 1) for v in value]
    return value
