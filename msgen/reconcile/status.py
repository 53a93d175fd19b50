"""A job's aggregated status, computed from the objects the cluster reports, on every target.

The operators kept `MSJob.status` (conditions Created / Running / Succeeded / Failed, per-role
replica counts, start and completion times). With no operator, msgen recomputes it from the
live workloads and pods, by the MSJob's own rules:

- success: worker 0 succeeded (the default `successPolicy`) or every worker did
  (`AllWorkers`), or the Scheduler did (MXNet's operators); a job without workers succeeds
  when every pod of every role has. A pod
  rule, so it holds on targets whose workload cannot say it (bare Pods, Volcano, Jobs
  before Kubernetes 1.31) and agrees with the targets that can.
- failure: what a workload with its own job status says (a Job's `Failed` condition with
  its reason, such as BackoffLimitExceeded or DeadlineExceeded; a JobSet's `Failed`; a
  Volcano Job's Failed or Aborted phase). Bare Pods have no such status, so there the rules
  are applied here: a failed pod of a role that does not restart (`Never`, and `ExitCode`,
  which bare Pods run as `Never`) fails the job, except a Worker's when
  `enableDynamicWorker` is set; container restarts of restarting pods beyond
  `backoffLimit` fail it as BackoffLimitExceeded (kubeflow's rule for OnFailure pods).

Pure: plain dicts in (as the API server returns them), a value out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..run_policy import WORKER0, RunPolicy
from ..targets.labels import REPLICA_INDEX, REPLICA_TYPE

#: Where a pod's index inside its role is found, by target (first match wins).
_INDEX_LABELS = (
    REPLICA_INDEX,
    "batch.kubernetes.io/job-completion-index",
    "apps.kubernetes.io/pod-index",
    "volcano.sh/task-index",
)
_NO_RESTART = ("Never", "ExitCode")


@dataclass(frozen=True)
class Condition:
    type: str
    reason: str
    message: str = ""
    time: str | None = None


@dataclass
class RoleCounts:
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0


@dataclass(frozen=True)
class PodFailure:
    """Why a pod failed, for the user: which container, its exit code and reason."""

    pod: str
    container: str | None
    exit_code: int | None
    reason: str


@dataclass
class JobStatus:
    job: str
    #: Created, Running, Succeeded or Failed
    phase: str
    conditions: list[Condition] = field(default_factory=list)
    replicas: dict[str, RoleCounts] = field(default_factory=dict)
    start_time: str | None = None
    completion_time: str | None = None
    failures: list[PodFailure] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    def to_dict(self) -> dict[str, Any]:
        """The shape of MSJob.status, for `msgen status -o yaml|json` and the controller."""
        out: dict[str, Any] = {
            "conditions": [
                {k: v for k, v in (("type", c.type), ("status", "True"), ("reason", c.reason),
                                   ("message", c.message), ("lastTransitionTime", c.time)) if v}
                for c in self.conditions
            ],
            "replicaStatuses": {
                role: {k: v for k, v in vars(counts).items() if v}
                for role, counts in self.replicas.items()
            },
        }
        if self.start_time:
            out["startTime"] = self.start_time
        if self.completion_time:
            out["completionTime"] = self.completion_time
        return out


def pod_role(pod: dict[str, Any], policy: RunPolicy) -> str | None:
    key = (pod.get("metadata", {}).get("labels") or {}).get(REPLICA_TYPE)
    for name in policy.roles:
        if name.lower() == key:
            return name
    return None


def pod_index(pod: dict[str, Any]) -> int | None:
    metadata = pod.get("metadata", {})
    for where in (metadata.get("labels") or {}, metadata.get("annotations") or {}):
        for key in _INDEX_LABELS:
            if key in where:
                try:
                    return int(where[key])
                except ValueError:
                    return None
    return None


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def pod_failure(pod: dict[str, Any]) -> PodFailure:
    """The first terminated container that failed, or the pod's own reason."""
    status = pod.get("status") or {}
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        last = container.get("lastState") or {}
        ended = state.get("terminated") or last.get("terminated")
        if ended and ended.get("exitCode", 0) != 0:
            return PodFailure(
                pod["metadata"]["name"], container.get("name"), ended.get("exitCode"),
                ended.get("reason") or "Error",
            )
    return PodFailure(pod["metadata"]["name"], None, None, status.get("reason") or "Failed")


def _workload_verdict(obj: dict[str, Any]) -> tuple[str, str, str] | None:
    """(Succeeded|Failed, reason, message) when a workload with its own job status ended."""
    status = obj.get("status") or {}
    if _batch_job(obj) or obj.get("kind") == "JobSet":
        for cond in status.get("conditions") or []:
            if cond.get("status") != "True":
                continue
            if cond.get("type") == "Failed":
                return "Failed", cond.get("reason") or "Failed", cond.get("message") or ""
            if cond.get("type") in ("Complete", "Completed"):
                return "Succeeded", cond.get("reason") or "Completed", cond.get("message") or ""
    elif obj.get("apiVersion", "").startswith("batch.volcano.sh/"):
        phase = (status.get("state") or {}).get("phase")
        if phase in ("Failed", "Aborted", "Terminated"):
            return "Failed", phase, (status.get("state") or {}).get("message") or ""
        if phase == "Completed":
            return "Succeeded", "Completed", ""
    return None


def _workload_role(obj: dict[str, Any], policy: RunPolicy) -> str | None:
    """A Job's role, from the labels of the pods it makes."""
    template = (obj.get("spec") or {}).get("template") or {}
    return pod_role(template, policy)


