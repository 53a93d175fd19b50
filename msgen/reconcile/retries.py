"""`runPolicy.backoffLimit` counted across the whole job, as ms-operator counted it.

msgen writes the job's backoffLimit on each role's Job, and each Job counts only its own
failures: a job with a Scheduler and Workers could be retried backoffLimit times per role.
ms-operator (kubeflow/common `PastBackoffLimit`) counted the whole job. Where the target's
workloads count per role (`Facts.retries_counted_per_role`), the reconciler adds the roles'
counts up here and fails the job once the sum passes the limit; the clean-up policy then
stops it (`actions`).

What counts is what a Job counts against its backoffLimit: its failed pods (the Job's
`status.failed`, or the role's failed pods when that is more) and the container restarts of
its pods (restart policy OnFailure). Pods killed by a deletion are no failures, and the
Workers of a job with enableDynamicWorker are left out (each has its own limit).

A Job whose own limit a failed pod has passed is failed here too, before Kubernetes' Job
controller says so (`past_own_backoff_limit`): its verdict, as the controller will write it,
cannot be another, and waiting for it held a failed job's verdict and cleanPodPolicy for as
long as the Job controller was behind (a minute after an API server restart; 2.3 s at the
median on a loaded machine).

Pure: plain dicts in (as the API server returns them), a value out.
"""

from __future__ import annotations

from typing import Any

from ..model.run_policy import JobPolicy
from .ownership import selected_by
from .pods import killed, pod_role


def failures_by_role(
    policy: JobPolicy, workloads: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> dict[str, int]:
    """Each counted role's failures so far (roles without any are left out)."""
    worker = policy.worker_type()
    counted = [r for r in policy.roles if not (policy.enable_dynamic_worker and r == worker)]
    failed_pods = dict.fromkeys(counted, 0)
    restarts = dict.fromkeys(counted, 0)
    for pod in pods:
        role = pod_role(pod, policy)
        if role not in failed_pods:
            continue
        status = pod.get("status") or {}
        if status.get("phase") == "Failed" and not killed(pod):
            failed_pods[role] += 1
        for container in status.get("containerStatuses") or []:
            restarts[role] += int(container.get("restartCount") or 0)
    by_jobs = dict.fromkeys(counted, 0)
    for obj in workloads:
        role = _job_role(obj, policy)
        if role in by_jobs:
            by_jobs[role] += int((obj.get("status") or {}).get("failed") or 0)
    found = {r: max(failed_pods[r], by_jobs[r]) + restarts[r] for r in counted}
    return {role: count for role, count in found.items() if count}


def past_backoff_limit(
    policy: JobPolicy, workloads: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> tuple[str, str, str] | None:
    """("Failed", reason, message) once the job's failures, over all its roles, pass its
    backoffLimit; None before, or without a limit."""
    limit = policy.backoff_limit
    if limit is None:
        return None
    found = failures_by_role(policy, workloads, pods)
    total = sum(found.values())
    if total <= limit or len(found) < 2:
        return None  # within the limit, or one role's: its own Job judges it
    each = ", ".join(f"{role} {count}" for role, count in found.items())
    return (
        "Failed", "BackoffLimitExceeded",
        f"{total} failures across the job's roles ({each}), more than backoffLimit {limit}, "
        "which counts the whole job (each role's Job counts only its own)",
    )


def _job_role(obj: dict[str, Any], policy: JobPolicy) -> str | None:
    """A batch Job's role, from the labels of the pods it makes."""
    if obj.get("kind") != "Job" or not str(obj.get("apiVersion", "")).startswith("batch/"):
        return None
    template = (obj.get("spec") or {}).get("template") or {}
    return pod_role(template, policy)


#: What Kubernetes' Job controller writes on a Job whose failed pods passed its backoffLimit
#: (pkg/controller/job/job_controller.go, `batch.JobReasonBackoffLimitExceeded`): the verdict
#: reads the same whether it was seen first on the pods or on the Job.
OWN_LIMIT_REASON = "BackoffLimitExceeded"
OWN_LIMIT_MESSAGE = "Job has reached the specified backoff limit"
#: The conditions after which a Job's failed pods no longer decide it: its end, or the end
#: its controller has already reached (a SuccessCriteriaMet found first stands).
_DECIDED = ("Complete", "SuccessCriteriaMet", "Failed", "FailureTarget")


def past_own_backoff_limit(workloads: list[dict[str, Any]], pods: list[dict[str, Any]]) -> tuple[str, str, str] | None:
    """("Failed", reason, message) once a batch Job's own pods show more failures than its
    backoffLimit, where nothing else can decide it: no podFailurePolicy (which may ignore a
    failure or fail at once), no per-index limit, restartPolicy Never (no restarts counted
    in place), not suspended, no verdict of its own yet, run by Kubernetes' Job controller
    (no `managedBy`). The Job controller judges its backoffLimit before its success policy
    in each sync, so a failure it has not counted yet fails the Job even beside a success it
    reaches in the same sync; a success it reached before is ruled out by the caller (the
    pods show it). Failed pods are counted as the Job controller counts them, on the pods
    this Job controls (its `uid` as the controller owner), less those killed by a deletion;
    the Job's own `status.failed` when it has counted more."""
    for job in workloads:
        if job.get("kind") != "Job" or job.get("apiVersion") != "batch/v1":
            continue
        spec, status = job.get("spec") or {}, job.get("status") or {}
        limit = spec.get("backoffLimit")
        template = (spec.get("template") or {}).get("spec") or {}
        if (not isinstance(limit, int) or isinstance(limit, bool) or spec.get("podFailurePolicy")
                or spec.get("backoffLimitPerIndex") is not None or spec.get("managedBy") or spec.get("suspend")
                or template.get("restartPolicy") != "Never"
                or any(c.get("type") in _DECIDED and c.get("status") == "True"
                       for c in status.get("conditions") or [] if isinstance(c, dict))):
            continue
        uid = (job.get("metadata") or {}).get("uid")
        failed = sum(1 for pod in pods if uid and _controlled_by(pod, uid)
                     and (pod.get("status") or {}).get("phase") == "Failed" and not killed(pod))
        counted = status.get("failed")
        if max(failed, counted if isinstance(counted, int) else 0) > limit:
            return "Failed", OWN_LIMIT_REASON, OWN_LIMIT_MESSAGE
    return None


def _controlled_by(pod: dict[str, Any], uid: str) -> bool:
    """Whether the Job whose UID is `uid` counts `pod`: its controller owner, and its selector's
    label (a pod that claims the Job without the label is released, not counted)."""
    return selected_by(pod, uid) and any(isinstance(o, dict) and o.get("controller") is True and o.get("uid") == uid
                                         for o in (pod.get("metadata") or {}).get("ownerReferences") or [])
