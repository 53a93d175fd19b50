"""How the processes of a pod start, and the pod settings they need (options-driven).

The core contract (frameworks/) says what each pod's environment is. This stage adds what the
run's options choose on top: who starts one MindSpore process per device (`launcher`), the
Ascend rank table, Ascend pod settings (`/dev/shm`, the chip's node selector), disaster
recovery and timeouts for large clusters, and resolving the scheduler's name in `dns` mode.
Each contributor is a module (`Process`) chosen by key: by the device kind the job's roles ask
for (or whose options it was given), and by the job's framework; modules load only for the
jobs they serve. Each returns `Patch`es; `apply_patches` merges them with the same conflict
rules as the core's env.
"""

import importlib
from typing import Any, Callable, NamedTuple, Protocol, runtime_checkable

from .. import devices
from ..devices import DeviceKind
from ..model.diagnostics import Diagnostic
from ..model.patch import Patch
from ..model.plan import Options, Plan, PodSlot
from ..targets.addressing import Addressing


@runtime_checkable
class Process(Protocol):
    def check(self, plan: Plan, options: Options) -> list[Diagnostic]: ...

    def contribute(
        self, plan: Plan, slot: PodSlot, addressing: Addressing, options: Options
    ) -> list[Patch]: ...

    def workload_labels(self, plan: Plan, options: Options) -> "tuple[WorkloadLabels, ...]":
        """What the options add to the rendered workloads themselves: labels, which the
        pipeline applies to the target's output (`with_workload_labels`)."""


class WorkloadLabels(NamedTuple):
    """Labels for one workload a target renders (`kind`, `name`): on the object, and on its
    pod template. A contributor says what; `with_workload_labels` makes the new objects, so
    nothing edits a target's output in place."""

    kind: str
    name: str
    labels: tuple[tuple[str, str], ...]
    template_labels: tuple[tuple[str, str], ...] = ()


class ForDevice(NamedTuple):
    module: str
    #: Options that ask for the module's settings even in a job that does not use the device
    #: (so that it can say they do nothing there).
    asked: Callable[[Options], bool]


#: Device kind → the settings of pods on that device (in the order they apply).
_BY_DEVICE: dict[DeviceKind, ForDevice] = {
    "ascend": ForDevice(
        "msgen.launchers.ascend",
        lambda options: options.rank_table != "none"
        or options.accelerator_type is not None
        or options.shm_size is not None,
    ),
}
#: Framework key (`Plan.framework`) → how its processes start (after the device settings).
_BY_FRAMEWORK: dict[str, str] = {"mindspore": "msgen.launchers.mindspore"}


def _load(module: str) -> Process:
    found: Process = importlib.import_module(module)
    return found


def contributors(plan: Plan, options: Options) -> list[Process]:
    """The contributors the job needs; other jobs do not load them (a job without Ascend
    roles or options loads neither `msgen.launchers.ascend` nor `msgen.devices.ascend`)."""
    used = {devices.role_request(plan, r).kind for r in plan.roles}
    out = [
        _load(entry.module)
        for kind, entry in _BY_DEVICE.items()
        if kind in used or entry.asked(options)
    ]
    if plan.framework in _BY_FRAMEWORK:
        out.append(_load(_BY_FRAMEWORK[plan.framework]))
    return out


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    return [found for each in contributors(plan, options) for found in each.check(plan, options)]


def contribute(
    plan: Plan, slot: PodSlot, addressing: Addressing, options: Options
) -> list[Patch]:
    return [
        patch
        for each in contributors(plan, options)
        for patch in each.contribute(plan, slot, addressing, options)
    ]


def workload_labels(plan: Plan, options: Options) -> list[WorkloadLabels]:
    """What the options add to the rendered workloads themselves, from every contributor."""
    return [
        found for each in contributors(plan, options) for found in each.workload_labels(plan, options)
    ]


def with_workload_labels(
    objects: list[dict[str, Any]], wanted: list[WorkloadLabels]
) -> list[dict[str, Any]]:
    """`objects`, each one `wanted` names replaced by a copy carrying its labels (later keys
    win, as they would merged into a dict); the others, and `objects` itself, are untouched."""
    if not wanted:
        return objects
    out = []
    for obj in objects:
        metadata = obj["metadata"]
        for each in wanted:
            if obj["kind"] != each.kind or metadata["name"] != each.name:
                continue
            metadata = {**metadata, "labels": {**(metadata.get("labels") or {}), **dict(each.labels)}}
            obj = {**obj, "metadata": metadata}
            if each.template_labels:
                template = obj["spec"]["template"]
                template_metadata = template["metadata"]
                template = {**template, "metadata": {
                    **template_metadata,
                    "labels": {**template_metadata["labels"], **dict(each.template_labels)},
                }}
                obj["spec"] = {**obj["spec"], "template": template}
        out.append(obj)
    return out
