"""The harness's nodes as a plan: names, addresses, pod CIDRs, directories and process names.

Pure (no process, no file written), so its rules are unit-tested (tests/test_live_harness.py).

Node 1, `msgen-node`, is the node the single-node harness always had: it runs in the host's
network namespace with the host's address, containerd at its usual paths and pod CIDR
10.244.0.0/24. `up --nodes N` adds nodes 2..N, `msgen-node-<i>`, each a network namespace of
its own (`msgen-node-<i>`) joined to the host by a veth pair (`msgen-n<i>` on the host, `eth0`
inside): address 10.99.0.<i>, pod CIDR 10.244.<100+i>.0/24 (clear of the low /24s the
controller-manager gives kwok's nodes), its own containerd (state under
`/run/msgen-harness/<node>`, cleared when the node is lost, as a reboot clears /run; images
and containers' layers under `<home>/nodes/<node>/containerd`, kept), its own kubelet (cgroup
root `/msgen-harness/<node>`, pod logs under `<home>/nodes/<node>/pod-logs`: two kubelets
would each delete what they take for the other's orphans) and its own kube-proxy. The host
routes each node's pod CIDR to its address; a node's default route is the host, so pods,
Services and DNS reach across nodes through it.

The extra nodes are tainted `msgen-harness/extra-node=true:NoSchedule`: the harness is shared,
and a pod of a suite that did not ask for them (and whose image only node 1 may hold) stays on
`msgen-node`; the multi-node suites tolerate the taint.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass
from pathlib import Path

FIRST = "msgen-node"
MAX_NODES = 16
NODE_NETWORK = ipaddress.IPv4Network("10.99.0.0/24")
HOST_ADDRESS = "10.99.0.1"  # the host's end of every node's veth
EXTRA_TAINT = {"key": "msgen-harness/extra-node", "value": "true", "effect": "NoSchedule"}
EXTRA_LABEL = ("msgen-harness/extra-node", "true")
RUN_ROOT = Path("/run/msgen-harness")
CGROUP_PARENT = "/msgen-harness"
#: What each node advertises unless `--node-resources` says otherwise: no limit on cpu and
#: memory (the kubelet's own capacity), and fake devices as plain numbers.
DEVICES = {"nvidia.com/gpu": "8", "huawei.com/Ascend910": "8", "huawei.com/npu": "8"}
EVICTION_MEMORY = 200 << 20  # kubelet.yaml's evictionHard memory.available: 200Mi


@dataclass(frozen=True)
class Node:
    """One node's names, addresses and paths."""

    index: int
    name: str
    ip: str
    pod_cidr: str
    netns: str | None  # None: the host's network namespace
    host_veth: str | None
    containerd_root: Path
    containerd_state: Path
    containerd_socket: Path
    cni_conf_dir: Path
    ipam_dir: Path
    kubelet_dir: Path
    pod_logs_dir: Path
    cgroup_root: str
    etc: Path  # where its configuration files go

    @property
    def extra(self) -> bool:
        return self.index > 1

    def process(self, component: str) -> str:
        """The harness's name of the node's `containerd`, `kubelet` or `kube-proxy` (pid file, log)."""
        return component if not self.extra else f"{self.name}.{component}"

    @property
    def bind(self) -> str:
        """Where the node's health and metrics endpoints listen: the host reaches an extra
        node's at its address (127.0.0.1 in its namespace is its own)."""
        return "127.0.0.1" if not self.extra else self.ip

    @property
    def gateway(self) -> str:
        """The pod network's gateway: the CNI bridge's address, the CIDR's first."""
        return str(next(ipaddress.IPv4Network(self.pod_cidr).hosts()))


def name_of(index: int) -> str:
    return FIRST if index == 1 else f"{FIRST}-{index}"


def index_of(name: str) -> int:
    """The index of a node name the harness gives; ValueError for any other."""
    if name == FIRST:
        return 1
    found = re.fullmatch(rf"{FIRST}-([2-9]|1[0-6])", name)
    if not found:
        raise ValueError(f"no harness node {name!r}: the nodes are {FIRST}, {FIRST}-2 ... {FIRST}-{MAX_NODES}")
    return int(found.group(1))


