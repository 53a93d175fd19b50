"""Structure-aware mutations of real jobs: the inputs of the hostile-input campaigns.

Seeds are the samples and the operators' own job files (../shared/upstream, when present).
A mutation edits what the API server judges: pod-template values (env, ports and host ports
in the main container, sidecars and init containers, host networking, volumes, mounts,
containers, resources, DNS, deadlines, names, node selectors), the job's metadata,
run and scheduling policies, replica counts and names, with values from pools that hold both
valid values and the near misses that broke msgen before. The same mutations serve the
hypothesis campaign (choices drawn by hypothesis, CI, no server) and the differential test
(choices from a seeded random generator, judged by a real API server), through `Chooser`.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml

from msgen import kinds
from msgen.model.plan import Options
from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, shared_files

T = TypeVar("T")

VERSIONS = ["1.25", "1.28", "1.29", "1.31", "1.32", "1.34", "1.35", "1.36", "1.37"]


class Chooser(Protocol):
    def choice(self, options: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...


class RandomChooser:
    """Choices from a seeded generator: the same seed gives the same inputs."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def choice(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


class DrawChooser:
    """Choices drawn by hypothesis (which then shrinks a failing input)."""

    def __init__(self, data: Any):
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def choice(self, options: Sequence[T]) -> T:
        return self.data.draw(self.st.sampled_from(options))  # type: ignore[no-any-return]

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(self.st.integers(low, high))  # type: ignore[no-any-return]


def seeds() -> list[tuple[str, dict[str, Any]]]:
    """(name, job) for every sample and upstream job file of a kind msgen compiles."""
    files = sorted(SAMPLES.rglob("*.yaml")) + shared_files("upstream", "**/*.yaml")
    out = []
    for path in files:
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(doc, dict) and kinds.lookup(doc.get("apiVersion"), doc.get("kind")):
                out.append((f"{_short(path)}#{i}", doc))
    return out


def _short(path: Path) -> str:
    return "/".join(path.parts[-2:])


def pick(c: Chooser, good: Sequence[T], bad: Sequence[T]) -> T:
    """A valid value three times in four, else a near miss: most inputs then reach the later
    stages (and the cluster) with one thing wrong, or none."""
    return c.choice(bad) if c.integer(0, 3) == 0 else c.choice(good)


NAMES = (["ok", "a.b", "ok-2", "x" * 15, "x" * 16, "1abc", "a-b.c-d"],
         ["Bad", "bad_name", "-x", "x-", "", "a" * 64, "b" * 254, "$(FOO)", "UPPER", "a--b", "a_b.c", "."])  # fmt: skip
ENV_NAMES = (["A", "MY.VAR", "ok_1", "-x", "x-y"], ["1A B", "a=b", "", "\u00e9", ".", "..", "..x", "A\tB"])
LABEL_KEYS = (["ok", "example.com/x", "k8s.io/" + "a" * 63, "ok_key.2", "A"],
              ["-x", "Example.com/x", "a/b/c", "/x", "x/", "a" * 64])  # fmt: skip
LABEL_VALUES = (["ok", "", "x.y_z", "a" * 63], ["bad value", "-x", "a" * 64, "$(FOO)"])
QUANTITIES: tuple[list[Any], list[Any]] = (
    [1, 0, "1", "0.5", "500m", "1Gi", "1e3", "1.5Gi", "+1", 2.5, "1.", ".5", "2Ki", "1k"],
    [-1, "-1", "abc", "1e1000", "1K", "1.5.1"],
)
WHOLE = ([1, 2, "8", 0], [0.5, "0.5", -1, "1e1000", "x"])
RESOURCES = (["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage", "example.com/foo", "huawei.com/Ascend910"],
             ["CPU", "gpu", "hugepages-2Mi", "kubernetes.io/x", "a/b/c", "example.com/", "requests.cpu", "huawei.com/Ascend310P"])  # fmt: skip
INTS = ([1, 2, 3, 60, 2**31 - 1], [0, -1, 2**31, 2**63 - 1, 2**63])
FIELD_PATHS = (["metadata.name", "metadata.labels['app']", "spec.nodeName", "status.hostIPs", "status.podIP"],
               ["metadata.labels", "spec.schedulerName", "metadata.annotations['a b']", "bogus", ""])  # fmt: skip
