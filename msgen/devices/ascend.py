"""Huawei Ascend NPUs (`huawei.com/Ascend910`, `huawei.com/Ascend310P`, `huawei.com/npu`, vNPUs).

Ascend's device plugin writes the devices it allocated into a pod annotation named after the
resource; `ASCEND_VISIBLE_DEVICES` reads it through the downward API, as ascend-operator does.
On host networking, HCCL must bind the node's address: `HCCL_IF_IP` from `status.hostIP`.
"""

from __future__ import annotations

from typing import Any

from ..patch import Patch, field_ref

RESOURCE_PREFIXES = ("huawei.com/Ascend", "huawei.com/npu")
VISIBLE_DEVICES = "ASCEND_VISIBLE_DEVICES"
HCCL_IF_IP = "HCCL_IF_IP"


def contribute(template: dict[str, Any], containers: list[dict[str, Any]]) -> Patch:
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
