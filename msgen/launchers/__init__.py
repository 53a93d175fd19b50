"""How the processes of a pod start, and the pod settings they need (options-driven).

The core contract (frameworks/) says what each pod's environment is. This stage adds what the
run's options choose on top: who starts one MindSpore process per device (`launcher`), the
Ascend rank table, Ascend pod settings (`/dev/shm`, the chip's node selector), disaster
recovery and timeouts for large clusters, and resolving the scheduler's name in `dns` mode.
Each contributor is a module (`StartsProcesses`, and `ChecksJob` or `LabelsWorkloads` where it
needs them: `msgen.model.extension_points`) chosen by key: by the device kind the job's roles
ask for (or whose options it was given), and by the job's framework; modules load only for
the jobs they serve. Each returns `Patch`es; `apply_patches` merges them with the same
conflict rules as the core's env.
"""

from __future__ import annotations

import sys

from .. import devices
from ..devices import DeviceKind
from ..model.diagnostics import Diagnostic
from ..model.patch import Patch
from ..model.patch import WorkloadLabels as WorkloadLabels
from ..model.plan import Options, Plan, PodSlot

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, NamedTuple
    from ..model.extension_points import Addresses, StartsProcesses
else:
    from ..model.type_forms import NamedTuple


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


def _load(module: str) -> "StartsProcesses":
    __import__(module)  # import_module without loading importlib's package
    found: "StartsProcesses" = sys.modules[module]
    return found


def contributors(plan: Plan, options: Options) -> "list[StartsProcesses]":
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
    """Every contributor's findings (those that check something: `ChecksJob`)."""
    return [
        found
        for each in contributors(plan, options)
        if (hook := getattr(each, "check", None)) is not None
        for found in hook(plan, options)
    ]


def contribute(
    plan: Plan, slot: PodSlot, addressing: "Addresses", options: Options
) -> list[Patch]:
    return [
        patch
        for each in contributors(plan, options)
        for patch in each.contribute(plan, slot, addressing, options)
    ]


def workload_labels(plan: Plan, options: Options) -> list[WorkloadLabels]:
    """What the options add to the rendered workloads themselves, from every contributor that
    labels them (`LabelsWorkloads`)."""
    return [
        found
        for each in contributors(plan, options)
        if (hook := getattr(each, "workload_labels", None)) is not None
        for found in hook(plan, options)
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
