"""The stage order, written once: load → parse → plan → contribute → merge → render → decorate.

Every stage is a pure function of its inputs; findings travel as diagnostics. A document
that is not a job kind msgen knows passes through unchanged, in place.
"""

from __future__ import annotations

import math

from ..checks import apirules
from .. import devices, frameworks, kinds, launchers, targets
from . import all_findings
from ..model import run_policy
from ..options import text as option_text
from ..model.diagnostics import Diagnostic, Severity, has_errors, position_key
from ..yamlio.emit import canonical
from ..model.memo import CompileMemos
from ..checks.output_size import RepeatedEnv
from ..model.patch import Patch, apply_patches, copy_data
from ..model.plan import Options, Plan
from ..model.source import Document, Path
from ..targets import labels
from ..targets.addressing import Addressing
from ..targets.fit import unsupported
from ..targets.limits import replica_problems

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import Framework, Target
    from ..model.plan import PodSlot
    from ..targets.addressing import Naming

#: Kinds that look like training jobs; met under an apiVersion msgen does not compile, they
#: pass through with a warning rather than silently.
_JOB_LIKE_KINDS = {"msjob", "mxjob", "caffe2job", "ascendjob", "tfjob", "pytorchjob", "mpijob"}


def compile_document(
    document: Document, options: Options, memos: CompileMemos | None = None
) -> tuple[list[dict[str, Any]], list[Diagnostic], bool]:
    """The objects one document stands for, its findings, and whether it was a job; `memos`:
    what the compile session remembers between documents (none: nothing is remembered)."""
    data = document.data
    if isinstance(data, dict) and data.get("kind") == "List":
        from . import list_items  # a `kind: List` only

        if list_items.is_list(data):
            return list_items.compile_items(
                document, options, lambda item, opts: compile_document(item, opts, memos)
            )
    if not isinstance(data, dict) or not data.get("apiVersion") or not data.get("kind"):
        return [], [document.diagnostic((), _NOT_AN_OBJECT)], False
    not_json = _non_finite_numbers(document)
    if not_json:
        return [], not_json, kinds.lookup(data["apiVersion"], data["kind"]) is not None
    job_kind = kinds.lookup(data["apiVersion"], data["kind"])
    if job_kind is None:
        return [data], _unknown_job_like(document, data), False
    options, noted = option_text.for_job(document, options)  # the run's, where one is bad
    plan, diagnostics = job_kind.to_plan(document, options)
    diagnostics[:0] = noted
    if plan is None or has_errors(diagnostics):  # no plan; its pod templates still are checked
        if all_findings.room_for_more(diagnostics) and not all_findings.decided_by_bad_option(noted):
            found = all_findings.unplanned(document, job_kind.model(), options, diagnostics)
            diagnostics.extend(found)
        return [], diagnostics, True
    if options.gitops or options.run_name != "job":
        from . import lifecycle  # GitOps hosts and content-named runs only

        plan, found = lifecycle.adapt(plan, options)
        diagnostics.extend(found)
    diagnostics.extend(apirules.check_plan(plan, options))
    diagnostics.extend(_check_templates(plan, options, memos))
    if has_errors(diagnostics):  # what the target, framework, devices, launcher say of it too
        if all_findings.room_for_more(diagnostics):
            diagnostics.extend(all_findings.beyond(diagnostics, _checked(plan, options)[0]))
        return [], diagnostics, True
    objects, found = render_plan(_huge_quantities_as_text(plan), options)
    diagnostics.extend(found)
    if options.served_apis is not None and not has_errors(diagnostics):
        from . import served  # where the host knows what the cluster serves

        diagnostics.extend(served.check(document, objects, options.served_apis))
    if has_errors(diagnostics):
        return [], diagnostics, True
    return objects, diagnostics, True


def _check_templates(plan: Plan, options: Options, memos: CompileMemos | None) -> list[Diagnostic]:
    """The schema check and the API server's value rules (`all_findings.check_template`),
    run once per distinct valid template: a stream of many jobs made from one template (CI
    renders whole directories) would check it again per job. Only valid templates are
    remembered (`memos.valid_templates`); errors carry each document's own positions."""
    out: list[Diagnostic] = []
    valid = memos.valid_templates if memos is not None else None
    version = options.kube_version
    for role in plan.roles:
        # the template's text as a key: equal for equal templates written alike (a stream of
        # one job's copies), distinct for any that differ in a value or its type
        key = (version, options.target, repr(role.template))
        if valid is not None and key in valid:
            continue
        path = role.path + ("template",)
        found = all_findings.check_template(role.template, plan.document, path, options)
        if found:
            out.extend(found)
        elif valid is not None:
            valid.remember(key, True)
    return out


