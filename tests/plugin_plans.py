"""Small `Plan` builders for plug-in tests: a job of a few lines, compiled by the MSJob kind.

Plug-in tests call one target, device or process module on such a plan, so a fault names the
plug-in that broke rather than showing as a diff of every golden file.
"""

from __future__ import annotations

from typing import Any

from msgen import frameworks, kinds, targets
from msgen.compile import pipeline
from msgen.model.diagnostics import Diagnostic, has_errors
from msgen.model.patch import Patch, copy_data
from msgen.model.plan import Options, Plan, PodSlot, Role
from msgen.model.source import Document, Source
from msgen.targets.addressing import Addressing
from msgen.yamlio.yaml_loader import load_documents


def job(
    *,
    workers: int = 2,
    scheduler: bool = True,
    resources: str = "",
    restart_policy: str = "OnFailure",
    run_policy: str = "",
    name: str = "tiny",
) -> str:
    """An MSJob: a Scheduler (unless `scheduler` is false) and `workers` Workers."""
    container = (
        "        spec:\n"
        "          containers:\n"
        "            - name: mindspore\n"
        "              image: mindspore/mindspore:2.2.14\n"
        "              command: [python, train.py]\n"
    )
    if resources:
        container += f"              resources: {resources}\n"
    roles = ""
    if scheduler:
        roles += (
            "    Scheduler:\n      replicas: 1\n      restartPolicy: Never\n      template:\n"
            + container.replace(f"              resources: {resources}\n", "")
        )
    roles += (
        f"    Worker:\n      replicas: {workers}\n      restartPolicy: {restart_policy}\n"
        "      template:\n" + container
    )
    policy = f"  runPolicy: {run_policy}\n" if run_policy else ""
    return (
        "apiVersion: mindspore.gitee.com/v1\nkind: MSJob\n"
        f"metadata:\n  name: {name}\nspec:\n{policy}  msReplicaSpecs:\n{roles}"
    )


def plan(text: str | None = None, options: Options | None = None) -> Plan:
    """The plan of `text` (by default `job()`), as the MSJob kind makes it."""
    (document,) = load_documents(Source("tiny.yaml", text or job()))
    kind = kinds.lookup(document.data["apiVersion"], document.data["kind"])
    assert kind is not None
    made, diagnostics = kind.to_plan(document, options or Options())
    assert made is not None and not has_errors(diagnostics), [d.message for d in diagnostics]
    return made


def scheduler_and_worker(text: str) -> tuple[Plan, Role, Role]:
    """The plan of `text` and its Scheduler and Worker roles."""
    made = plan(text)
    scheduler, worker = made.role("Scheduler"), made.role("Worker")
    assert scheduler is not None and worker is not None
    return made, scheduler, worker


def addresses(made: Plan, target: str = "indexed-job", **options: Any) -> Addressing:
    """The job's addresses as `target` makes them (what a framework's `contribute` reads)."""
    chosen = Options(target=target, **options)  # type: ignore[arg-type]
    naming = targets.lookup(target).naming(made, chosen)
    endpoints = frameworks.lookup(made.framework).endpoints(made)
    return Addressing(made, chosen.scheduler_address, naming, endpoints)


def slot_of(made: Plan, replica_type: str, index: int | None = None) -> PodSlot:
    """The pod template of `replica_type` (one replica of it, with `index`)."""
    role = made.role(replica_type)
    assert role is not None, replica_type
    return PodSlot(role, index)


def patch_env(patch: Patch) -> dict[str, str | None]:
    """A patch's env: name -> literal value (None for a value the kubelet fills in)."""
    return {name: value.value for _, name, value in patch.env}


def raw_pods(slots: list[PodSlot]) -> list[tuple[PodSlot, dict[str, Any]]]:
    """Each slot with a copy of its role's template as written (no contributor's patch), for
    calling a target's `render` on its own."""
    return [(slot, copy_data(slot.role.template)) for slot in slots]


def document_of(relative: str, old: str = "", new: str = "") -> Document:
    """The (only) document of `samples/<relative>`, with `old` replaced by `new` if given."""
    from pathlib import Path

    text = (Path(__file__).parent.parent / "samples" / relative).read_text()
    assert old in text, old
    (document,) = load_documents(Source(relative, text.replace(old, new, 1) if old else text))
    return document


def render(
    made: Plan, target: str, **options: Any
) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """What the whole render stage makes of `made` with `--target target`."""
    return pipeline.render_plan(made, Options(target=target, **options))  # type: ignore[arg-type]


def workloads(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects that are not configuration, Services or PodGroups."""
    return [o for o in objects if o["kind"] not in pipeline.KIND_RANK]


def pod_templates(obj: dict[str, Any], objects: list[dict[str, Any]] = ()) -> list[dict[str, Any]]:  # type: ignore[assignment]
    """The pod templates of a workload: its own (a Pod), its template, its parts' templates,
    or those of the runtime it refers to (a TrainJob's TrainingRuntime, among `objects`)."""
    if obj["kind"] == "Pod":
        return [obj]
    spec = obj["spec"]
    if obj["kind"] == "TrainJob":
        name = spec["runtimeRef"]["name"]
        (runtime,) = [o for o in objects if o["kind"] == "TrainingRuntime" and o["metadata"]["name"] == name]
        spec = runtime["spec"]["template"]["spec"]
    if "template" in spec:
        inner = spec["template"]
        return [inner["spec"]["template"]] if "template" in inner["spec"] else [inner]
    parts = spec.get("replicatedJobs") or spec.get("tasks") or []
    out = []
    for part in parts:
        template = part["template"]
        out.append(template["spec"]["template"] if "template" in template["spec"] else template)
    return out


def pod_specs(obj: dict[str, Any], objects: list[dict[str, Any]] = ()) -> list[dict[str, Any]]:  # type: ignore[assignment]
    """The pod specs of a workload (see `pod_templates`)."""
    return [template["spec"] for template in pod_templates(obj, objects)]


def sample_plan(relative: str) -> Plan:
    """The plan of `samples/<relative>`, as its kind makes it."""
    from pathlib import Path

    return plan((Path(__file__).parent.parent / "samples" / relative).read_text())


def sample_plan_with(relative: str, old: str, new: str) -> Plan:
    """The plan of `samples/<relative>` with `old` replaced by `new` (once, and it must be there)."""
    from pathlib import Path

    text = (Path(__file__).parent.parent / "samples" / relative).read_text()
    assert old in text, old
    return plan(text.replace(old, new, 1))


def pod_env(made: Plan, pod: str, target: str = "pod") -> dict[str, str]:
    """The first container's env of the pod named `pod` (values; `<ref>` for a reference)."""
    objects, _ = render(made, target)
    for obj in workloads(objects):
        if obj["metadata"]["name"] == pod:
            container = pod_specs(obj)[0]["containers"][0]
            return {e["name"]: e.get("value", "<ref>") for e in container.get("env", [])}
    raise AssertionError(f"no pod {pod}")
