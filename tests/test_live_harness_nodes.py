"""The live harness's nodes without a cluster: the plan `up --nodes N` follows (names,
addresses, pod CIDRs, paths that must differ between nodes), what `--node-resources` accepts
and what the kubelets reserve for it, and each node's configuration as the templates fill it.

(`tests/live/cluster up --nodes 3` and `node stop|start` themselves run on a machine; the
failure suite, tests/test_live_nodes_*.py, uses them.)
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .test_live_harness import LIVE, harness

topology = harness("topology")
core = harness("core")
node_config = harness("node")
node_runtime = harness("node_runtime")


def plan(count: int, tmp_path: Path) -> list[Any]:
    return list(topology.plan(count, tmp_path, tmp_path / "data", tmp_path / "etc", "192.0.2.7"))


def test_node_1_is_the_single_node_harness(tmp_path: Path) -> None:
    """Node 1 keeps every name and path the harness had before it had more nodes."""
    first = plan(3, tmp_path)[0]
    assert (first.name, first.ip, first.pod_cidr, first.netns, first.host_veth) == (
        "msgen-node", "192.0.2.7", "10.244.0.0/24", None, None)
    assert str(first.containerd_socket) == core.CONTAINERD_SOCKET
    assert (str(first.containerd_root), str(first.cni_conf_dir), str(first.pod_logs_dir), first.cgroup_root) == (
        "/var/lib/containerd", "/etc/cni/net.d", "/var/log/pods", "/")
    assert [first.process(c) for c in ("containerd", "kubelet", "kube-proxy")] == ["containerd", "kubelet", "kube-proxy"]
    assert first.bind == "127.0.0.1" and not first.extra


def test_extra_nodes_share_nothing_a_kubelet_or_containerd_would_claim(tmp_path: Path) -> None:
    nodes = plan(topology.MAX_NODES, tmp_path)
    for field in ("name", "ip", "pod_cidr", "netns", "host_veth", "containerd_root", "containerd_state",
                  "containerd_socket", "cni_conf_dir", "ipam_dir", "kubelet_dir", "pod_logs_dir", "cgroup_root", "etc"):
        values = [getattr(n, field) for n in nodes]
        assert len(set(values)) == len(values), f"two nodes share their {field}: {values}"
    pods = ipaddress.IPv4Network("10.244.0.0/16")
    cidrs = [ipaddress.IPv4Network(n.pod_cidr) for n in nodes]
    assert all(c.subnet_of(pods) and c.prefixlen == 24 for c in cidrs)
    # clear of the /24s the controller-manager hands out first (kwok's fake nodes take them)
    assert all(int(c.network_address.packed[2]) > 100 for c in cidrs[1:])
    for n in nodes[1:]:
        assert ipaddress.IPv4Address(n.ip) in topology.NODE_NETWORK and n.ip != topology.HOST_ADDRESS
        assert len(str(n.host_veth)) <= 15, "an interface name has at most 15 characters"
        assert len(str(n.containerd_socket)) < 108, "a unix socket path has at most 107 characters"
        assert n.gateway == str(ipaddress.IPv4Network(n.pod_cidr).network_address + 1)
        assert n.process("kubelet") == f"{n.name}.kubelet" and n.bind == n.ip
        assert str(n.containerd_state).startswith(str(topology.RUN_ROOT / n.name))
        assert str(n.ipam_dir).startswith(str(topology.RUN_ROOT / n.name)), "the IPs a lost node held go with it"


@pytest.mark.parametrize("name,index", [("msgen-node", 1), ("msgen-node-2", 2), ("msgen-node-16", 16)])
def test_node_names_and_indexes(name: str, index: int, tmp_path: Path) -> None:
    assert topology.index_of(name) == index and topology.name_of(index) == name


@pytest.mark.parametrize("name", ["msgen-node-1", "msgen-node-17", "msgen-node-02", "node-2", "msgen-node-2 ", ""])
def test_other_node_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="no harness node"):
        topology.index_of(name)


@pytest.mark.parametrize("count", [0, -1, topology.MAX_NODES + 1])
def test_node_counts_out_of_range_are_refused(count: int, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=f"--nodes {count}: 1 to {topology.MAX_NODES}"):
        plan(count, tmp_path)


@pytest.mark.parametrize("text,expected", [
    ("", {}),
    ("cpu=1500m,memory=6Gi", {"cpu": "1500m", "memory": "6Gi"}),
    (" nvidia.com/gpu=4 , huawei.com/npu=0", {"nvidia.com/gpu": "4", "huawei.com/npu": "0"}),
    ("cpu=2,memory=1073741824", {"cpu": "2", "memory": "1073741824"}),
])
def test_node_resources_accepted(text: str, expected: dict[str, str]) -> None:
    assert topology.parse_resources(text) == expected


@pytest.mark.parametrize("text", ["cpu", "cpu=", "cpu=1.5", "cpu=2Gi", "memory=100m", "nvidia.com/gpu=4m",
                                  "gpu=4", "nvidia.com/gpu=-1", "cpu=1;rm -rf /", "memory=1Pi", "Nvidia.com/gpu=1x"])
def test_node_resources_refused(text: str) -> None:
    with pytest.raises(ValueError, match="--node-resources"):
        topology.parse_resources(text)


def test_devices_default_and_removed() -> None:
    assert topology.devices({}) == topology.DEVICES
    assert topology.devices({"huawei.com/npu": "0", "nvidia.com/gpu": "2", "example.com/fpga": "1", "cpu": "1"}) == {
        "nvidia.com/gpu": "2", "huawei.com/Ascend910": "8", "example.com/fpga": "1"}


def test_system_reserved_leaves_what_was_asked() -> None:
    gib = 1 << 30
    assert topology.system_reserved({}, 2, 24 * gib) == {}
    reserved = topology.system_reserved({"cpu": "1500m", "memory": "6Gi"}, 2, 24 * gib)
    assert reserved == {"cpu": "500m", "memory": f"{(24 * gib - topology.EVICTION_MEMORY - 6 * gib) >> 10}Ki"}
    # allocatable = capacity - reserved - the eviction threshold, as the kubelet computes it
    allocatable = 24 * gib - int(reserved["memory"][:-2]) * 1024 - topology.EVICTION_MEMORY
    assert allocatable == 6 * gib
    assert topology.system_reserved({"cpu": "2"}, 2, gib) == {}
    for asked in ({"cpu": "3"}, {"cpu": "0"}, {"memory": "24Gi"}):
        with pytest.raises(ValueError, match="--node-resources"):
            topology.system_reserved(asked, 2, 24 * gib)


def test_the_topology_is_remembered(tmp_path: Path) -> None:
    path = tmp_path / "topology.json"
    assert topology.load(path) == topology.Topology(1, {})
    path.write_text(topology.Topology(3, {"cpu": "1"}).to_json())
    assert topology.load(path) == topology.Topology(3, {"cpu": "1"})
    path.write_text("{not json")
    assert topology.load(path) == topology.Topology(1, {})


def render(tmp_path: Path, index: int, name: str, resources: str = "") -> str:
    h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
    h.topology_file.write_text(topology.Topology(3, topology.parse_resources(resources)).to_json())
    text: str = node_config._config(h, name, node=h.nodes()[index - 1]).read_text()
    assert not re.search(r"\{[a-z_]+\}", text), f"an unfilled placeholder in {name}"
    return text


def test_an_extra_nodes_configuration_is_its_own(tmp_path: Path) -> None:
    kubelet = render(tmp_path, 2, "kubelet.yaml")
    home = tmp_path.resolve()
    for line in ["healthzBindAddress: 10.99.0.2", "cgroupRoot: /msgen-harness/msgen-node-2",
                 f"podLogsDir: {home}/nodes/msgen-node-2/pod-logs",
                 "containerRuntimeEndpoint: unix:///run/msgen-harness/msgen-node-2/containerd/containerd.sock",
                 f"tlsCertFile: {home}/pki/kubelet-serving-msgen-node-2.crt", "podCIDR: 10.244.102.0/24"]:
        assert line in kubelet.splitlines(), line
    containerd = render(tmp_path, 3, "containerd.toml")
    for line in [f'root = "{home}/nodes/msgen-node-3/containerd"', 'state = "/run/msgen-harness/msgen-node-3/containerd"',
                 'address = "/run/msgen-harness/msgen-node-3/containerd/containerd.sock"',
                 "netns_mounts_under_state_dir = true", f'conf_dir = "{home}/etc/nodes/msgen-node-3/cni"']:
        assert line in [x.strip() for x in containerd.splitlines()], line
    proxy = render(tmp_path, 2, "kube-proxy.yaml")
    assert "hostnameOverride: msgen-node-2" in proxy and "healthzBindAddress: 10.99.0.2:10256" in proxy
    assert f"kubeconfig: {home}/etc/nodes/msgen-node-2/kube-proxy.kubeconfig" in proxy
    cni = json.loads(harness("node_runtime").cni_config(plan(2, tmp_path)[1]))
    assert cni["plugins"][0]["ipam"]["ranges"] == [[{"subnet": "10.244.102.0/24", "gateway": "10.244.102.1"}]]
    assert cni["plugins"][0]["ipam"]["dataDir"] == "/run/msgen-harness/msgen-node-2/cni-networks"


def test_node_1s_configuration_names_the_defaults(tmp_path: Path) -> None:
    """What node 1's kubelet now says explicitly is what it took by default before."""
    kubelet = render(tmp_path, 1, "kubelet.yaml").splitlines()
    assert "cgroupRoot: /" in kubelet and "podLogsDir: /var/log/pods" in kubelet and "systemReserved:" in kubelet
    assert "healthzBindAddress: 127.0.0.1" in kubelet
    assert "containerRuntimeEndpoint: unix:///run/containerd/containerd.sock" in kubelet
    containerd = [x.strip() for x in render(tmp_path, 1, "containerd.toml").splitlines()]
    assert 'root = "/var/lib/containerd"' in containerd and "netns_mounts_under_state_dir = false" in containerd
    assert json.loads(harness("node_runtime").cni_config(plan(1, tmp_path)[0]))["plugins"][0]["ipam"]["dataDir"] \
        == "/var/lib/cni/networks"