def aggregate(
    policy: RunPolicy, workloads: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> JobStatus:
    """The job's status from its live workloads and pods."""
    status = JobStatus(job=policy.job, phase="Created")
    status.replicas = {role: RoleCounts() for role in policy.roles}
    succeeded: dict[str, set[int]] = {role: set() for role in policy.roles}
    restarts = 0
    for pod in pods:
        role = pod_role(pod, policy)
        if role is None:
            continue
        phase = _phase(pod)
        counts = status.replicas[role]
        if phase == "Running":
            counts.running += 1
        elif phase == "Succeeded":
            counts.succeeded += 1
            index = pod_index(pod)
            succeeded[role].add(index if index is not None else len(succeeded[role]))
        elif phase == "Failed":
            counts.failed += 1
            status.failures.append(pod_failure(pod))
        else:
            counts.pending += 1
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            restarts += int(container.get("restartCount") or 0)
    status.start_time = _earliest(
        [w.get("metadata", {}).get("creationTimestamp") for w in workloads]
        + [(p.get("status") or {}).get("startTime") for p in pods]
    )
    if status.start_time:
        status.conditions.append(Condition("Created", "JobCreated", time=status.start_time))
    if any(c.running for c in status.replicas.values()):
        status.phase = "Running"
        status.conditions.append(Condition("Running", "JobRunning"))
    verdict = _verdict(policy, workloads, pods, succeeded, restarts)
    if verdict is not None:
        status.phase, reason, message = verdict
        status.completion_time = _latest_end(workloads, pods)
        status.conditions.append(
            Condition(status.phase, reason, message, time=status.completion_time)
        )
    return status


def _verdict(
    policy: RunPolicy,
    workloads: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    succeeded: dict[str, set[int]],
    restarts: int,
) -> tuple[str, str, str] | None:
    worker = policy.worker_type()
    for obj in workloads:
        found = _workload_verdict(obj)
        if found is not None and found[0] == "Failed":
            role = _workload_role(obj, policy)
            if not (role == worker and policy.enable_dynamic_worker and _batch_job(obj)):
                return "Failed", found[1], found[2] or f"{obj.get('kind')} {_name(obj)} failed"
    if policy.target == "pod":
        failed = _pod_target_failure(policy, pods, restarts)
        if failed is not None:
            return failed
    decider = policy.deciding_type()
    if decider is not None:
        needed = 1 if policy.success_policy == WORKER0 else policy.roles[decider].replicas
        done = succeeded[decider]
        if (0 in done and needed == 1) or (needed > 1 and len(done) >= needed):
            if decider != worker:
                how = f"{decider.lower()} 0"
            else:
                how = "worker 0" if needed == 1 else f"all {needed} workers"
            return "Succeeded", "JobSucceeded", f"{how} succeeded"
    elif all(len(succeeded[r]) >= rule.replicas for r, rule in policy.roles.items()):
        return "Succeeded", "JobSucceeded", "every pod succeeded"
    # Pods may be gone (cleanPodPolicy All): a workload that completed still says so.
    ended = [(obj, _workload_verdict(obj)) for obj in workloads]
    complete = [obj for obj, found in ended if found is not None and found[0] == "Succeeded"]
    for obj in complete:
        if not _batch_job(obj) or (decider is not None and _workload_role(obj, policy) == decider):
            return "Succeeded", "JobSucceeded", f"{obj.get('kind')} {_name(obj)} completed"
    jobs = [obj for obj in workloads if _batch_job(obj)]
    if decider is None and jobs and len([o for o in complete if _batch_job(o)]) == len(jobs):
        return "Succeeded", "JobSucceeded", "every Job completed"
    return None


def _pod_target_failure(
    policy: RunPolicy, pods: list[dict[str, Any]], restarts: int
) -> tuple[str, str, str] | None:
    """Bare Pods: the operators' failure rules, which no workload applies for them."""
    worker = policy.worker_type()
    for pod in pods:
        role = pod_role(pod, policy)
        if role is None or _phase(pod) != "Failed":
            continue
        if role == worker and policy.enable_dynamic_worker:
            continue
        if policy.roles[role].restart_policy in _NO_RESTART:
            failure = pod_failure(pod)
            reason = "DeadlineExceeded" if failure.reason == "DeadlineExceeded" else "PodFailed"
            return "Failed", reason, f"pod {failure.pod} failed ({failure.reason})"
    if policy.backoff_limit is not None and restarts > policy.backoff_limit:
        return (
            "Failed", "BackoffLimitExceeded",
            f"containers restarted {restarts} times, more than backoffLimit {policy.backoff_limit}",
        )
    return None


def _batch_job(obj: dict[str, Any]) -> bool:
    """A Kubernetes Job (batch/v1), not a Volcano Job (also of kind Job)."""
    return obj.get("kind") == "Job" and str(obj.get("apiVersion", "")).startswith("batch/")


def _name(obj: dict[str, Any]) -> str:
    return str(obj.get("metadata", {}).get("name"))


def _earliest(times: list[Any]) -> str | None:
    found = sorted(t for t in times if isinstance(t, str) and t)
    return found[0] if found else None


def _latest_end(workloads: list[dict[str, Any]], pods: list[dict[str, Any]]) -> str | None:
    times: list[str] = []
    for obj in workloads:
        status = obj.get("status") or {}
        times += [t for t in (status.get("completionTime"),) if isinstance(t, str)]
        times += [c["lastTransitionTime"] for c in status.get("conditions") or []
                  if c.get("type") in ("Complete", "Completed", "Failed")
                  and isinstance(c.get("lastTransitionTime"), str)]
    for pod in pods:
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            ended = (container.get("state") or {}).get("terminated") or {}
            if isinstance(ended.get("finishedAt"), str):
                times.append(ended["finishedAt"])
    return max(times) if times else None
