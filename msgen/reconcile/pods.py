"""One pod, as the job's status sees it: its role and index, why it failed, whether a
deletion killed it. Pure: plain dicts in (as the API server returns them), values out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..model.run_policy import JobPolicy
from ..targets.labels import REPLICA_INDEX, REPLICA_TYPE

#: Where a pod's index inside its role is found, by target (first match wins), among its
#: labels or annotations.
INDEX_LABELS = (
    REPLICA_INDEX,
    "batch.kubernetes.io/job-completion-index",
    "apps.kubernetes.io/pod-index",
    "volcano.sh/task-index",
)


@dataclass(frozen=True)
class PodFailure:
    """Why a pod failed, for the user: which container, its exit code and reason;
    `previous`: the container failed and was restarted in place (its log is the previous
    instance's); `restarted`: it had been restarted in place before the instance that failed
    (which ended too, and whose log is its own)."""

    pod: str
    container: str | None
    exit_code: int | None
    reason: str
    previous: bool = False
    restarted: bool = False


def pod_role(pod: dict[str, Any], policy: JobPolicy) -> str | None:
    key = (pod.get("metadata", {}).get("labels") or {}).get(REPLICA_TYPE)
    for name in policy.roles:
        if name.lower() == key:
            return name
    return None


def pod_index(pod: dict[str, Any]) -> int | None:
    metadata = pod.get("metadata", {})
    for where in (metadata.get("labels") or {}, metadata.get("annotations") or {}):
        for key in INDEX_LABELS:
            if key in where:
                try:
                    return int(where[key])
                except ValueError:
                    return None
    return None


#: A pod's own reasons, which say more than its container's "Error" (the kubelet killed it).
_POD_REASONS = ("DeadlineExceeded", "Evicted", "OutOfpods", "Shutdown", "Terminated", "NodeLost")


def pod_failure(pod: dict[str, Any]) -> PodFailure:
    """The first terminated container that failed, or the pod's own reason; a pod-level
    reason such as DeadlineExceeded or Evicted wins over its container's `Error`."""
    status = pod.get("status") or {}
    own = status.get("reason")
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        last = container.get("lastState") or {}
        ended = state.get("terminated") or last.get("terminated")
        if ended and ended.get("exitCode", 0) != 0:
            reason = own if own in _POD_REASONS else ended.get("reason") or "Error"
            return PodFailure(pod["metadata"]["name"], container.get("name"), ended.get("exitCode"),
                              reason, previous=not state.get("terminated"),
                              restarted=int(container.get("restartCount") or 0) > 0)
    return PodFailure(pod["metadata"]["name"], None, None, own or "Failed")


def restarted(pod: dict[str, Any]) -> PodFailure | None:
    """A container that failed and was restarted in place (OnFailure, Always), if any."""
    for container in (pod.get("status") or {}).get("containerStatuses") or []:
        ended = (container.get("lastState") or {}).get("terminated") or {}
        if ended.get("exitCode") not in (None, 0):
            return PodFailure(pod["metadata"]["name"], container.get("name"), ended.get("exitCode"),
                              ended.get("reason") or "Error", previous=True)
    return None


def killed(pod: dict[str, Any]) -> bool:
    """Whether the pod failed because it was deleted (its containers ended after the
    deletion was asked: killed by it), not on its own before."""
    metadata = pod.get("metadata") or {}
    deleted = _time(metadata.get("deletionTimestamp"))
    if deleted is None:
        return False
    asked = deleted.timestamp() - float(metadata.get("deletionGracePeriodSeconds") or 0)
    ends = [found.timestamp() for c in (pod.get("status") or {}).get("containerStatuses") or []
            if (found := _time(((c.get("state") or {}).get("terminated") or {}).get("finishedAt")))]
    return not ends or max(ends) >= asked - 1.0


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
