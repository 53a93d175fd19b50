"""Gang scheduling, priority and queueing, shared by every target (contracts §8).

A distributed job whose pods start one at a time can deadlock a busy cluster: half the
workers hold their GPUs and wait for the other half forever. `schedulingPolicy` asks for
gang scheduling; msgen expresses it as a PodGroup of the scheduler the user names with
`--gang-scheduler` (Volcano, or the scheduler-plugins coscheduling plugin), with pods joined
the way that scheduler expects; or, with `--gang-scheduler kubernetes`, as Kubernetes' own
Workload and PodGroup (`scheduling.k8s.io/v1beta1`, 1.37 with the `GenericWorkload` gate on),
which each pod names in `spec.schedulingGroup` for the default scheduler's GangScheduling
plug-in: it lets no pod of the group bind until `minCount` of them have a place (its Permit
stage holds the placed ones). The Volcano target needs none of this: a Volcano Job is its
own gang (see `volcano.py`). `priorityClass` also becomes the pods' `priorityClassName`, and
`--kueue-queue` hands the workloads to Kueue, which admits them by label. They are not
written suspended: Kueue's admission webhook suspends a labelled Job or JobSet when it is
created (jobframework `ApplyDefaultForSuspend`, Kueue 0.3 and later), and a `suspend: true`
in the output would make every GitOps sync suspend the job again once Kueue admitted it.
"""

from __future__ import annotations

from ..model import versions
from ..model.diagnostics import Diagnostic, Severity
from ..model.plan import Options, Plan, PodSlot, SchedulingPolicy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import Target

VOLCANO_SCHEDULER = "volcano"
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
#: The name scheduler-plugins' own deployment gives its second scheduler.
PLUGINS_SCHEDULER = "scheduler-plugins-scheduler"
PLUGINS_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KUEUE_POD_GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"
#: Kubernetes' own Workload API (`--gang-scheduler kubernetes`), contracts §8.
WORKLOAD_API = "scheduling.k8s.io/v1beta1"
#: The one PodGroupTemplate of a job's Workload (the job is one gang), a DNS label.
WORKLOAD_TEMPLATE = "job"
DEFAULT_SCHEDULER = "default-scheduler"



def warn(plan: Plan, path: tuple[str | int, ...], message: str) -> Diagnostic:
    return plan.document.diagnostic(path, message, severity=Severity.WARNING)


def _policy_path(plan: Plan) -> tuple[str | int, ...]:
    return plan.run_policy.path + ("schedulingPolicy",)


def policy(plan: Plan) -> SchedulingPolicy:
    return plan.run_policy.scheduling or SchedulingPolicy()


def min_member(plan: Plan) -> int:
    """`minAvailable`, or every pod of the job (contracts §8)."""
    given = policy(plan).min_available
    return given if given is not None else sum(role.replicas for role in plan.roles)


def min_resources(plan: Plan) -> tuple[dict[str, str] | None, list[Diagnostic]]:
    """The user's `minResources`, or per-pod requests × replicas summed over every role.

    A pod's request is what the scheduler reserves: the sum over its containers (a limit
    stands in for a missing request, as Kubernetes defaults it), or the largest init
    container's when that is more.
    """
    given = policy(plan).min_resources
    if given is not None:
        return {name: str(value) for name, value in sorted(given.items())}, []
    from ..model import quantity  # with `decimal`: loaded only for a job whose PodGroup sums requests

    totals: dict[str, quantity.Sum] = {}
    diagnostics: list[Diagnostic] = []
    for role in plan.roles:
        if role.replicas == 0:
            continue
        spec = role.template["spec"]
        pod: dict[str, quantity.Sum] = {}
        for ci, container in enumerate(spec["containers"]):
            for name, value, path in _requests(container):
                try:
                    pod.setdefault(name, quantity.Sum()).add(value)
                except ValueError as exc:
                    field = role.path + ("template", "spec", "containers", ci, "resources") + path
                    diagnostics.append(plan.document.diagnostic(field, str(exc)))
        for init in spec.get("initContainers") or []:
            for name, value, _path in _requests(init):
                try:
                    single = quantity.Sum()
                    single.add(value)
                except ValueError:
                    continue  # reported by Kubernetes' own validation of the template
                if name not in pod or single.value > pod[name].value:
                    pod[name] = single
        for name, amount in pod.items():
            total = totals.setdefault(name, quantity.Sum())
            total.value += amount.value * role.replicas
            total.binary |= amount.binary
            total.decimal_suffix |= amount.decimal_suffix
    if not totals:
        return None, diagnostics
    return {name: totals[name].text() for name in sorted(totals)}, diagnostics


