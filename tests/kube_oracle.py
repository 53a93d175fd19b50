"""An offline judge of rendered objects, for the property campaign that runs without a server.

Written from Kubernetes' validation rules and the CRDs' markers, separately from
`msgen.checks.apirules` (which checks the *input*, at positions): this reads the *output*, as the API
server would, for the rules the hostile-input rounds found broken. It is a smaller judge than
the real server (tests/test_api_server_differential.py holds msgen to that); each rule here
names the class of bug it catches.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
KEY_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
STRICT_ENV = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$")
INT32 = 2**31 - 1


def label(value: str) -> bool:
    return len(value) <= 63 and bool(LABEL.match(value))


def subdomain(value: str) -> bool:
    return len(value) <= 253 and bool(SUBDOMAIN.match(value))


def qualified(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return (not _ or subdomain(prefix)) and len(name) <= 63 and bool(KEY_NAME.match(name)) and key.count("/") <= 1


def port_name(name: str) -> bool:
    return (len(name) <= 15 and bool(re.match(r"^[-a-z0-9]+$", name)) and bool(re.search("[a-z]", name))
            and "--" not in name and not name.startswith("-") and not name.endswith("-"))  # fmt: skip


def pod_templates(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = obj.get("spec") or {}
    if obj["kind"] == "Pod":
        yield {"metadata": obj["metadata"], "spec": spec}
    elif obj["kind"] in ("Job", "StatefulSet") and "template" in spec:
        yield spec["template"]
    if obj["kind"] == "TrainingRuntime":  # the JobSet Trainer builds from it
        spec = (spec.get("template") or {}).get("spec") or {}
    for replicated in spec.get("replicatedJobs") or []:
        yield replicated["template"]["spec"]["template"]
    for task in spec.get("tasks") or []:
        yield task["template"]


def problems(objects: list[dict[str, Any]], version: tuple[int, int], target: str) -> list[str]:
    """What the API server (or, for a StatefulSet's pods, its controller) would refuse."""
    out: list[str] = []
    if not any(o["kind"] in ("Job", "Pod", "StatefulSet", "JobSet", "TrainJob") for o in objects):
        out.append("exit 0 with no workload: a generator host would prune everything")
    for obj in objects:
        meta, kind = obj["metadata"], obj["kind"]
        where = f"{kind} {meta['name']}"
        if meta.get("namespace") is not None and not label(meta["namespace"]):
            out.append(f"{where}: namespace {meta['namespace']!r}")
        out += [f"{where}: label {k!r}: {v!r}" for k, v in (meta.get("labels") or {}).items()
                if not qualified(k) or not (len(v) <= 63 and LABEL_VALUE.match(v))]  # fmt: skip
        spec = obj.get("spec") or {}
        if kind == "StatefulSet" and len(meta["name"]) > 52:
            out.append(f"{where}: a StatefulSet name over 52 characters: its pods cannot be created")
        if kind == "TrainJob" and not label(meta["name"]):  # the CRD's rules on its name
            out.append(f"{where}: a TrainJob name that is not an RFC 1035 label of 63 characters or fewer")
        if kind == "Service":
            ports = [(p["port"], p.get("protocol", "TCP")) for p in spec.get("ports") or []]
            if len(ports) != len(set(ports)):
                out.append(f"{where}: a port listed twice")
        for field in ("backoffLimit", "ttlSecondsAfterFinished", "maxRetry", "minAvailable", "minMember"):
            if isinstance(spec.get(field), int) and not 0 <= spec[field] <= INT32:
                out.append(f"{where}: {field} {spec[field]} is not an int32")
        if kind == "PodGroup" and obj["apiVersion"].startswith("scheduling.x-k8s.io") and spec["minMember"] < 1:
            out.append(f"{where}: minMember below the CRD's minimum 1")
        if "queue" in spec and not subdomain(spec["queue"]):
            out.append(f"{where}: queue {spec['queue']!r}")
        for name, value in (spec.get("minResources") or {}).items():
            if isinstance(value, float) or not QUANTITY.match(str(value)):
                out.append(f"{where}: minResources {name}: {value!r}")
        for template in pod_templates(obj):
            out += [f"{where}: {p}" for p in _template(template, version, target, kind)]
    return out


def _template(template: dict[str, Any], version: tuple[int, int], target: str, kind: str) -> Iterator[str]:
    spec = template["spec"]
    crd = target in ("jobset", "volcano", "trainjob")
    yield from (f"pod label {k!r}" for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()
                if not qualified(k) or not LABEL_VALUE.match(v))  # fmt: skip
    volumes = [v.get("name", "") for v in spec.get("volumes") or []]
    if len(volumes) != len(set(volumes)) or not all(label(v) for v in volumes):
        yield f"volume names {volumes}"
    for volume in spec.get("volumes") or []:
        if len(set(volume) - {"name"}) > 1:
            yield f"volume {volume['name']!r} has {len(volume) - 1} sources"
    containers = spec.get("containers") or []
    every = containers + (spec.get("initContainers") or [])
    names = [c.get("name", "") for c in every]
    if not containers or len(names) != len(set(names)) or not all(label(n) for n in names):
        yield f"container names {names}"
    if spec.get("dnsPolicy") == "None" and not (spec.get("dnsConfig") or {}).get("nameservers"):
        yield "dnsPolicy None without nameservers"
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (kind == "StatefulSet" or not 1 <= deadline <= INT32):
        yield f"activeDeadlineSeconds {deadline}"
    for field in ("priorityClassName", "serviceAccountName"):
        if spec.get(field) and not subdomain(spec[field]):
            yield f"{field} {spec[field]!r}"
    yield from (f"nodeSelector {k!r}: {v!r}" for k, v in (spec.get("nodeSelector") or {}).items()
                if not qualified(k) or not LABEL_VALUE.match(v))  # fmt: skip
    for container in every:
        yield from _container(container, set(volumes), version, crd, init=container not in containers)
    yield from _host_ports(spec)


def _host_ports(spec: dict[str, Any]) -> Iterator[str]:
    """`validatePodHostNetworkDeps` and `checkHostPortConflicts`, on the pod the controller
    creates: under hostNetwork a port's host port defaults to its containerPort and a regular
    container's must equal it; no host port twice among the regular containers, nor within one
    init container."""
    host_network = spec.get("hostNetwork") is True
    containers = spec.get("containers") or []
    groups = [containers] + [[init] for init in spec.get("initContainers") or []]
    for regular, group in zip([True] + [False] * len(groups), groups, strict=False):
        seen = set()
        for container in group:
            for port in container.get("ports") or []:
                host = port.get("hostPort") or (port["containerPort"] if host_network else 0)
                if host_network and regular and host != port["containerPort"]:
                    yield f"hostPort {host} beside hostNetwork, containerPort {port['containerPort']}"
                key = (port.get("protocol", "TCP"), port.get("hostIP", ""), host)
                if host and key in seen:
                    yield f"host port {key} taken twice in container(s) {[c['name'] for c in group]}"
                seen.add(key)


def _container(container: dict[str, Any], volumes: set[str], version: tuple[int, int], crd: bool, init: bool) -> Iterator[str]:  # noqa: C901 - one branch per container field the API server validates
    name = container.get("name")
    if not container.get("image"):
        yield f"container {name!r} has no image"
    env = container.get("env") or []
    for var in env:
        if version < (1, 32) and not STRICT_ENV.match(var["name"]):
            yield f"env name {var['name']!r} before Kubernetes 1.32"
        if "=" in var["name"] or not var["name"]:
            yield f"env name {var['name']!r}"
        source = var.get("valueFrom")
        if source is not None and (len(source) != 1 or var.get("value")):
            yield f"env {var['name']!r}: valueFrom {sorted(source)} with value {var.get('value')!r}"
    ports = container.get("ports") or []
    port_names = [p["name"] for p in ports if p.get("name")]
    if len(port_names) != len(set(port_names)) or not all(port_name(n) for n in port_names):
        yield f"port names {port_names}"
    mounts = container.get("volumeMounts") or []
    paths = [m.get("mountPath", "") for m in mounts]
    if not all(paths) or len(paths) != len(set(paths)) or any(m.get("name") not in volumes for m in mounts):
        yield f"volume mounts {mounts}"
    for mount in mounts:
        sub = mount.get("subPath", "")
        if sub.startswith("/") or ".." in sub.split("/"):
            yield f"subPath {sub!r}"
    policy = container.get("restartPolicy")
    if policy is not None and version < (1, 35) and (not init or policy != "Always" or version < (1, 29)):
        yield f"container restartPolicy {policy!r} at {version}"
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    for resource, value in [*limits.items(), *requests.items()]:
        if "/" not in resource and resource not in ("cpu", "memory", "ephemeral-storage") and not resource.startswith("hugepages-"):
            yield f"resource name {resource!r}"
        if (crd and isinstance(value, float)) or not QUANTITY.match(str(value)) or str(value).startswith("-"):
            yield f"resource {resource}: {value!r}"
        if "/" in resource and "kubernetes.io/" not in resource and not _whole(value):
            yield f"device {resource}: {value!r} is not a whole number"
    devices = {r for r in [*limits, *requests] if r == "nvidia.com/gpu" or r.startswith(("huawei.com/Ascend", "huawei.com/npu"))}
    if len(devices) > 1:
        yield f"two device resources {sorted(devices)}: which one sets the process count is a guess"
    for resource in requests:
        if "/" in resource and "kubernetes.io/" not in resource and _number(requests[resource]) != _number(limits.get(resource)):
            yield f"device {resource} requested {requests[resource]!r}, limit {limits.get(resource)!r}"
    if crd:
        keys = [var["name"] for var in env]
        port_keys = [(p["containerPort"], p.get("protocol", "TCP")) for p in ports]
        if len(keys) != len(set(keys)) or len(port_keys) != len(set(port_keys)):
            yield "a key listed twice in a custom resource's list-map"


def _whole(value: Any) -> bool:
    """A non-negative whole number (plain or with a decimal exponent), as devices count."""
    from decimal import Decimal, InvalidOperation

    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return False
    return number >= 0 and number == number.to_integral_value()


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