def node(index: int, home: Path, data: Path, etc: Path, host_ip: str) -> Node:
    if not 1 <= index <= MAX_NODES:
        raise ValueError(f"node index {index}: 1 to {MAX_NODES}")
    if index == 1:
        return Node(1, FIRST, host_ip, "10.244.0.0/24", None, None, Path("/var/lib/containerd"),
                    Path("/run/containerd"), Path("/run/containerd/containerd.sock"), Path("/etc/cni/net.d"),
                    Path("/var/lib/cni/networks"), data / "kubelet", Path("/var/log/pods"), "/", etc)
    name = name_of(index)
    state = RUN_ROOT / name
    own = home / "nodes" / name
    return Node(index, name, str(NODE_NETWORK.network_address + index), f"10.244.{100 + index}.0/24", name,
                f"msgen-n{index}", own / "containerd", state / "containerd", state / "containerd" / "containerd.sock",
                etc / "nodes" / name / "cni", state / "cni-networks", own / "kubelet", own / "pod-logs",
                f"{CGROUP_PARENT}/{name}", etc / "nodes" / name)


def plan(count: int, home: Path, data: Path, etc: Path, host_ip: str) -> list[Node]:
    if not 1 <= count <= MAX_NODES:
        raise ValueError(f"--nodes {count}: 1 to {MAX_NODES}")
    return [node(i, home, data, etc, host_ip) for i in range(1, count + 1)]


# --- what each node advertises ----------------------------------------------------------------

_QUANTITY = re.compile(r"^([0-9]+)(m|Ki|Mi|Gi|Ti)?$")
_UNITS = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
_RESOURCE = re.compile(r"^(cpu|memory|[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")


def parse_resources(text: str) -> dict[str, str]:
    """`cpu=1500m,memory=6Gi,nvidia.com/gpu=4`: what each node advertises. cpu in cores or
    millicores, memory in bytes or Ki/Mi/Gi/Ti, a device (`domain/name`) as a whole number;
    a device not named keeps its default (`DEVICES`), `name=0` removes it."""
    wanted: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        quantity = _QUANTITY.match(value)
        if not sep or not _RESOURCE.match(key) or not quantity:
            raise ValueError(f"--node-resources {item!r}: NAME=QUANTITY, NAME cpu, memory or a device domain/name")
        unit = quantity.group(2)
        if (key == "cpu" and unit not in (None, "m")) or (key == "memory" and unit == "m") \
                or (key not in ("cpu", "memory") and unit is not None):
            raise ValueError(f"--node-resources {item!r}: cpu in cores or m, memory in bytes or Ki/Mi/Gi/Ti, "
                             "a device as a whole number")
        wanted[key] = value
    return wanted


def devices(resources: dict[str, str]) -> dict[str, str]:
    """The extended resources a node's status gets patched with."""
    found = {**DEVICES, **{k: v for k, v in resources.items() if k not in ("cpu", "memory")}}
    return {k: v for k, v in found.items() if v != "0"}


def millicores(value: str) -> int:
    return int(value[:-1]) if value.endswith("m") else int(value) * 1000


def bytes_of(value: str) -> int:
    found = _QUANTITY.match(value)
    assert found, value
    return int(found.group(1)) * _UNITS[found.group(2)]


def system_reserved(resources: dict[str, str], host_cpus: int, host_memory: int) -> dict[str, str]:
    """The kubelet's `systemReserved` that leaves `cpu` and `memory` allocatable (the kubelet
    reports the machine's own capacity, and allocatable = capacity - reserved - the memory
    eviction threshold); empty when neither is asked."""
    reserved = {}
    if "cpu" in resources:
        want, have = millicores(resources["cpu"]), host_cpus * 1000
        if not 0 < want <= have:
            raise ValueError(f"--node-resources cpu={resources['cpu']}: the machine has {host_cpus} cores")
        if want < have:
            reserved["cpu"] = f"{have - want}m"
    if "memory" in resources:
        want, have = bytes_of(resources["memory"]), host_memory - EVICTION_MEMORY
        if not 0 < want <= have:
            raise ValueError(f"--node-resources memory={resources['memory']}: at most {have >> 20}Mi here "
                             "(the machine's memory less the kubelet's eviction threshold)")
        if want < have:
            reserved["memory"] = f"{(have - want) >> 10}Ki"
    return reserved


# --- the remembered topology ------------------------------------------------------------------

@dataclass(frozen=True)
class Topology:
    count: int
    resources: dict[str, str]

    def to_json(self) -> str:
        return json.dumps({"nodes": self.count, "resources": self.resources}, sort_keys=True) + "\n"


def load(path: Path) -> Topology:
    """What `up` last started (one node when it never said)."""
    try:
        saved = json.loads(path.read_text())
        return Topology(int(saved["nodes"]), {str(k): str(v) for k, v in saved.get("resources", {}).items()})
    except (OSError, ValueError, KeyError, TypeError):
        return Topology(1, {})