def _requests(container: dict[str, Any]) -> list[tuple[str, object, tuple[str, str]]]:
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    out = [(name, value, ("requests", name)) for name, value in requests.items()]
    out += [(name, value, ("limits", name)) for name, value in limits.items() if name not in requests]
    return out


def gang_objects(plan: Plan, options: Options, target: Target) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """The PodGroup the job's pods join, or a warning where gang scheduling is asked for but
    no gang scheduler was chosen."""
    scheduling = plan.run_policy.scheduling
    if target.facts.own_gang:
        return [], []
    if options.gang_scheduler == "none":
        if scheduling is None:
            return [], []
        return [], [
            warn(
                plan,
                _policy_path(plan),
                f"it asks for gang scheduling, which target {target.name} expresses as "
                "a PodGroup of the scheduler you name: pass --gang-scheduler volcano, "
                "scheduler-plugins or kubernetes; until then pods are scheduled one by one",
            )
        ]
    if options.gang_scheduler == "kubernetes":
        return _workload(plan, options)
    resources, diagnostics = min_resources(plan)
    spec: dict[str, Any] = {"minMember": min_member(plan)}
    if resources is not None:
        spec["minResources"] = resources
    chosen = policy(plan)
    if options.gang_scheduler == "volcano":
        if chosen.queue is not None:
            spec["queue"] = chosen.queue
        if chosen.priority_class is not None:
            spec["priorityClassName"] = chosen.priority_class
        api_version = "scheduling.volcano.sh/v1beta1"
    else:
        if chosen.queue is not None:
            diagnostics.append(
                warn(
                    plan,
                    _policy_path(plan) + ("queue",),
                    "a scheduler-plugins PodGroup has no queue: the queue is not expressed; "
                    "use --gang-scheduler volcano or --kueue-queue for queueing",
                )
            )
        api_version = "scheduling.x-k8s.io/v1alpha1"
    group = {
        "apiVersion": api_version,
        "kind": "PodGroup",
        "metadata": {"name": plan.name},
        "spec": spec,
    }
    return [group], diagnostics


def _workload(plan: Plan, options: Options) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """The job's Workload and its PodGroup (`scheduling.k8s.io/v1beta1`): one gang of
    `minCount` pods; refused below the version that serves the API."""
    where = _policy_path(plan) if plan.run_policy.scheduling is not None else ("kind",)
    if not versions.served("GenericWorkload", options.kube_version):
        return [], [plan.document.diagnostic(
            where,
            f"--gang-scheduler kubernetes needs Kubernetes {versions.since('GenericWorkload')} or "
            f"newer (its Workload API, {WORKLOAD_API}, behind the GenericWorkload feature gate); "
            f"--kube-version is {versions.show(options.kube_version)}; accepted: --kube-version "
            f"{versions.since('GenericWorkload')} or newer, or --gang-scheduler volcano or scheduler-plugins",
        )]
    chosen = policy(plan)
    count = min_member(plan)
    if count < 1:
        return [], [plan.document.diagnostic(
            where + ("minAvailable",) if plan.run_policy.scheduling is not None else where,
            f"a Kubernetes PodGroup's minCount must be 1 or more, and the job gives {count}; "
            "accepted: minAvailable of 1 or more",
        )]
    diagnostics = []
    if chosen.queue is not None:
        diagnostics.append(warn(plan, _policy_path(plan) + ("queue",),
                                "a Kubernetes PodGroup has no queue: the queue is not expressed; use "
                                "--kueue-queue for queueing"))
    if chosen.min_resources is not None:
        diagnostics.append(warn(plan, _policy_path(plan) + ("minResources",),
                                "a Kubernetes PodGroup has no minResources: the scheduler places the "
                                "gang when minCount of its pods fit, whatever they request"))
    gang = {"minCount": count}
    template: dict[str, Any] = {"name": WORKLOAD_TEMPLATE, "schedulingPolicy": {"gang": gang}}
    group_spec: dict[str, Any] = {
        "workloadRef": {"workloadName": plan.name, "templateName": WORKLOAD_TEMPLATE},
        "schedulingPolicy": {"gang": dict(gang)},
    }
    if chosen.priority_class is not None:
        template["priorityClassName"] = group_spec["priorityClassName"] = chosen.priority_class
    workload = {"apiVersion": WORKLOAD_API, "kind": "Workload", "metadata": {"name": plan.name},
                "spec": {"podGroupTemplates": [template]}}
    group = {"apiVersion": WORKLOAD_API, "kind": "PodGroup", "metadata": {"name": plan.name}, "spec": group_spec}
    return [workload, group], diagnostics