PORT_NAMES = (["p", "metrics", "a" * 15, "mxjob-port", "msjob-port"], ["Bad_Port", "a" * 16, "1234", "a--b", "-a", ""])
PATHS = (["/data", "/opt/x", "rel/ok"], ["", "../up", "/data/../x", "/tmp/result", "/tmp/test"])
VOLUME_NAMES = (["v1", "v2", "cache"], ["ms-mnist", "training-result", "Bad", "", "v" * 64])


def env_entry(c: Chooser) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": pick(c, *ENV_NAMES)}
    how = c.integer(0, 8)
    if how <= 2:
        entry["value"] = c.choice(["1", "", "x y"])
    elif how == 3:
        entry["valueFrom"] = {}
    elif how == 4:
        entry["valueFrom"] = {"fieldRef": {"fieldPath": pick(c, *FIELD_PATHS)}}
        if c.integer(0, 3) == 0:
            entry["value"] = "x"
    elif how == 5:
        entry["valueFrom"] = {"configMapKeyRef": {"name": pick(c, *NAMES), "key": c.choice(["k", "", "a b", ".."])}}
    elif how == 6:
        entry["valueFrom"] = {"resourceFieldRef": {"resource": c.choice(["limits.cpu", "requests.memory", "cpu", ""]),
                                                   "divisor": pick(c, *QUANTITIES)}}  # fmt: skip
    elif how == 7:
        entry["valueFrom"] = {"secretKeyRef": {"name": "s", "key": "k"}, "fieldRef": {"fieldPath": "metadata.name"}}
    else:
        entry["valueFrom"] = {"fileKeyRef": {"volumeName": "v", "path": "p", "key": "K"}}
    return entry


#: Container ports: msgen's own defaults (2222, 9091: MindSpore's and MXNet's), and a few more.
CONTAINER_PORTS = [1, 2222, 9091, 80, 7000]


def port_entry(c: Chooser) -> dict[str, Any]:
    """A container port; a third of them with a hostPort (the containerPort, another one, or a
    port others take too) and some with a hostIP."""
    port: dict[str, Any] = {"containerPort": c.choice(CONTAINER_PORTS)}
    if c.integer(0, 4):
        port["name"] = pick(c, *PORT_NAMES)
    if c.integer(0, 3) == 0:
        port["protocol"] = c.choice(["UDP", "TCP"])
    if c.integer(0, 2) == 0:
        port["hostPort"] = c.choice([port["containerPort"], 7000, 2222, 30000])
        if c.integer(0, 3) == 0:
            port["hostIP"] = c.choice(["10.0.0.1", "0.0.0.0"])
    return port


def volume(c: Chooser) -> dict[str, Any]:
    sources: list[dict[str, Any]] = [
        {"emptyDir": {}}, {"emptyDir": {"sizeLimit": pick(c, *QUANTITIES)}},
        {"hostPath": {"path": pick(c, *PATHS)}}, {"hostPath": {"path": "/x", "type": c.choice(["Directory", "Bogus"])}},
        {"configMap": {"name": pick(c, *NAMES)}}, {"secret": {"secretName": c.choice(["s", ""]), "defaultMode": c.choice([420, 511, 512, -1])}},
        {"persistentVolumeClaim": {"claimName": c.choice(["c", ""])}}, {},
        {"emptyDir": {}, "hostPath": {"path": "/x"}},
        {"configMap": {"name": "c", "items": [{"key": c.choice(["k", ""]), "path": pick(c, *PATHS)}]}},
    ]  # fmt: skip
    return {"name": pick(c, *VOLUME_NAMES), **c.choice(sources)}