def test_node_resources_reach_the_kubelet(tmp_path: Path) -> None:
    kubelet = render(tmp_path, 2, "kubelet.yaml", "cpu=500m")
    assert re.search(r"^systemReserved:\n  cpu: \d+m$", kubelet, re.M), kubelet


def test_the_command_line_names_the_node_commands() -> None:
    done = subprocess.run([sys.executable, str(LIVE / "cluster"), "up", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--nodes N" in done.stdout and "--node-resources" in done.stdout
    done = subprocess.run([sys.executable, str(LIVE / "cluster"), "node", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "{stop,start}" in done.stdout


def test_an_extra_node_shares_node_1s_image_blobs(tmp_path: Path) -> None:
    """A blob both containerds hold becomes one file (a hard link to node 1's); a blob of the
    same name but another size, or only one node's, stays as it is; sharing twice saves nothing."""
    first, extra = plan(2, tmp_path)
    first = dataclasses.replace(first, containerd_root=tmp_path / "first-containerd")  # not /var/lib/containerd
    mine, theirs = extra.containerd_root / node_runtime.BLOBS, first.containerd_root / node_runtime.BLOBS
    mine.mkdir(parents=True)
    theirs.mkdir(parents=True)
    for folder in (mine, theirs):
        (folder / "aaaa").write_bytes(b"layer" * 100)
    (mine / "bbbb").write_bytes(b"short")
    (theirs / "bbbb").write_bytes(b"longer!")
    (mine / "cccc").write_bytes(b"only mine")
    assert node_runtime.share_content(first, extra) == 500
    assert (mine / "aaaa").stat().st_ino == (theirs / "aaaa").stat().st_ino
    assert (mine / "aaaa").read_bytes() == b"layer" * 100
    assert (mine / "bbbb").read_bytes() == b"short" and (mine / "cccc").read_bytes() == b"only mine"
    assert sorted(p.name for p in mine.iterdir()) == ["aaaa", "bbbb", "cccc"]
    assert node_runtime.share_content(first, extra) == 0