def _huge_quantities_as_text(plan: Plan) -> Plan:
    """The plan with every container's requests and limits that are numbers too large to be
    read alike written as text (`quantity.as_written`); the templates are copied only then."""
    from ..model.quantity import as_written

    roles = []
    for role in plan.roles:
        spec = role.template["spec"]
        containers = [*(spec.get("initContainers") or []), *spec["containers"]]
        if all(as_written(v) is v for c in containers for v in _resource_values(c)):
            roles.append(role)
            continue
        copied = copy_data(role.template)
        for container in [*(copied["spec"].get("initContainers") or []), *copied["spec"]["containers"]]:
            for section in ("requests", "limits"):
                values = (container.get("resources") or {}).get(section)
                if isinstance(values, dict):
                    container["resources"][section] = {k: as_written(v) for k, v in values.items()}
        roles.append(role._replace(template=copied))
    return plan._replace(roles=tuple(roles)) if roles != list(plan.roles) else plan


def _resource_values(container: Any) -> list[Any]:
    resources = container.get("resources") if isinstance(container, dict) else None
    resources = resources if isinstance(resources, dict) else {}
    return [v for s in ("requests", "limits") if isinstance(resources.get(s), dict) for v in resources[s].values()]


class _Checked:
    """What the checks of a plan found out on the way, that rendering it goes on with (a
    slotted class, not a NamedTuple: typing would compile its fields' names, which this
    module's annotations leave as text, into ForwardRefs on every render)."""

    __slots__ = ("target", "framework", "naming", "slots")

    def __init__(self, target: Target, framework: Framework, naming: Naming, slots: list[PodSlot]) -> None:
        self.target, self.framework, self.naming, self.slots = target, framework, naming, slots


def _checked(plan: Plan, options: Options) -> tuple[list[Diagnostic], _Checked | None]:
    """The findings of the target, framework, devices and launcher on `plan`, and what
    rendering goes on with (None: an error stops it). They read the plan, not its pod
    templates' other fields, so they also run on a job whose templates have errors."""
    target = targets.lookup(options.target)
    too_many = replica_problems(plan, target)
    if too_many:
        return too_many, None
    framework = frameworks.lookup(plan.framework)
    diagnostics = frameworks.check(framework, plan, options) + devices.check(plan)
    diagnostics += launchers.check(plan, options)
    if has_errors(diagnostics):
        return diagnostics, None
    naming = target.naming(plan, options)
    slots = target.slots(plan)
    needs_index = frameworks.needs_pod_index(framework, plan)
    problem = unsupported(plan, options, target, naming, slots, needs_index)
    if problem is not None:
        where: tuple[Any, ...] = ("kind",)
        found_reason = frameworks.pod_index_reason(framework, plan) if needs_index else None
        if plan.static_indexes:
            where = plan.roles[0].path[:-1]  # the replica specs, whose ranks span the roles
        elif found_reason is not None:
            where, why = found_reason
            problem = f"{why}, and {problem}"
        else:  # the first role whose pods share a template, so need the index at run time
            role = next(slot.role for slot in slots if slot.index is None)
            where = role.path
            problem = (
                f"{plan.kind} puts each {role.replica_type} pod's index in its environment, "
                f"and {problem}"
            )
        return [plan.document.diagnostic(where, problem)], None
    return diagnostics, _Checked(target, framework, naming, slots)


def render_plan(plan: Plan, options: Options) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    diagnostics, checked = _checked(plan, options)
    if checked is None:
        return [], diagnostics
    target, framework, naming, slots = checked.target, checked.framework, checked.naming, checked.slots
    addressing = Addressing(plan, options.scheduler_address, naming, framework.endpoints(plan))
    pods = []
    extra: dict[tuple[str, str], dict[str, Any]] = {}  # ConfigMaps the pods need, once each
    # A device's patch is the role's (Device.contribute(plan, role)): built once per role, not
    # once per pod (a bare-pod render of thousands of Workers built it per pod).
    device_patches: dict[int, list[Patch]] = {}
    repeated = RepeatedEnv(plan, options.target)
    for slot in slots:
        role_patches = device_patches.get(id(slot.role))
        framework_patch = framework.contribute(plan, slot, addressing)
        if role_patches is None:
            role_patches = device_patches[id(slot.role)] = devices.contribute(plan, slot)
            pods_of_role = sum(s.role is slot.role for s in slots)
            too_big = repeated.add(slot.role, framework_patch, pods_of_role)
            if too_big is not None:
                return [], [too_big]
        patches = [framework_patch, *role_patches]
        patches += launchers.contribute(plan, slot, addressing, options)
        merged, found = apply_patches(plan, slot, patches, options)
        diagnostics.extend(found)
        pods.append((slot, merged))
        for patch in patches:
            for obj in patch.objects:
                extra.setdefault((obj["kind"], obj["metadata"]["name"]), obj)
    objects, found = target.render(plan, pods, addressing, options)
    diagnostics.extend(found)
    objects = launchers.with_workload_labels(objects, launchers.workload_labels(plan, options))
    objects = decorate(plan, [*extra.values(), *objects], options)
    diagnostics.extend(target.check_names(plan, objects))
    return objects, diagnostics


