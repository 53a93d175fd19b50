"""Huawei Ascend NPUs (`huawei.com/Ascend910`, `huawei.com/Ascend310P`, `huawei.com/npu`, vNPUs).

Ascend's device plugin writes the devices it allocated into a pod annotation named after the
resource; `ASCEND_VISIBLE_DEVICES` reads it through the downward API, as ascend-operator does.
On host networking, HCCL must bind the node's address: `HCCL_IF_IP` from `status.hostIP`.

ascend-operator also gives every NPU pod of an AscendJob `HCCL_LOGIC_SUPERPOD_ID`
(`addHcclSuperPodIdEnv`): the pod's rank divided by the pods per logical super-pod (the job's
`sp-block` annotation ÷ NPUs per pod), `0` without `sp-block`; under the job label
`super-pod-affinity: soft` the scheduler's pod annotation `super-pod-rank` instead.
"""

from __future__ import annotations

from ..model.patch import EnvValue, Patch, field_ref, literal
from ..model.plan import Plan, Role
from ..model.source import Document
from . import ASCEND_RESOURCE_PREFIXES as RESOURCE_PREFIXES
from . import role_request

VISIBLE_DEVICES = "ASCEND_VISIBLE_DEVICES"
HCCL_IF_IP = "HCCL_IF_IP"
SUPERPOD_ID = "HCCL_LOGIC_SUPERPOD_ID"
SP_BLOCK = "sp-block"
SUPERPOD_AFFINITY = "super-pod-affinity"
NPU_RESOURCE = "huawei.com/npu"


def contribute(plan: Plan, role: Role) -> list[Patch]:
    """The NPUs' env, on the pods of a role whose main container asks for NPUs."""
    if role_request(plan, role).kind != "ascend":
        return []
    return [visible_devices(role.template, role.containers())]


def visible_devices(template: dict[str, Any], containers: list[dict[str, Any]]) -> Patch:
    env = []
    host_network = bool(template["spec"].get("hostNetwork"))
    for container in containers:
        resource = _ascend_resource(container)
        if resource is None:
            continue
        annotation = f"metadata.annotations['{resource}']"
        env.append((container["name"], VISIBLE_DEVICES, field_ref(annotation)))
        if host_network:
            env.append((container["name"], HCCL_IF_IP, field_ref("status.hostIP")))
    return Patch(contributor="Ascend", env=tuple(env))


def _ascend_resource(container: dict[str, Any]) -> str | None:
    resources = container.get("resources") or {}
    names = {*(resources.get("limits") or {}), *(resources.get("requests") or {})}
    for name in sorted(names):
        if name.startswith(RESOURCE_PREFIXES):
            return str(name)
    return None


def superpod_pods(document: Document, npus_per_pod: int) -> int | None:
    """Pods per logical super-pod (ascend-operator `getLogicSuperPodNodes`); None without an
    `sp-block` annotation (or with a useless one), where the id is always 0."""
    annotations = (document.data.get("metadata") or {}).get("annotations") or {}
    text = str(annotations.get(SP_BLOCK, ""))
    block = int(text) if text.isdigit() else 0
    if block <= 0 or npus_per_pod <= 0:
        return None
    return 1 if block < npus_per_pod else block // npus_per_pod


def superpod_id(
    document: Document,
    job_labels: dict[str, str],
    resource: str,
    npus_per_pod: int,
    index: int | None,
    dynamic_index: EnvValue | None,
) -> EnvValue | None:
    """`HCCL_LOGIC_SUPERPOD_ID` of an NPU pod; None where the target cannot compute it."""
    if job_labels.get(SUPERPOD_AFFINITY) == "soft" and resource != NPU_RESOURCE:
        return field_ref("metadata.annotations['super-pod-rank']")
    pods = superpod_pods(document, npus_per_pod)
    if pods is None:
        return literal(0)
    if index is not None:
        return literal(index // pods)
    return dynamic_index if pods == 1 else None


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from typing import Any
    from ..model.extension_points import Device
    from . import ascend as _this

    _DEVICE: Device = _this
