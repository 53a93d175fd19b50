"""Devices: what the pods ask for (CPU, NVIDIA GPU, Ascend NPU) and what that implies.

A role's device is read from the resources its containers request, never guessed from the
image. Each accelerator is a module, registered in `_REGISTRY` under its device kind with the
resource names that ask for it, and loaded only for a job that asks for that kind; it
contributes the `Patch`es a pod of a role needs (`Device`, `msgen.model.extension_points`). The GPU module hides GPUs from the
containers of a GPU job that asked for none (with the NVIDIA runtime as the node default, they
would otherwise see every GPU on the node).
"""

from __future__ import annotations

import sys

from ..model.diagnostics import Diagnostic
from ..model.patch import Patch
from ..model.plan import Plan, PodSlot, Role
from ..model.quantity import amount

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, NamedTuple
    from ..model.extension_points import Device
else:
    from ..model.type_forms import Literal, NamedTuple

DeviceKind = Literal["cpu", "gpu", "ascend"]


class Entry(NamedTuple):
    module: str
    #: Resource names that ask for the device, exactly ...
    names: tuple[str, ...] = ()
    #: ... or by their start.
    prefixes: tuple[str, ...] = ()


#: Device kind → its module and resources, in the order their patches apply. No resource
#: name is asked for by two kinds.
_REGISTRY: dict[DeviceKind, Entry] = {
    "ascend": Entry("msgen.devices.ascend", prefixes=("huawei.com/Ascend", "huawei.com/npu")),
    "gpu": Entry("msgen.devices.gpu", names=("nvidia.com/gpu",)),
}
#: Ascend NPU resource names start so (`msgen.devices.ascend`, loaded for Ascend jobs only).
ASCEND_RESOURCE_PREFIXES = _REGISTRY["ascend"].prefixes


def lookup(kind: DeviceKind) -> "Device":
    __import__(_REGISTRY[kind].module)  # import_module without loading importlib's package
    device: "Device" = sys.modules[_REGISTRY[kind].module]
    return device


def device_kind(resource: str) -> DeviceKind | None:
    for kind, entry in _REGISTRY.items():
        if resource in entry.names or resource.startswith(entry.prefixes):
            return kind
    return None


class DeviceRequest:
    """The accelerator one container asks for: kind, resource name and count."""

    __slots__ = ("kind", "resource", "count")

    def __init__(self, kind: DeviceKind, resource: str | None = None, count: int = 0):
        self.kind = kind
        self.resource = resource
        self.count = count

    def __repr__(self) -> str:
        return f"DeviceRequest({self.kind!r}, {self.resource!r}, {self.count})"


def container_request(container: dict[str, Any]) -> DeviceRequest:
    resources = container.get("resources") or {}
    wanted = {**(resources.get("requests") or {}), **(resources.get("limits") or {})}
    for resource, quantity in sorted(wanted.items()):
        kind = device_kind(resource)
        if kind is not None:
            return DeviceRequest(kind, resource, _count(quantity) or 0)
    return DeviceRequest("cpu")


def role_request(plan: Plan, role: Role) -> DeviceRequest:
    """The device of a role: what its main container asks for."""
    for container in role.containers():
        if container["name"] == plan.main_container:
            return container_request(container)
    return DeviceRequest("cpu")


def kinds_used(plan: Plan) -> set[DeviceKind]:
    """The device kinds any container of the job asks for."""
    return {container_request(c).kind for role in plan.roles for c in role.containers()}


def check(plan: Plan) -> list[Diagnostic]:
    """Device requests Kubernetes would reject, or that msgen cannot tell apart."""
    out: list[Diagnostic] = []
    for role in plan.roles:
        for ci, container in enumerate(role.containers()):
            path = role.path + ("template", "spec", "containers", ci, "resources")
            resources = container.get("resources") or {}
            limits = resources.get("limits") or {}
            requests = resources.get("requests") or {}
            kinds = set()
            asked: list[str] = []
            for resource in sorted({*limits, *requests}):
                kind = device_kind(resource)
                if kind is None:
                    continue
                kinds.add(kind)
                asked.append(resource)
                for section, values in (("limits", limits), ("requests", requests)):
                    if resource in values and _count(values[resource]) is None:
                        out.append(
                            plan.document.diagnostic(
                                path + (section, resource),
                                f"{values[resource]!r} is not accepted; "
                                "accepted: a whole number of devices",
                            )
                        )
                if resource in limits and resource in requests:
                    if _count(limits[resource]) != _count(requests[resource]):
                        out.append(
                            plan.document.diagnostic(
                                path + ("requests", resource),
                                f"{resource} requests ({requests[resource]}) differ from limits "
                                f"({limits[resource]}); accepted: equal values, or limits alone",
                            )
                        )
            if len(kinds) > 1:
                out.append(
                    plan.document.diagnostic(
                        path,
                        f"container {container['name']!r} asks for both {' and '.join(sorted(kinds))} "
                        "devices; accepted: one kind of accelerator per container",
                    )
                )
            elif len(asked) > 1:
                # Which one sets the process count (MS_LOCAL_WORKER) and the device env would
                # depend on how the names sort.
                out.append(
                    plan.document.diagnostic(
                        path,
                        f"container {container['name']!r} asks for {' and '.join(asked)}: "
                        "msgen cannot tell which of them its processes run on; accepted: one "
                        "device resource per container",
                    )
                )
    return out


def contribute(plan: Plan, slot: PodSlot) -> list[Patch]:
    """What each device the job asks for adds to the pods of `slot`'s role."""
    used = kinds_used(plan)
    patches = []
    for kind in _REGISTRY:
        if kind in used:
            patches += lookup(kind).contribute(plan, slot.role)
    return patches


def _count(quantity: Any) -> int | None:
    """A number of devices: a whole quantity, 0 or more, read by Kubernetes' grammar
    (`msgen.model.quantity`): `2`, `"2"`, `"1e0"` and `"1000m"` each count; None otherwise."""
    exact = amount(quantity)
    if exact is None or exact.negative or not exact.whole:
        return None
    return exact.numerator // exact.denominator
