"""The rare classes of the hostile-input rounds, each as one edit of a seed job.

The generator of `tests/mutations.py` finds them once in thousands of inputs (a port named
twice, a StatefulSet name of 53, two devices, host ports); the property campaign applies each
here as the edit, on any seed and target (`TARGETED`).
"""

from __future__ import annotations

from typing import Any

from .mutations import Chooser, port_entry, templates


def _main_containers(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [t["spec"]["containers"][0] for t in templates(job) if t["spec"]["containers"]
            and isinstance(t["spec"]["containers"][0], dict)]  # fmt: skip


def two_devices(c: Chooser, job: dict[str, Any]) -> None:
    """Class 6: two device resources in one container."""
    pair = c.choice([("huawei.com/Ascend910", "huawei.com/Ascend310P"), ("nvidia.com/gpu", "huawei.com/npu"),
                     ("huawei.com/Ascend910", "huawei.com/Ascend910")])  # fmt: skip
    for container in _main_containers(job)[: c.integer(1, 2)]:
        limits = container.setdefault("resources", {}).setdefault("limits", {})
        limits[pair[0]], limits[pair[1]] = c.choice([1, 8, 16]), c.choice([1, 2])


def port_named_twice(c: Chooser, job: dict[str, Any]) -> None:
    """Class 4: a port the Service lists, under a second name."""
    for container in _main_containers(job)[:1]:
        port = c.choice([2222, 9091, 23456, 80])
        container.setdefault("ports", []).append({"name": c.choice(["other", "metrics"]), "containerPort": port})


def long_name(c: Chooser, job: dict[str, Any]) -> None:
    """Class 5: names near the StatefulSet limit."""
    job.setdefault("metadata", {})["name"] = "s" * c.integer(40, 56)


def own_object_values(c: Chooser, job: dict[str, Any]) -> None:
    """Class 4: counts and names msgen writes into its own objects."""
    spec = job.setdefault("spec", {})
    policy = spec.setdefault("runPolicy", {}) if "runPolicy" in spec or c.integer(0, 1) else spec
    field = c.choice(["backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"])
    policy[field] = c.choice([2**31 - 1, 2**31, 2**63 - 1, 2**63])
    scheduling = spec.setdefault("runPolicy", {}).setdefault("schedulingPolicy", {})
    scheduling[c.choice(["minAvailable", "queue", "minResources"])] = c.choice([0, "UPPER", {"memory": "abc"}, {"cpu": 2.5}])


def crd_duplicates(c: Chooser, job: dict[str, Any]) -> None:
    """Class 2 (jobset, volcano): keys their CRDs' list-maps refuse twice."""
    for container in _main_containers(job)[:1]:
        if c.integer(0, 1):
            container["env"] = [*(container.get("env") or []), {"name": "DUP", "value": "1"}, {"name": "DUP", "value": "2"}]
        else:
            container["ports"] = [*(container.get("ports") or []), {"name": "a", "containerPort": 7}, {"name": "b", "containerPort": 7}]


def host_ports(c: Chooser, job: dict[str, Any]) -> None:
    """Host networking, host ports, and ports across the main container, a sidecar and an
    init container (the server refuses a hostPort other than the containerPort under
    hostNetwork, and a host port taken twice in a pod)."""
    for template in templates(job)[: c.integer(1, 2)]:
        spec = template["spec"]
        if c.integer(0, 2):
            spec["hostNetwork"] = True
        containers = [x for x in spec["containers"] if isinstance(x, dict)]
        for container in containers[:1]:
            container["ports"] = [*(container.get("ports") or []), port_entry(c)]
        if c.integer(0, 1):
            spec["containers"] = [*spec["containers"], {"name": "side", "image": "x", "ports": [port_entry(c)]}]
        if c.integer(0, 1):
            init = {"name": "init-a", "image": "x", "ports": [port_entry(c) for _ in range(c.integer(1, 2))]}
            if c.integer(0, 1):
                init["restartPolicy"] = "Always"
            spec["initContainers"] = [*(spec.get("initContainers") or []), init]


TARGETED = {"two devices": two_devices, "port named twice": port_named_twice, "long name": long_name,
            "own objects' values": own_object_values, "CRD duplicates": crd_duplicates,
            "host ports": host_ports}  # fmt: skip