def _join_workload(plan: Plan, slot: PodSlot, spec: dict[str, Any]) -> list[Diagnostic]:
    """A pod of the job's Kubernetes PodGroup: `spec.schedulingGroup` names it; the default
    scheduler (its GangScheduling plug-in) is the one that honours it."""
    at = slot.role.path + ("template", "spec")
    own = spec.get("schedulingGroup")
    if own is not None and own != {"podGroupName": plan.name}:
        return [plan.document.diagnostic(
            at + ("schedulingGroup",),
            f"--gang-scheduler kubernetes joins every pod of the job to its PodGroup {plan.name!r}, "
            "and this template names another scheduling group; accepted: no schedulingGroup",
        )]
    spec["schedulingGroup"] = {"podGroupName": plan.name}
    scheduler = spec.get("schedulerName")
    if scheduler is not None and scheduler != DEFAULT_SCHEDULER:
        return [warn(plan, at + ("schedulerName",),
                     f"schedulerName {scheduler!r} is kept, but the pods' PodGroup is Kubernetes' own, "
                     "which kube-scheduler's GangScheduling plug-in honours: these pods are gang-"
                     "scheduled only if that scheduler runs the plug-in")]
    return []


def join_pod(
    plan: Plan, options: Options, slot: PodSlot, template: dict[str, Any], target: Target
) -> list[Diagnostic]:
    """Join a finished pod template to the job's gang and priority (in place)."""
    diagnostics = []
    spec = template["spec"]
    metadata = template["metadata"]
    priority = policy(plan).priority_class
    if priority is not None:
        own = spec.get("priorityClassName")
        if own is None:
            spec["priorityClassName"] = priority
        elif own != priority:
            diagnostics.append(
                warn(
                    plan,
                    slot.role.path + ("template", "spec", "priorityClassName"),
                    f"priorityClassName {own!r} is kept for this role; the job's "
                    f"schedulingPolicy.priorityClass {priority!r} applies to the others",
                )
            )
    if target.facts.own_gang or options.gang_scheduler == "none":
        return diagnostics
    if options.gang_scheduler == "kubernetes":
        return diagnostics + _join_workload(plan, slot, spec)
    scheduler = VOLCANO_SCHEDULER if options.gang_scheduler == "volcano" else PLUGINS_SCHEDULER
    own_scheduler = spec.get("schedulerName")
    if own_scheduler is None:
        spec["schedulerName"] = scheduler
    elif own_scheduler != scheduler and options.gang_scheduler == "volcano":
        diagnostics.append(
            warn(
                plan,
                slot.role.path + ("template", "spec", "schedulerName"),
                f"schedulerName {own_scheduler!r} is kept, but only the volcano scheduler "
                "honours a Volcano PodGroup: these pods are not gang-scheduled",
            )
        )
    if options.gang_scheduler == "volcano":
        metadata["annotations"] = {
            **(metadata.get("annotations") or {}),
            VOLCANO_GROUP_ANNOTATION: plan.name,
            # the task a pod belongs to, as ms-operator (createNewPod) and ascend-operator
            # (setGangScheduleInfo) annotate it; Volcano reads it for per-task scheduling
            VOLCANO_TASK_SPEC_ANNOTATION: slot.role.key,
        }
    else:
        metadata["labels"] = {**metadata["labels"], PLUGINS_GROUP_LABEL: plan.name}
    return diagnostics


def kueue_labels(options: Options) -> dict[str, str]:
    """The label Kueue admits a workload by; empty without `--kueue-queue`."""
    return {KUEUE_QUEUE_LABEL: options.kueue_queue} if options.kueue_queue else {}