#: Output order by kind (lower first; workloads after); these kinds also get sync wave -1.
#: A TrainingRuntime is the configuration of the TrainJob that refers to it (Trainer's
#: webhook refuses a TrainJob whose runtime does not exist yet).
KIND_RANK = {"ServiceAccount": 0, "ConfigMap": 0, "Service": 1, "Workload": 2, "PodGroup": 2, "TrainingRuntime": 2}


#: Argo CD applies lower waves first: configuration and Services before the workloads.
SYNC_WAVE = "argocd.argoproj.io/sync-wave"


def decorate(plan: Plan, objects: list[dict[str, Any]], options: Options) -> list[dict[str, Any]]:
    """Common labels and namespace on every object (not the host's destination, which the
    host puts there itself), the run-time policy on workloads; output order; canonical key
    order."""
    decorated = []
    policy = run_policy.value(plan, options)
    for obj in objects:
        metadata = dict(obj.get("metadata") or {})
        metadata["labels"] = {**(metadata.get("labels") or {}), **labels.object_labels(plan)}
        if plan.namespace and plan.namespace != options.destination_namespace:
            metadata["namespace"] = plan.namespace
        if obj["kind"] not in KIND_RANK:  # workloads: what the reconciler reads policies from
            annotations = metadata.get("annotations") or {}
            metadata["annotations"] = {**annotations, run_policy.ANNOTATION: policy}
        if options.argocd_sync_waves:
            wave = "-1" if obj["kind"] in KIND_RANK else "0"
            metadata["annotations"] = {**(metadata.get("annotations") or {}), SYNC_WAVE: wave}
        decorated.append(canonical({**obj, "metadata": metadata}))
    # sorted() is stable: within a rank, targets already list roles Scheduler, PS, Worker.
    return sorted(decorated, key=lambda o: KIND_RANK.get(o["kind"], 3))


def _non_finite_numbers(document: Document) -> list[Diagnostic]:
    """`.nan` and `.inf`: YAML has them, JSON (what the API server stores) does not."""
    if not document.floats:  # the loader saw no float: nothing to walk for
        return []
    out = []
    stack: list[tuple[Any, Path]] = [(document.data, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            stack.extend((item, path + (key,)) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, path + (i,)) for i, item in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            out.append(
                document.diagnostic(
                    path,
                    f"{str(value).replace('nan', '.nan').replace('inf', '.inf')} is not accepted: "
                    "Kubernetes objects are JSON, which has no NaN or infinity; accepted: a "
                    "finite number, or a quoted string",
                )
            )
    return sorted(out, key=position_key)


_NOT_AN_OBJECT = (
    "not a Kubernetes object; accepted: a mapping with apiVersion and kind, such as an "
    "MSJob (mindspore.gitee.com/v1)"
)


def _unknown_job_like(document: Document, data: dict[str, Any]) -> list[Diagnostic]:
    """A near miss of a compiled kind is an error; other job-like kinds pass with a warning."""
    from ..kinds.near_miss import near_miss

    known = ", ".join(f"{api} {kind}" for api, kind in kinds.known_kinds())
    meant = near_miss(str(data["apiVersion"]), str(data["kind"]))
    if meant is not None:
        field = "kind" if str(data["kind"]) != meant[1] else "apiVersion"
        return [
            document.diagnostic(
                (field,),
                f"{data['apiVersion']} {data['kind']} is not a kind msgen compiles "
                f"(did you mean {meant[0]} {meant[1]}?); accepted: {known}, or a kind "
                "that is none of these, which passes through unchanged",
            )
        ]
    if str(data["kind"]).lower() not in _JOB_LIKE_KINDS:
        return []
    return [
        document.diagnostic(
            ("kind",),
            f"{data['apiVersion']} {data['kind']} is passed through unchanged: msgen compiles "
            f"{known}",
            severity=Severity.WARNING,
        )
    ]
