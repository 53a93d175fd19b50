"""What every target does to a pod template: labels, restart policy, DNS identity, gang."""

from __future__ import annotations

from ..model import versions
from ..model.diagnostics import Diagnostic, Severity
from ..model.patch import copy_data
from ..model.plan import Options, Plan, PodSlot
from . import labels, scheduling, support
from .addressing import dns_policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import Addresses, Target


def finish_pod(
    plan: Plan,
    slot: PodSlot,
    merged: dict[str, Any],
    addressing: Addresses,
    *,
    restart_policy: str,
    hostname: str | None,
    options: Options,
    target: Target,
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The pod template with msgen's labels, restart policy, DNS identity, gang and priority."""
    metadata, diagnostics = labels.pod_metadata(plan, slot)
    if target.facts.job_templates and metadata["labels"].get(labels.LEGACY_JOB_NAME) == plan.name:
        # The API server sets a Job's pod template label `job-name` to the Job's own name
        # (`<job>-<role>`) and refuses any other value, so the operators' `job-name: <job>`
        # cannot be kept on Job pods; `training.kubeflow.org/job-name` still carries it.
        metadata["labels"] = {
            k: v for k, v in metadata["labels"].items() if k != labels.LEGACY_JOB_NAME
        }
        diagnostics.extend(_select_by_job_label(plan, slot, merged["spec"], target))
    spec = dict(merged["spec"])
    if target.facts.job_templates and "affinity" in spec:
        spec["affinity"] = _job_label_affinity(plan, spec["affinity"])
    spec["restartPolicy"] = restart_policy
    if addressing.distributed:
        subdomain = None if addressing.naming.controller_sets_subdomain else addressing.subdomain
        for field, value in (("hostname", hostname), ("subdomain", subdomain)):
            if field in spec:
                diagnostics.append(
                    plan.document.diagnostic(
                        slot.role.path + ("template", "spec", field),
                        f"{field} {spec[field]!r} is not accepted in a distributed job: msgen "
                        "gives every pod its own stable host name and DNS subdomain; "
                        f"accepted: leave {field} out",
                    )
                )
            if value is not None:
                spec[field] = value
        policy = dns_policy(plan, options, slot.role, spec)
        if policy is not None:
            spec["dnsPolicy"] = policy
    template = {"metadata": metadata, "spec": spec}
    diagnostics.extend(scheduling.join_pod(plan, options, slot, template, target))
    return template, diagnostics


def role_slots(plan: Plan) -> list[PodSlot]:
    """One pod template per role, for targets whose controller stamps pods from it; a role of
    one replica has the static index 0, so its values need no downward API."""
    return [
        PodSlot(role, 0 if role.replicas == 1 else None) for role in plan.roles if role.replicas > 0
    ]


def shared_objects(
    plan: Plan, addressing: Addresses, options: Options, target: Target
) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """What every target starts with: the Services, the PodGroup, and the warnings for the
    policies `target` does not express."""
    diagnostics = support.unexpressed(plan, options, target) + _add_on_release(plan, options, target)
    groups, found = scheduling.gang_objects(plan, options, target)
    return addressing.services() + groups, diagnostics + found


def _add_on_release(plan: Plan, options: Options, target: Target) -> list[Diagnostic]:
    """A warning when the add-on that runs `target`'s workloads, at the release msgen is tested
    with, does not run on the cluster's Kubernetes (`Facts.add_on`)."""
    if target.facts.add_on is None:
        return []
    name, oldest, why = target.facts.add_on
    if options.kube_version >= oldest:
        return []
    return [plan.document.diagnostic(
        ("kind",),
        f"target {target.name} renders for {name}, which runs on Kubernetes {versions.show(oldest)} "
        f"and newer; --kube-version is {versions.show(options.kube_version)}: {why}",
        severity=Severity.WARNING,
    )]


def _selector_terms(affinity: dict[str, Any]) -> list[dict[str, Any]]:
    """Every label selector of a pod (anti-)affinity, required and preferred."""
    out = []
    for kind in ("podAffinity", "podAntiAffinity"):
        found = affinity.get(kind) or {}
        out += [t.get("labelSelector") or {} for t in found.get("requiredDuringSchedulingIgnoredDuringExecution") or []]
        out += [(t.get("podAffinityTerm") or {}).get("labelSelector") or {}
                for t in found.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
    return out


def _job_label_affinity(plan: Plan, affinity: Any) -> Any:
    """On Job pods `job-name` is the Job's own name, so a selector on `job-name: <job>` (as
    MindCluster's samples spread Workers) selects by `training.kubeflow.org/job-name`."""
    if not isinstance(affinity, dict):
        return affinity
    out = copy_data(affinity)
    for selector in _selector_terms(out):
        match = selector.get("matchLabels") or {}
        if match.get(labels.LEGACY_JOB_NAME) == plan.name:
            selector["matchLabels"] = {
                (labels.JOB_NAME if k == labels.LEGACY_JOB_NAME else k): v for k, v in match.items()
            }
        for expression in selector.get("matchExpressions") or []:
            if expression.get("key") == labels.LEGACY_JOB_NAME and expression.get("values") == [plan.name]:
                expression["key"] = labels.JOB_NAME
    return out


def _select_by_job_label(plan: Plan, slot: PodSlot, spec: dict[str, Any], target: Target) -> list[Diagnostic]:
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict) or _job_label_affinity(plan, affinity) == affinity:
        return []
    return [
        plan.document.diagnostic(
            slot.role.path + ("template", "spec", "affinity"),
            f"a pod affinity selects job-name={plan.name}, which Kubernetes gives Job pods as "
            f"the Job's own name with target {target.name}: it selects by "
            f"{labels.JOB_NAME}={plan.name} instead",
            severity=Severity.WARNING,
        )
    ]
