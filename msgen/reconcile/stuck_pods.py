"""Pods a lost node holds: what `msgen status` and `apply --wait` say about them.

When a node stops answering, Kubernetes evicts its pods (after their toleration of the
node's `unreachable` taint, 300 s by default) by deleting them, but only the node's kubelet
can end a pod it ran: until the node returns, each such pod stays Terminating with its last
phase (Running). Whatever waits for it to end waits as long: a StatefulSet re-creates a pod
only once it is gone, a Job with a `podFailurePolicy` (msgen's `ExitCode` restart policy)
replaces one only once it has failed, and a Job whose end is decided (`SuccessCriteriaMet`,
`FailureTarget`) becomes Complete or Failed only once its terminating pods have ended, and a
JobSet or TrainJob with it: a job that trained again on the other nodes and succeeded waits.
The pod garbage collector ends them only on a node tainted `node.kubernetes.io/out-of-service`
(or deleted). So a pod still there well past the end of its grace period is named, with the
node and what frees it.

msgen reads no Node (its controller may not): a pod past its deadline is the sign itself.
Pure: plain dicts in (as the API server returns them), lines out.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

#: How long past the end of its grace period a deleted pod may still be shown before its
#: kubelet is taken for gone (a kubelet ends a pod within seconds of that deadline).
SLACK = timedelta(seconds=30)
DOCS = "docs/failures.md#a-lost-node"


def stuck(pods: list[dict[str, Any]], now: datetime) -> list[str]:
    """One line per pod deleted longer than its grace period plus SLACK ago that has not ended."""
    out = []
    for pod in pods:
        metadata = pod.get("metadata") or {}
        deadline = _time(metadata.get("deletionTimestamp"))
        phase = (pod.get("status") or {}).get("phase")
        if deadline is None or phase in ("Succeeded", "Failed") or now - deadline < SLACK:
            continue
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            continue
        evicted = any(c.get("type") == "DisruptionTarget" and c.get("status") == "True"
                      and c.get("reason") == "DeletionByTaintManager"
                      for c in (pod.get("status") or {}).get("conditions") or [])
        why = "evicted from its node, which has a NoExecute taint (unreachable?)" if evicted else "deleted"
        out.append(
            f"pod {metadata.get('name')} on node {node}: {why}, still terminating since "
            f"{deadline.strftime('%Y-%m-%dT%H:%M:%SZ')}: its kubelet does not answer, and only its kubelet ends "
            f"it. A StatefulSet, or a Job with a podFailurePolicy (restartPolicy ExitCode), starts no "
            f"replacement before it has ended, and a Job whose success or failure is decided "
            f"(SuccessCriteriaMet, FailureTarget) is not Complete or Failed before it has ended, nor is the "
            f"JobSet or TrainJob that waits for that Job: when the node is back, or, if the node is gone for good, once "
            f"`kubectl taint node {node} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute` or "
            f"`kubectl delete node {node}` ends it ({DOCS})")
    return out


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
