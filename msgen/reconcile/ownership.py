"""Which objects are a job's: its workloads as msgen renders them, and the pods the chain of
controllers its target builds made from them.

Labels are no proof: in a namespace several teams share, anyone who may create a pod can give
it the `training.kubeflow.org/*` labels of another job's worker 0 and a Succeeded phase, and a
reconciler that trusted them would judge that job Succeeded and delete its running pods.
Annotations are no proof either: anyone who may create a Job there can copy a job's
run-policy onto one of their own. And an `ownerReference` is no proof: anyone may write one
naming any object of the namespace, its UID included, and Kubernetes does not stop it (a
tenant's Job claiming another job's StatefulSet as its controller, whose pod exits 0, would
have ended that job). So:

- a workload is the job's only when it is of the kind its target renders and has a name msgen
  renders for it (`rendered_workload`), and its policy names the job it is labelled with;
- a pod is the job's only through the chain its target declares (`Facts.chain`: TrainJob ->
  JobSet -> Job -> Pod, JobSet -> Job -> Pod, StatefulSet -> Pod, Indexed Job -> Pod, Volcano
  Job -> Pod): every link of exactly the apiVersion and kind declared, named as that link's
  controller names it from the name above it and the job's roles (`Link.named`), and
  controlled, by a controller reference of that apiVersion, kind, name and UID, by the
  object of the link above, which is itself trusted the same way; a pod of a Job also carries
  that Job's UID in its selector's label, as the Job controller requires of the pods it
  counts, and a pod's role label is the role its chain is for. An object the watches do not
  show breaks the chain: nothing is guessed;
- bare Pods (`--target pod`) are their own workloads: they carry the job's own
  `msgen/run-policy`, character for character, and the name msgen rendered (`<job>-<role>-<i>`).

Names are read, never enumerated: a policy may claim two billion replicas.
Pure: plain dicts in, as the API server returns them.
"""

from __future__ import annotations

from typing import Any

from ..model import run_policy
from ..model.run_policy import JobPolicy
from ..targets import INDEXED_POD, ORDINAL, REPLICATED_JOB, SAME_NAME, TASK_INDEX, Link, facts_of
from ..targets.labels import JOB_NAME, REPLICA_TYPE

#: The JobSet's name, on the Jobs it makes (which carry no label of msgen's on `--target jobset`).
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
#: The label of a Job's selector: the Job's UID, on every pod it counts (the older name too).
JOB_UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")
#: The longest `generateName` the API server keeps (a name is 63 at most, 5 random added).
_MAX_GENERATED_PREFIX = 58
_RANDOM_SUFFIX = 5
_RANDOM_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    found = obj.get("metadata")
    return found if isinstance(found, dict) else {}


def _labels(obj: dict[str, Any]) -> dict[str, Any]:
    found = _metadata(obj).get("labels")
    return found if isinstance(found, dict) else {}


def policy_text(obj: dict[str, Any]) -> str | None:
    annotations = _metadata(obj).get("annotations")
    found = annotations.get(run_policy.ANNOTATION) if isinstance(annotations, dict) else None
    return found if isinstance(found, str) else None


def job_named(obj: dict[str, Any]) -> str | None:
    """The job an object says it belongs to: its `training.kubeflow.org/job-name` label, or,
    for a batch/v1 Job without one, its JobSet's name (a JobSet's Jobs carry no label of
    msgen's; the JobSet is named after the job). A claim to be checked, never proof."""
    labels = _labels(obj)
    found = labels.get(JOB_NAME)
    if not found and (obj.get("apiVersion"), obj.get("kind")) == ("batch/v1", "Job"):
        found = labels.get(JOBSET_NAME_LABEL)
    return str(found) if isinstance(found, str) and found else None


def _controller(obj: dict[str, Any]) -> dict[str, Any] | None:
    for owner in _metadata(obj).get("ownerReferences") or []:
        if isinstance(owner, dict) and owner.get("controller") is True:
            return owner
    return None


#: How a workload's name is made: the job's name (one workload), `<job>-<role>` (one per
#: role), `<job>-<role>-<index>` (one per pod: bare Pods, a job needing static indexes).
WHOLE_JOB, PER_ROLE, PER_POD = "job", "role", "pod"


def _rendered_index(name: str, prefix: str, replicas: int) -> int | None:
    """i when `name` is `<prefix><i>`, 0 <= i < replicas, written as msgen writes it."""
    digits = name[len(prefix):] if name.startswith(prefix) else ""
    if not (0 < len(digits) <= 19 and digits.isascii() and digits.isdigit()) or digits != str(int(digits)):
        return None
    return int(digits) if int(digits) < replicas else None


def _indexed_role(policy: JobPolicy, name: str, prefix: str) -> str | None:
    """The role r for which `name` is `<prefix><r>-<i>`, i below r's replicas."""
    for role, rule in policy.roles.items():
        if _rendered_index(name, f"{prefix}{role.lower()}-", rule.replicas) is not None:
            return role
    return None


def rendered_pod_name(policy: JobPolicy, name: str) -> bool:
    """Whether `name` is one of the bare Pods msgen renders for the job (targets/pod.py)."""
    return _indexed_role(policy, name, f"{policy.job}-") is not None


def _workload_link(target: str) -> Link | None:
    chain = facts_of(target).chain
    return chain[0] if chain else None


def rendered_workload(policy: JobPolicy, job: str, obj: dict[str, Any]) -> str | None:
    """How `obj` is named if it is a workload msgen renders for `policy`, which its label says
    is job `job` (WHOLE_JOB, PER_ROLE or PER_POD); None when it cannot be one."""
    name, link = _metadata(obj).get("name"), _workload_link(policy.target)
    if policy.job != job or not isinstance(name, str) or link is None:
        return None
    if (obj.get("apiVersion"), obj.get("kind")) != (link.api_version, link.kind):
        return None
    return _workload_form(policy, name)[0]