def container_edit(c: Chooser, container: dict[str, Any], pod: dict[str, Any]) -> None:
    how = c.integer(0, 11)
    if how <= 2:
        container.setdefault("env", []).append(env_entry(c))
    elif how == 3:
        container.setdefault("ports", []).append(port_entry(c))
    elif how == 4:
        mount = {"name": pick(c, *VOLUME_NAMES), "mountPath": pick(c, *PATHS)}
        if c.integer(0, 2) == 0:
            mount["subPath"] = pick(c, *PATHS)
        container.setdefault("volumeMounts", []).append(mount)
    elif how <= 6:
        resources = container.setdefault("resources", {})
        name = pick(c, *RESOURCES)
        value = pick(c, *WHOLE) if "/" in name else pick(c, *QUANTITIES)
        for section in c.choice([["limits"], ["requests"], ["limits", "requests"]]):
            resources.setdefault(section, {})[name] = value
    elif how == 7:
        container["name"] = c.choice(NAMES[0] + NAMES[1] + ["mindspore", "mxnet", "caffe2"])
    elif how == 8:
        if c.integer(0, 1):
            container["image"] = ""
        else:
            container.pop("image", None)
    elif how == 9:
        container["restartPolicy"] = c.choice(["Always", "Never", "OnFailure", "Sometimes"])
    elif how == 10:
        entry: dict[str, Any] = {c.choice(["configMapRef", "secretRef"]): {"name": pick(c, *NAMES)}}
        if c.integer(0, 1):
            entry["prefix"] = pick(c, *ENV_NAMES)
        container.setdefault("envFrom", []).append(entry)
    else:
        for field in ("env", "ports", "volumeMounts"):
            if container.get(field):
                container[field].append(copy.deepcopy(c.choice(container[field])))
                return


def pod_edit(c: Chooser, template: dict[str, Any]) -> None:  # noqa: C901 - one branch per mutation class, chosen by number
    spec = template.setdefault("spec", {})
    how = c.integer(0, 15)
    if how <= 1:
        added = volume(c)
        if added["name"] in VOLUME_NAMES[0]:  # a fresh name: a clash is the next branch's
            added["name"] = f"vol-{len(spec.get('volumes') or [])}"
        spec.setdefault("volumes", []).append(added)
    elif how == 2 and spec.get("volumes"):
        spec["volumes"].append(copy.deepcopy(c.choice(spec["volumes"])))
    elif how == 3:
        init: dict[str, Any] = {"name": c.choice(NAMES[0] + ["init-a", "mindspore", "Bad"]), "image": "x"}
        if c.integer(0, 1):
            init["restartPolicy"] = c.choice(["Always", "Never", "OnFailure"])
        if c.integer(0, 2) == 0:
            init["ports"] = [port_entry(c) for _ in range(c.integer(1, 2))]
        spec.setdefault("initContainers", []).append(init)
    elif how == 14:
        spec["hostNetwork"] = c.choice([True, True, False])
    elif how == 15:
        sidecar: dict[str, Any] = {"name": c.choice(["side", "metrics", "side-2"]), "image": "x"}
        if c.integer(0, 3):
            sidecar["ports"] = [port_entry(c) for _ in range(c.integer(1, 2))]
        spec.setdefault("containers", []).append(sidecar)
    elif how == 4:
        spec["dnsPolicy"] = c.choice(["None", "ClusterFirst", "Default"])
        if c.integer(0, 2) == 0:
            spec["dnsConfig"] = {"nameservers": c.choice([[], ["1.1.1.1"], ["x"], ["1.1.1.1"] * 4]),
                                 "searches": c.choice([["ok.example"], ["Bad_"], ["a_b"], ["."]])}  # fmt: skip
    elif how == 5:
        spec["activeDeadlineSeconds"] = pick(c, *INTS)
    elif how <= 8:
        spec[c.choice(["priorityClassName", "serviceAccountName", "schedulerName", "nodeName",
                       "hostname", "subdomain"])] = pick(c, *NAMES)  # fmt: skip
    elif how == 9:
        spec["nodeSelector"] = {pick(c, *LABEL_KEYS): pick(c, *LABEL_VALUES)}
    elif how == 10:
        meta = template.setdefault("metadata", {})
        field = c.choice(["labels", "annotations"])
        meta[field] = {**(meta.get(field) or {}), pick(c, *LABEL_KEYS): pick(c, *LABEL_VALUES)}
    elif how == 11:
        spec["imagePullSecrets"] = [{"name": pick(c, *NAMES)}]
    else:
        containers = [x for x in (spec.get("containers") or []) + (spec.get("initContainers") or [])
                      if isinstance(x, dict)]  # fmt: skip
        if containers:
            container_edit(c, c.choice(containers), spec)


