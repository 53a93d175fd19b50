"""A job's aggregated status, computed from the objects the cluster reports, on every target.

The operators kept `MSJob.status` (conditions Created / Running / Succeeded / Failed, per-role
replica counts, start and completion times). With no operator, msgen recomputes it from the
live workloads and pods, by the MSJob's own rules:

- success: worker 0 succeeded (the default `successPolicy`) or every worker did
  (`AllWorkers`), or the Scheduler did (MXNet's operators); a job without workers succeeds
  when every pod of every role has. A pod
  rule, so it holds on targets whose workload cannot say it (bare Pods, Volcano, Jobs
  before Kubernetes 1.31) and agrees with the targets that can.
  Where the workload decides success itself (an Indexed Job with a `successPolicy`, or
  one that completes when the role's needed pods have), its verdict (`SuccessCriteriaMet`,
  `Complete`) is waited for, so msgen never says Succeeded for a Job Kubernetes then fails.
  A Kubeflow Trainer TrainJob is the whole job's verdict: its `Complete` or `Failed`
  condition (Trainer's controller copies its JobSet's, and adds `Failed` at its own deadline)
  is the job's end, whatever the pods show before it.
- failure: what a workload with its own job status says, from the moment it decides (a
  Job's `FailureTarget`, then `Failed`, with its reason, such as BackoffLimitExceeded,
  DeadlineExceeded or FailedIndexes; a JobSet's `Failed`; a Volcano Job's Failed, Aborted,
  Terminating or Terminated phase). Bare Pods have no such status, so there the rules are applied here: a failed pod
  of a role that does not restart (`Never`, and `ExitCode`, which bare Pods run as `Never`)
  fails the job, except a Worker's when `enableDynamicWorker` is set; container restarts
  of restarting pods beyond `backoffLimit` fail it as BackoffLimitExceeded (kubeflow's rule
  for OnFailure pods); a pod deleted before the job ended fails it (no operator re-creates
  it). A pod that failed because it was deleted once the job had ended (cleanPodPolicy
  stopping it) is no failure: success is judged before such a pod. Where each role's Job
  counts its own failures against backoffLimit, they are counted across the job too
  (`retries`), as ms-operator counted them.
- times: each condition's time comes from the objects (creation, the first container
  start, the end), so `msgen status` shows them with no controller, in order.

Pure: plain dicts in (as the API server returns them), a value out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model.plan import WORKER0
from ..model.run_policy import JobPolicy
from ..targets import facts_of
from .pods import PodFailure, killed, pod_failure, pod_index, pod_role, restarted
from .retries import past_backoff_limit, past_own_backoff_limit

__all__ = ["PodFailure", "JobStatus", "aggregate", "pod_failure", "pod_index", "pod_role"]

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


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _workload_verdict(obj: dict[str, Any]) -> tuple[str, str, str] | None:
    """(Succeeded|Failed, reason, message) when a workload with its own job status ended."""
    status = obj.get("status") or {}
    if _batch_job(obj) or obj.get("kind") == "JobSet" or _train_job(obj):
        # FailureTarget and SuccessCriteriaMet: the Job controller has decided, and ends
        # the Job once its pods are gone (up to their grace period later).
        for cond in status.get("conditions") or []:
            if cond.get("status") != "True":
                continue
            if cond.get("type") in ("Failed", "FailureTarget"):
                return "Failed", cond.get("reason") or "Failed", cond.get("message") or ""
            if cond.get("type") in ("Complete", "Completed", "SuccessCriteriaMet"):
                return "Succeeded", cond.get("reason") or "Completed", cond.get("message") or ""
    elif obj.get("apiVersion", "").startswith("batch.volcano.sh/"):
        phase = (status.get("state") or {}).get("phase")
        # Terminating: Volcano has decided (TerminateJob) and stops the pods, as a Job's
        # FailureTarget; a pod on a lost node ends only when its node is back, and the job
        # would read Running until then.
        if phase in ("Failed", "Aborted", "Terminated", "Terminating"):
            return "Failed", phase, (status.get("state") or {}).get("message") or ""
        if phase == "Completed":
            return "Succeeded", "Completed", ""
    return None


def shows_end(obj: dict[str, Any]) -> bool:
    """Whether `obj` shows an end its job's verdict or policies may follow from: a pod that
    Succeeded or Failed, a workload with its own verdict. The controller queues a job whose
    object first shows one ahead of every other change (`workqueue.URGENT`)."""
    if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
        return _phase(obj) in ("Succeeded", "Failed")
    return _workload_verdict(obj) is not None


def _workload_role(obj: dict[str, Any], policy: JobPolicy) -> str | None:
    """A Job's role, from the labels of the pods it makes."""
    template = (obj.get("spec") or {}).get("template") or {}
    return pod_role(template, policy)


