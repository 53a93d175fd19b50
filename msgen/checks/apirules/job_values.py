"""Values of a job that msgen writes into objects of its own making (Jobs, PodGroups, Volcano
Jobs), checked against what those objects accept.

The input models bound what every target accepts (an int32 `backoffLimit`); this module adds
what depends on the target or the gang scheduler: a deadline that lands on pods must fit the
pod's int32, a scheduler-plugins PodGroup needs `minMember` of at least 1, a Volcano queue is
a DNS subdomain, and a job without replicas would render nothing at all.
"""

from __future__ import annotations

from ...model.diagnostics import Diagnostic
from ...model.plan import Options, Plan
from ...model import names
from . import metadata
from .findings import Findings
from .resources import check_quantity

INT32_MAX = 2**31 - 1
#: Where each kind keeps its replica specs, for a job that has none.
REPLICA_SPECS = ("msReplicaSpecs", "mxReplicaSpecs", "replicaSpecs")


def check_plan(plan: Plan, options: Options) -> list[Diagnostic]:
    found = Findings(plan.document, options.kube_version, options.target)
    data = plan.document.data
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    # The job's namespace and labels are copied onto every object (its annotations are not).
    metadata.check_namespace(found, ("metadata", "namespace"), meta.get("namespace"))
    metadata.check_labels(found, ("metadata", "labels"), meta.get("labels"))
    if not plan.roles:
        spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
        field = next((f for f in REPLICA_SPECS if f in spec), None)
        found.refuse(
            ("spec", field) if field else ("spec",),
            f"{plan.kind} {plan.name!r} has no replicas, so there is nothing to render; "
            "accepted: at least one replica spec (a Worker, say)",
        )
    elif not any(role.replicas for role in plan.roles):
        # Targets leave roles of 0 replicas out: nothing would run (and a Volcano Job
        # without tasks is refused by its CRD).
        found.refuse(
            plan.roles[0].path + ("replicas",),
            f"every role of {plan.kind} {plan.name!r} has replicas: 0, so there is nothing "
            "to run; accepted: at least one replica",
        )
    run = plan.run_policy
    deadline = run.active_deadline_seconds
    if deadline is not None and deadline > INT32_MAX and found.facts.deadline_on_pods:
        found.refuse(
            run.path + ("activeDeadlineSeconds",),
            f"{deadline} is not accepted: target {options.target} writes it on the pods, whose "
            f"activeDeadlineSeconds is an int32; accepted: 1 to {INT32_MAX}",
        )
    _check_scheduling(found, plan, options)
    return found.errors


def _check_scheduling(found: Findings, plan: Plan, options: Options) -> None:
    from ...targets.scheduling import min_member

    scheduling = plan.run_policy.scheduling
    path = plan.run_policy.path + ("schedulingPolicy",)
    # A target that is its own gang is scheduled by Volcano (the only such target).
    gang = "volcano" if found.facts.own_gang else options.gang_scheduler
    if gang == "scheduler-plugins" and plan.roles and min_member(plan) == 0:
        given = scheduling is not None and scheduling.min_available is not None
        found.refuse(
            path + ("minAvailable",) if given else plan.roles[0].path + ("replicas",),
            "a scheduler-plugins PodGroup needs minMember 1 or more, and this job's is 0; "
            "accepted: minAvailable 1 or more, or a job with at least one replica",
        )
    if scheduling is None:
        return
    pods = sum(role.replicas for role in plan.roles)
    if found.facts.own_gang and scheduling.min_available is not None and scheduling.min_available > pods:
        # Volcano's admission webhook: "job 'minAvailable' should not be greater than total
        # replicas in tasks" (pkg/webhooks/admission/jobs/validate/admit_job.go, v1.14.1).
        found.refuse(
            path + ("minAvailable",),
            f"a Volcano Job's minAvailable cannot be more than its tasks' replicas, {pods}; Volcano's "
            f"admission webhook refuses {scheduling.min_available}; accepted: 1 to {pods}",
        )
    if gang == "volcano" and scheduling.queue is not None:
        queue = scheduling.queue
        found.check(path + ("queue",), "queue", queue, names.dns1123_subdomain(queue))
    if scheduling.priority_class is not None:
        name = scheduling.priority_class
        found.check(
            path + ("priorityClass",), "priorityClass", name, names.dns1123_subdomain(name)
        )
    podgroup = not (found.facts.own_gang or found.facts.gang_by_policy) and options.gang_scheduler != "none"
    for name, value in (scheduling.min_resources or {}).items() if podgroup else ():
        where = path + ("minResources", name)
        problems = names.qualified_name(name)
        found.check(where, "resource name", name, problems, key=True)
        if not problems:  # written as text (`str(value)`), so a number is no problem here
            check_quantity(found, where, value, in_crd=False)