def templates(job: Any) -> list[dict[str, Any]]:
    """Every pod template in a job (any mapping whose `spec` has a list of containers)."""
    found: list[dict[str, Any]] = []
    stack = [job]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            spec = node.get("spec")
            if isinstance(spec, dict) and isinstance(spec.get("containers"), list):
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def job_edit(c: Chooser, job: dict[str, Any]) -> None:
    meta = job.setdefault("metadata", {})
    spec = job.setdefault("spec", {})
    how = c.integer(0, 9)
    if how == 0:
        meta["namespace"] = pick(c, *NAMES)
    elif how == 1:
        meta["labels"] = {**(meta.get("labels") or {}), pick(c, *LABEL_KEYS): pick(c, *LABEL_VALUES)}
    elif how == 2:
        meta["name"] = c.choice(["j", "a" * c.integer(38, 56), "Bad", "x" * 63])
    elif how <= 5:
        policy = spec if "runPolicy" not in spec and c.integer(0, 1) else spec.setdefault("runPolicy", {})
        field = c.choice(["backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"])
        policy[field] = pick(c, *INTS)
    elif how <= 7:
        policy = spec.setdefault("runPolicy", {}).setdefault("schedulingPolicy", {})
        field = c.choice(["minAvailable", "queue", "minResources", "priorityClass"])
        policy[field] = {
            "minAvailable": pick(c, *INTS), "queue": pick(c, *NAMES),
            "minResources": {pick(c, *RESOURCES): pick(c, *QUANTITIES)}, "priorityClass": pick(c, *NAMES),
        }[field]  # fmt: skip
    elif how == 8:
        for key in ("msReplicaSpecs", "mxReplicaSpecs", "replicaSpecs"):
            if key in spec:
                spec[key] = {} if isinstance(spec[key], dict) else []
                return
    else:
        holders = [n for n in _mappings(spec) if isinstance(n.get("replicas"), int)]
        if holders:
            c.choice(holders)["replicas"] = c.choice([0, 1, 2, 3, 5])


def _mappings(node: Any) -> list[dict[str, Any]]:
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def scalar_edit(c: Chooser, job: dict[str, Any]) -> None:
    """Any value of the job (probes, security contexts, ... whatever the seed holds) replaced
    by one of the pools' values."""
    spots = [(node, key) for node in _mappings(job) for key, value in node.items()
             if not isinstance(value, (dict, list)) and key not in ("apiVersion", "kind")]  # fmt: skip
    if spots:
        node, key = c.choice(spots)
        node[key] = c.choice([pick(c, *NAMES), pick(c, *INTS), pick(c, *QUANTITIES), pick(c, *LABEL_VALUES)])


def mutate(c: Chooser, job: dict[str, Any]) -> dict[str, Any]:
    """1 to 3 edits of a copy of `job`, most of them in its pod templates."""
    job = copy.deepcopy(job)
    for _ in range(c.choice([1, 1, 2, 3])):
        found = templates(job)
        how = c.integer(0, 7)
        if found and how <= 4:
            pod_edit(c, c.choice(found))
        elif how == 5:
            scalar_edit(c, job)
        else:
            job_edit(c, job)
    return job


def options(c: Chooser) -> Options:
    return Options(
        target=c.choice(TARGETS),  # type: ignore[arg-type]  # a name of targets.NAMES
        kube_version=tuple(int(p) for p in c.choice(VERSIONS).split(".")),  # type: ignore[arg-type]
        gang_scheduler=c.choice(["none", "none", "volcano", "scheduler-plugins"]),
        scheduler_address=c.choice(["cluster-ip", "dns"]),
    )


def generate(c: Chooser, pool: list[tuple[str, dict[str, Any]]]) -> tuple[str, str, Options]:
    """(seed name, input text, options) for one generated input."""
    name, job = c.choice(pool)
    return name, yaml.safe_dump(mutate(c, job), sort_keys=False), options(c)


Generator = Callable[[Chooser], tuple[str, str, Options]]