def aggregate(
    policy: JobPolicy, workloads: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> JobStatus:
    """The job's status from its live workloads and pods."""
    status = JobStatus(job=policy.job, phase="Created")
    status.replicas = {role: RoleCounts() for role in policy.roles}
    succeeded: dict[str, set[int]] = {role: set() for role in policy.roles}
    restarts = 0
    stopped: list[dict[str, Any]] = []
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
        elif phase == "Failed" and killed(pod):
            stopped.append(pod)  # judged after success: see _verdict
        elif phase == "Failed":
            counts.failed += 1
            status.failures.append(pod_failure(pod))
        else:
            counts.pending += 1
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            restarts += int(container.get("restartCount") or 0)
    for obj in workloads:  # an index its Job counts as succeeded, whose pod may be gone since
        role = _workload_role(obj, policy) if _batch_job(obj) else None
        if role in succeeded:
            succeeded[role] |= completed_indexes(obj, policy.roles[role].replicas)
    status.start_time = _earliest(
        [w.get("metadata", {}).get("creationTimestamp") for w in workloads]
        + [(p.get("status") or {}).get("startTime") for p in pods]
    )
    if status.start_time:
        status.conditions.append(Condition("Created", "JobCreated", time=status.start_time))
    if any(c.running for c in status.replicas.values()):
        status.phase = "Running"
        status.conditions.append(Condition("Running", "JobRunning", time=_first_run(policy, pods)))
    verdict = _verdict(policy, workloads, pods, succeeded, restarts, stopped)
    if verdict is not None:
        status.phase, reason, message = verdict
        status.completion_time = _latest_end(workloads, pods)
        status.conditions.append(
            Condition(status.phase, reason, message, time=status.completion_time)
        )
        if status.phase == "Failed":
            _explain(status, pods, stopped, policy)
    return status


def completed_indexes(obj: dict[str, Any], replicas: int) -> set[int]:
    """The indexes below `replicas` an Indexed Job's own status counts as succeeded
    (`status.completedIndexes`, "0,2-4"). The Job keeps them when the pods are gone (deleted
    by someone, or by the pod garbage collector while the controller could not see them), so
    worker 0's success is still known from it. Anything unreadable counts for nothing."""
    text = (obj.get("status") or {}).get("completedIndexes")
    if not isinstance(text, str) or len(text) > 4096 or (obj.get("spec") or {}).get("completionMode") != "Indexed":
        return set()
    found: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not all(n.isascii() and n.isdigit() for n in ([first, last] if dash else [first])):
            return set()
        low, high = int(first), int(last or first)
        found.update(range(low, min(high, replicas - 1) + 1))
    return found


def _explain(status: JobStatus, pods: list[dict[str, Any]], stopped: list[dict[str, Any]],
             policy: JobPolicy) -> None:
    """A failed job with no failed pod to show (OnFailure containers restarted in place
    until the limit, or pods being deleted): the containers that failed, for their exit
    codes and logs."""
    if status.failures:
        return
    for pod in pods:
        found = restarted(pod) if pod_role(pod, policy) is not None else None
        if found is not None:
            status.failures.append(found)
    if not status.failures:
        status.failures = [pod_failure(p) for p in stopped]


def _first_run(policy: JobPolicy, pods: list[dict[str, Any]]) -> str | None:
    """When the job's first container started: the Running condition's time."""
    times = []
    for pod in pods:
        if pod_role(pod, policy) is None:
            continue
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            for state in ((container.get("state") or {}), (container.get("lastState") or {})):
                for key in ("running", "terminated"):
                    started = (state.get(key) or {}).get("startedAt")
                    if isinstance(started, str) and started:
                        times.append(started)
    return min(times) if times else None


def _verdict(  # noqa: C901 - the operators' status rules, one branch per condition, in their order
    policy: JobPolicy,
    workloads: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    succeeded: dict[str, set[int]],
    restarts: int,
    stopped: list[dict[str, Any]],
) -> tuple[str, str, str] | None:
    worker = policy.worker_type()
    for obj in workloads:
        found = _workload_verdict(obj)
        if found is not None and found[0] == "Failed":
            # enableDynamicWorker too: the Worker Job's own FailedIndexes is what anyone
            # reading the Job (kubectl wait, Argo CD) sees; msgen says the same.
            return "Failed", found[1], found[2] or f"{obj.get('kind')} {_name(obj)} failed"
    for obj in workloads:
        if _train_job(obj):  # its conditions are the job's end: nothing else is judged
            found = _workload_verdict(obj)
            return None if found is None else ("Succeeded", "JobSucceeded", f"TrainJob {_name(obj)} completed")
    if facts_of(policy.target).retries_counted_per_role:
        past = past_backoff_limit(policy, workloads, pods)
        if past is not None:
            return past
        if not _succeeded_by_pods(policy, succeeded):  # else the Job may have met its success first
            past = past_own_backoff_limit(workloads, pods)
            if past is not None:
                return past
    if facts_of(policy.target).bare_pods:
        failed = _pod_target_failure(policy, pods, restarts)
        if failed is not None:
            return failed
    decider = policy.deciding_type()
    if decider is not None:
        needed = 1 if policy.success_policy == WORKER0 else policy.roles[decider].replicas
        deciding_jobs = [o for o in workloads if _job_decides(o, policy, decider, needed)]
        if deciding_jobs:
            pass  # the Job's own verdict, below, once Kubernetes has reached it
        elif any(_has_failed_indexes(o, policy, decider) for o in workloads):
            pass  # it fails once its other indexes end (FailedIndexes): its verdict, as above
        elif _succeeded_by_pods(policy, succeeded):
            if decider != worker:
                how = f"{decider.lower()} 0"
            else:
                how = "worker 0" if needed == 1 else f"all {needed} workers"
            return "Succeeded", "JobSucceeded", f"{how} succeeded"
    elif _succeeded_by_pods(policy, succeeded):
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
    if facts_of(policy.target).bare_pods and stopped:
        pod = pod_failure(stopped[0])
        return "Failed", "PodDeleted", f"pod {pod.pod} was deleted before the job ended"
    return None


def _succeeded_by_pods(policy: JobPolicy, succeeded: dict[str, set[int]]) -> bool:
    """Whether the pods (and the indexes their Jobs counted) show the job's success rule met."""
    decider = policy.deciding_type()
    if decider is None:
        return all(len(succeeded[r]) >= rule.replicas for r, rule in policy.roles.items())
    needed = 1 if policy.success_policy == WORKER0 else policy.roles[decider].replicas
    done = succeeded[decider]
    return (0 in done and needed == 1) or (needed > 1 and len(done) >= needed)


def _has_failed_indexes(obj: dict[str, Any], policy: JobPolicy, decider: str) -> bool:
    """Whether this Indexed Job of the deciding role has an index past its own retry limit
    (`backoffLimitPerIndex`, as msgen writes it for enableDynamicWorker): Kubernetes fails it
    once its other indexes end, worker 0's success notwithstanding (seen on 1.30, where msgen
    writes it no successPolicy)."""
    return (_batch_job(obj) and _workload_role(obj, policy) == decider
            and bool((obj.get("status") or {}).get("failedIndexes")))


def _job_decides(obj: dict[str, Any], policy: JobPolicy, decider: str, needed: int) -> bool:
    """Whether this Indexed Job of the deciding role ends on the job's success rule by
    itself (its successPolicy, or completing once its `needed` pods have)."""
    spec = obj.get("spec") or {}
    if not _batch_job(obj) or spec.get("completionMode") != "Indexed" or _workload_role(obj, policy) != decider:
        return False
    return bool(spec.get("successPolicy")) or int(spec.get("completions") or 0) == needed


def _pod_target_failure(
    policy: JobPolicy, pods: list[dict[str, Any]], restarts: int
) -> tuple[str, str, str] | None:
    """Bare Pods: the operators' failure rules, which no workload applies for them."""
    worker = policy.worker_type()
    for pod in pods:
        role = pod_role(pod, policy)
        if role is None or _phase(pod) != "Failed" or killed(pod):
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


def _train_job(obj: dict[str, Any]) -> bool:
    """A Kubeflow Trainer TrainJob, whose controller sets Complete or Failed at the job's end."""
    return obj.get("kind") == "TrainJob" and str(obj.get("apiVersion", "")).startswith("trainer.kubeflow.org/")


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
                  if c.get("type") in ("Complete", "Completed", "Failed", "FailureTarget", "SuccessCriteriaMet")
                  and isinstance(c.get("lastTransitionTime"), str)]
    for pod in pods:
        for container in (pod.get("status") or {}).get("containerStatuses") or []:
            ended = (container.get("state") or {}).get("terminated") or {}
            if isinstance(ended.get("finishedAt"), str):
                times.append(ended["finishedAt"])
    return max(times) if times else None
