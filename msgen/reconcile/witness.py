"""What a follower (`apply --wait`, `status --watch`) saw happen to a job's pods that the
cluster may not keep until the job's end: a failed container's last log lines (the kubelet
drops them once the pod is deleted, and the Job controller deletes a restarting pod when it
fails the Job), and pods deleted while they ran (gone by the end, they would leave a failed
job with no pod to show)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .pods import PodFailure, killed, pod_failure, restarted
from .status import JobStatus

#: At most this many containers' logs are kept (a job whose pods all fail shows three).
_KEPT = 10


class Witness:
    def __init__(self, fetch: Callable[[PodFailure], list[str]]) -> None:
        self.fetch = fetch
        self.logs: dict[tuple[str, str | None], tuple[int, list[str]]] = {}
        #: the containers whose failure was seen, by (pod, container), as first seen
        self.failed: dict[tuple[str, str | None], PodFailure] = {}
        self.deleted: dict[str, PodFailure] = {}

    def saw(self, pods: list[dict[str, Any]]) -> None:
        for pod in pods:
            metadata, state = pod.get("metadata") or {}, pod.get("status") or {}
            phase = state.get("phase") or "Pending"
            deleting = bool(metadata.get("deletionTimestamp"))
            if deleting and (phase in ("Pending", "Running") or (phase == "Failed" and killed(pod))):
                self.deleted.setdefault(str(metadata.get("name")), PodFailure(
                    str(metadata.get("name")), None, None, "deleted while it ran"))
            # A pod being deleted keeps its containers until it is gone: a failed one's log is
            # read then, when the deletion came before the follower saw the failure (the Job
            # controller of Kubernetes 1.30 deleted a restarting pod on the status that
            # showed its restart). A container the deletion killed is no failure to show.
            ended = phase == "Failed" and not (deleting and killed(pod))
            failure = restarted(pod) or (pod_failure(pod) if ended else None)
            if failure is None:
                continue
            # The log of the instance that failed last: a container that failed again since
            # its restart has its current instance ended (the kubelet keeps only the newest
            # ended instance, so the one before it may be gone already).
            last = pod_failure(pod) if failure.previous else failure
            last = last if last.container == failure.container else failure
            count = sum(int(c.get("restartCount") or 0) for c in state.get("containerStatuses") or [])
            key = (failure.pod, failure.container)
            if (key in self.logs and self.logs[key][0] >= count) or (key not in self.logs and len(self.logs) >= _KEPT):
                continue
            self.failed.setdefault(key, failure)
            found = self.fetch(last)
            if key in self.logs and _none(found):  # the kubelet no longer has it: keep what was read
                continue
            self.logs[key] = (count, found)

    def log_of(self, failure: PodFailure) -> list[str] | None:
        found = self.logs.get((failure.pod, failure.container))
        return found[1] if found is not None and not _none(found[1]) else None

    def explain(self, found: JobStatus) -> None:
        """A failed job with no failed pod left: the containers seen failing before their pods
        went (the Job controller deletes a restarting pod when it fails the Job), then the
        other pods deleted while they ran."""
        if found.phase == "Failed" and not found.failures:
            seen = list(self.failed.values())
            found.failures = seen + [f for name, f in self.deleted.items() if name not in {s.pod for s in seen}]


def _none(lines: list[str]) -> bool:
    """Whether `lines` are the fetcher's "no log lines" (or nothing)."""
    return not lines or "(no log lines" in lines[0]