#: The role of an object made for every role of the job (a whole-job workload).
EVERY_ROLE = ""


def _workload_form(policy: JobPolicy, name: str) -> tuple[str | None, str]:
    """(WHOLE_JOB, PER_ROLE, PER_POD or None; the role its name is for, EVERY_ROLE for the
    whole job)."""
    job, facts = policy.job, facts_of(policy.target)
    if facts.bare_pods:
        role = _indexed_role(policy, name, f"{job}-")
        return (PER_POD, role) if role is not None else (None, EVERY_ROLE)
    if not facts.workload_per_role:
        return (WHOLE_JOB if name == job else None), EVERY_ROLE
    for each in policy.roles:
        if name == f"{job}-{each.lower()}":
            return PER_ROLE, each
    role = _indexed_role(policy, name, f"{job}-") if facts.static_indexes else None
    return (PER_POD, role) if role is not None else (None, EVERY_ROLE)


def owned_pods(
    policy: JobPolicy,
    text: str,
    workloads: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    pods: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """The pods among `pods` that are the job's (see the module's docstring). `text` is the
    job's run-policy annotation as its workloads carry it; `objects`, everything watched."""
    chain = facts_of(policy.target).chain
    if facts_of(policy.target).bare_pods:
        return [p for p in pods if policy_text(p) == text and rendered_pod_name(policy, str(_metadata(p).get("name")))]
    if len(chain) < 2:
        return []
    level = [(w, _workload_form(policy, str(_metadata(w).get("name")))[1]) for w in workloads]
    above = chain[0]
    for link in chain[1:]:
        candidates = pods if link is chain[-1] else objects
        level = _made_by(policy, above, link, level, candidates)
        above = link
    return [pod for pod, role in level if role != EVERY_ROLE and _labels(pod).get(REPLICA_TYPE) == role.lower()]


def _made_by(policy: JobPolicy, above: Link, link: Link, owners: list[tuple[dict[str, Any], str]],
             candidates: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """The objects among `candidates` of `link` that one of `owners` (trusted objects of the
    link `above`, each with the role it is made for) controls and names so, each with its role."""
    by_uid = {str(_metadata(o).get("uid")): (o, role) for o, role in owners if _metadata(o).get("uid")}
    out = []
    for obj in candidates:
        owner = _controller(obj)
        if (obj.get("apiVersion"), obj.get("kind")) != (link.api_version, link.kind) or owner is None:
            continue
        found = by_uid.get(str(owner.get("uid")))
        if found is None:
            continue
        parent, role = found
        parent_name = _metadata(parent).get("name")
        if (owner.get("apiVersion"), owner.get("kind"), owner.get("name")) != (above.api_version, above.kind,
                                                                                 parent_name):
            continue
        name = _metadata(obj).get("name")
        if not isinstance(name, str) or not isinstance(parent_name, str):
            continue
        made_for = _named(policy, link, parent_name, role, name)
        if made_for is not None and (link.named != INDEXED_POD or selected_by(obj, str(owner.get("uid")))):
            out.append((obj, made_for))
    return out


def _named(policy: JobPolicy, link: Link, owner: str, role: str, name: str) -> str | None:
    """The role (as `policy` names it) that `name` is made for when `link`'s controller names
    an object so below the object named `owner`, made for `role`; None when it never does."""
    if link.named == SAME_NAME:
        return role if name == owner else None
    renamed = dict(link.renamed)
    for each in [role] if role != EVERY_ROLE else list(policy.roles):
        replicas = policy.roles[each].replicas if each in policy.roles else 0
        if link.named == REPLICATED_JOB and name == f"{owner}-{renamed.get(each.lower(), each.lower())}-0":
            return each
        if link.named == TASK_INDEX and _rendered_index(name, f"{owner}-{each.lower()}-", replicas) is not None:
            return each
        if role == EVERY_ROLE:
            continue  # a pod of one role's workload: its ordinal or index is below that role's replicas
        if link.named == ORDINAL and _rendered_index(name, f"{owner}-", replicas) is not None:
            return each
        if link.named == INDEXED_POD and _generated_from(name, owner, replicas):
            return each
    return None


def _generated_from(name: str, job: str, completions: int) -> bool:
    """Whether `name` is one the Job controller gives a pod of Indexed Job `job`: the prefix
    `<job>-<i>-` (cut to 58 characters, keeping `-<i>-`: podGenerateNameWithIndex), i below
    `completions`, and five random characters."""
    prefix, suffix = name[:-_RANDOM_SUFFIX], name[-_RANDOM_SUFFIX:]
    if len(name) <= _RANDOM_SUFFIX or not all(c in _RANDOM_CHARACTERS for c in suffix):
        return False
    index = _rendered_index(prefix[:-1], prefix[:-1].rpartition("-")[0] + "-", completions) if prefix.endswith("-") \
        else None
    if index is None:
        return False
    appended = f"-{index}-"
    expected = job + appended
    if len(expected) > _MAX_GENERATED_PREFIX:
        expected = expected[:_MAX_GENERATED_PREFIX - len(appended)] + appended
    return prefix == expected


def selected_by(pod: dict[str, Any], job_uid: str) -> bool:
    """Whether a pod carries the Job's UID in its selector's label: the Job controller counts
    no other pod (and releases those that claim it without)."""
    labels = _labels(pod)
    found = [labels[key] for key in JOB_UID_LABELS if key in labels]
    return bool(found) and all(value == job_uid for value in found)


class Disagreeing(run_policy.PolicyError):
    """The job's workloads carry different run-policies: which one is the job's own is not
    known, so nothing is done for it (one may be another tenant's forgery)."""
