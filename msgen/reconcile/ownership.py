"""Which pods are a job's: the ones its own workloads made, or its own bare Pods as rendered.

Labels are no proof: in a namespace several teams share, anyone who may create a pod can give
it the `training.kubeflow.org/*` labels of another job's worker 0 and a Succeeded phase, and a
reconciler that trusted them would judge that job Succeeded and delete its running pods. So a
pod counts only when
- a workload of the job (one carrying its run-policy) controls it, directly (Jobs,
  StatefulSets, Volcano Jobs) or through an object that workload controls (the JobSet
  Trainer builds for a TrainJob, and its Jobs, watched by the msgen labels the runtime gives
  them; a JobSet's Jobs, which carry no msgen label: known by the JobSet's naming,
  `<jobset>-<replicated job>-<i>`, and its `jobset.sigs.k8s.io/jobset-name` label), by
  `ownerReferences` with `controller`;
- or, for bare Pods (`--target pod`), it carries the job's own `msgen/run-policy`, character for
  character, and the name msgen rendered for it (`<job>-<role>-<index>`).
Annotations are no proof either: anyone who may create a Job there can copy a job's
run-policy onto one of their own, whose pods would then judge the job. So a workload is the
job's only when it is of the kind its target renders and has a name msgen renders for it
(`rendered_workload`), and its policy names the job it is labelled with. Names are read, never
enumerated: a policy may claim two billion replicas.
Pure: plain dicts in, as the API server returns them.
"""

from __future__ import annotations

from typing import Any

from ..model import run_policy
from ..model.run_policy import JobPolicy
from ..targets import facts_of

JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    found = obj.get("metadata")
    return found if isinstance(found, dict) else {}


def policy_text(obj: dict[str, Any]) -> str | None:
    annotations = _metadata(obj).get("annotations")
    found = annotations.get(run_policy.ANNOTATION) if isinstance(annotations, dict) else None
    return found if isinstance(found, str) else None


def _controller(obj: dict[str, Any]) -> dict[str, Any] | None:
    for owner in _metadata(obj).get("ownerReferences") or []:
        if isinstance(owner, dict) and owner.get("controller") is True:
            return owner
    return None


#: The workload each target renders, as (API group, kind) (the tests hold it to the targets).
WORKLOAD_KINDS = {
    "indexed-job": ("batch", "Job"),
    "pod": ("", "Pod"),
    "statefulset": ("apps", "StatefulSet"),
    "jobset": ("jobset.x-k8s.io", "JobSet"),
    "volcano": ("batch.volcano.sh", "Job"),
    "trainjob": ("trainer.kubeflow.org", "TrainJob"),
}
#: How a workload's name is made: the job's name (one workload), `<job>-<role>` (one per
#: role), `<job>-<role>-<index>` (one per pod: bare Pods, a job needing static indexes).
WHOLE_JOB, PER_ROLE, PER_POD = "job", "role", "pod"


def _rendered_index(name: str, prefix: str, replicas: int) -> int | None:
    """i when `name` is `<prefix><i>`, 0 <= i < replicas, written as msgen writes it."""
    digits = name[len(prefix):] if name.startswith(prefix) else ""
    if not (0 < len(digits) <= 19 and digits.isascii() and digits.isdigit()) or digits != str(int(digits)):
        return None
    return int(digits) if int(digits) < replicas else None


def rendered_pod_name(policy: JobPolicy, name: str) -> bool:
    """Whether `name` is one of the bare Pods msgen renders for the job (targets/pod.py)."""
    return any(_rendered_index(name, f"{policy.job}-{role.lower()}-", rule.replicas) is not None
               for role, rule in policy.roles.items())


def rendered_workload(policy: JobPolicy, job: str, obj: dict[str, Any]) -> str | None:
    """How `obj` is named if it is a workload msgen renders for `policy`, which its label says
    is job `job` (WHOLE_JOB, PER_ROLE or PER_POD); None when it cannot be one."""
    api_version, name = str(obj.get("apiVersion") or ""), _metadata(obj).get("name")
    if policy.job != job or not isinstance(name, str) or policy.target not in WORKLOAD_KINDS:
        return None
    if (api_version.rpartition("/")[0], obj.get("kind")) != WORKLOAD_KINDS[policy.target]:
        return None
    facts = facts_of(policy.target)
    if facts.bare_pods:
        return PER_POD if rendered_pod_name(policy, name) else None
    if not facts.workload_per_role:
        return WHOLE_JOB if name == job else None
    if any(name == f"{job}-{role.lower()}" for role in policy.roles):
        return PER_ROLE
    return PER_POD if facts.static_indexes and rendered_pod_name(policy, name) else None


def owned_pods(
    policy: JobPolicy,
    text: str,
    workloads: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    pods: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The pods among `pods` that are the job's (see the module's docstring). `text` is the
    job's run-policy annotation as its workloads carry it; `objects`, everything watched."""
    if facts_of(policy.target).bare_pods:
        return [p for p in pods if policy_text(p) == text and rendered_pod_name(policy, str(_metadata(p).get("name")))]
    trusted = {str(_metadata(w).get("uid")) for w in workloads if _metadata(w).get("uid")}
    jobsets = {str(_metadata(w).get("name")) for w in workloads if w.get("kind") == "JobSet"}
    grown = True
    while grown:  # objects the job's workloads control, and theirs (bounded by `objects`)
        grown = False
        for obj in objects:
            uid = _metadata(obj).get("uid")
            owner = _controller(obj)
            if uid and str(uid) not in trusted and owner and str(owner.get("uid")) in trusted:
                trusted.add(str(uid))
                grown = True
    return [p for p in pods if _owned(p, trusted, jobsets, policy)]


def _owned(pod: dict[str, Any], trusted: set[str], jobsets: set[str], policy: JobPolicy) -> bool:
    owner = _controller(pod)
    if owner is None:
        return False
    if str(owner.get("uid")) in trusted and owner.get("uid"):
        return True
    labels = _metadata(pod).get("labels") or {}
    jobset = labels.get(JOBSET_NAME_LABEL) if isinstance(labels, dict) else None
    if jobset not in jobsets or owner.get("kind") != "Job" or owner.get("apiVersion") != "batch/v1":
        return False
    name = str(owner.get("name"))
    return any(name.startswith(f"{jobset}-{role.lower()}-") and name.rsplit("-", 1)[-1].isdigit()
               for role in policy.roles)


class Disagreeing(run_policy.PolicyError):
    """The job's workloads carry different run-policies: which one is the job's own is not
    known, so nothing is done for it (one may be another tenant's forgery)."""
