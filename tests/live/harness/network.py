"""The extra nodes' network: a network namespace per node, a veth pair to the host, the routes
between the nodes' pod CIDRs, and the host's FORWARD rule (see topology.py for the plan).

Routed, not bridged: each node's `eth0` has its /32 address and a default route to the host's
end of the veth (10.99.0.1, on every host end); the host routes the node's address and pod CIDR
into its veth. Traffic between nodes passes the host's FORWARD chain once, where the chain
`MSGEN-HARNESS` accepts it (also on a machine whose FORWARD policy drops). Every step checks
before it adds, so `up` twice changes nothing.

All of it is the machine's, named by the node's index and not by the harness home: the nodes
of two homes (`up --kube-version`) would be the same namespaces, veths, addresses and routes.
So one home at a time holds it (`claim`, in `OWNER`): another home's `up --nodes N` is refused
while it does, and its `down` or `up --nodes 1` leaves it alone.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from . import topology
from .core import Harness, HarnessError
from .topology import HOST_ADDRESS, NODE_NETWORK, Node

CHAIN = "MSGEN-HARNESS"
POD_NETWORK = "10.244.0.0/16"
#: Inside each node's namespace: forward between its pods and the host, and let bridged pod
#: traffic pass iptables (its kube-proxy's Service rules).
NODE_SYSCTLS = {"net/ipv4/ip_forward": "1", "net/bridge/bridge-nf-call-iptables": "1",
                "net/bridge/bridge-nf-call-ip6tables": "1", "net/ipv4/conf/all/rp_filter": "0"}


NETNS = Path("/run/netns")
#: The home whose extra nodes hold the machine's node network (in /run: gone with a reboot, as
#: the namespaces are).
OWNER = topology.RUN_ROOT / "extra-nodes-home"


def netns_path(node: Node) -> Path:
    return NETNS / str(node.netns)


def holder() -> str | None:
    """The home that holds the extra nodes' network, None when none says it does."""
    try:
        return OWNER.read_text().strip() or None
    except OSError:
        return None


def held_elsewhere(h: Harness) -> None:
    """HarnessError when another home holds the extra nodes' network (before `up` starts any)."""
    other = holder()
    if other is not None and other != str(h.home):
        raise HarnessError(f"the extra nodes' network (namespaces {topology.FIRST}-<i>, their addresses and routes) "
                           f"is held by the cluster of {other}: `down` it first (with its --kube-version, or "
                           "MSGEN_HARNESS_HOME), or run this one with --nodes 1")


def claim(h: Harness) -> None:
    """This home holds the extra nodes' network from now on."""
    held_elsewhere(h)
    OWNER.parent.mkdir(parents=True, exist_ok=True)
    OWNER.write_text(f"{h.home}\n")


def holds(h: Harness) -> bool:
    """Whether this home may change the extra nodes' network: it holds it, or none does and
    either no node namespace is there or this home started extra nodes (before homes claimed
    the network, only the default home could)."""
    other = holder()
    if other is not None:
        return other == str(h.home)
    there = NETNS.is_dir() and any(NETNS.glob(f"{topology.FIRST}-*"))
    return not there or topology.load(h.topology_file).count > 1


def release(h: Harness) -> None:
    """This home's extra nodes are gone: the network is nobody's."""
    if holder() == str(h.home):
        OWNER.unlink(missing_ok=True)


def in_node(node: Node, argv: list[str]) -> list[str]:
    """`argv` run in the node's network namespace only (nsenter, not `ip netns exec`, which
    would also give it a mount namespace of its own: the kubelet's volume mounts must be seen
    by the node's containerd)."""
    return ["nsenter", f"--net={netns_path(node)}", "--", *argv] if node.netns else argv


def _ip(h: Harness, *args: str, node: Node | None = None, check: bool = True) -> str:
    argv = ["ip", *args]
    return h.sh(in_node(node, argv) if node else argv, check=check)


def _link_exists(h: Harness, name: str) -> bool:
    return subprocess.run(["ip", "link", "show", name], capture_output=True).returncode == 0


def up(h: Harness, node: Node) -> None:
    """The node's namespace, veth pair, addresses, routes and sysctls; the veth's host end up."""
    assert node.netns and node.host_veth
    if not netns_path(node).exists():
        _ip(h, "netns", "add", node.netns)
    if not _link_exists(h, node.host_veth):
        _ip(h, "link", "add", node.host_veth, "type", "veth", "peer", "name", "eth0", "netns", node.netns)
    if f"{HOST_ADDRESS}/32" not in _ip(h, "-4", "addr", "show", "dev", node.host_veth):
        _ip(h, "addr", "add", f"{HOST_ADDRESS}/32", "dev", node.host_veth)
    _ip(h, "link", "set", node.host_veth, "up")
    _ip(h, "link", "set", "lo", "up", node=node)
    if f"{node.ip}/32" not in _ip(h, "-4", "addr", "show", "dev", "eth0", node=node):
        _ip(h, "addr", "add", f"{node.ip}/32", "dev", "eth0", node=node)
    _ip(h, "link", "set", "eth0", "up", node=node)
    _ip(h, "route", "replace", f"{HOST_ADDRESS}/32", "dev", "eth0", "scope", "link", node=node)
    _ip(h, "route", "replace", "default", "via", HOST_ADDRESS, "dev", "eth0", node=node)
    _ip(h, "route", "replace", f"{node.ip}/32", "dev", node.host_veth, "src", HOST_ADDRESS)
    _ip(h, "route", "replace", node.pod_cidr, "via", node.ip, "dev", node.host_veth)
    for key, value in NODE_SYSCTLS.items():
        h.sh(in_node(node, ["sysctl", "-q", "-w", f"{key.replace('/', '.')}={value}"]))


def cut(h: Harness, node: Node) -> None:
    """The node unreachable at once, as a node whose power went: its veth's host end down
    (the routes through it stay, and lead nowhere)."""
    if node.host_veth and _link_exists(h, node.host_veth):
        _ip(h, "link", "set", node.host_veth, "down")


def remove(h: Harness, node: Node) -> None:
    """The namespace (its end of the veth, and with it the host's, go too) and the host's routes."""
    for route in (node.pod_cidr, f"{node.ip}/32"):
        _ip(h, "route", "del", route, check=False)
    if node.host_veth and _link_exists(h, node.host_veth):
        _ip(h, "link", "del", node.host_veth, check=False)
    if node.netns and netns_path(node).exists():
        _ip(h, "netns", "del", node.netns, check=False)


def _rules() -> list[list[str]]:
    return [["-s", str(NODE_NETWORK), "-j", "ACCEPT"], ["-d", str(NODE_NETWORK), "-j", "ACCEPT"],
            ["-s", POD_NETWORK, "-j", "ACCEPT"], ["-d", POD_NETWORK, "-j", "ACCEPT"]]


def host_rules(h: Harness) -> None:
    """The chain MSGEN-HARNESS, first in FORWARD, accepting the nodes' and pods' traffic."""
    if subprocess.run(["iptables", "-w", "-n", "-L", CHAIN], capture_output=True).returncode != 0:
        h.sh(["iptables", "-w", "-N", CHAIN])
    for rule in _rules():
        if subprocess.run(["iptables", "-w", "-C", CHAIN, *rule], capture_output=True).returncode != 0:
            h.sh(["iptables", "-w", "-A", CHAIN, *rule])
    jump = ["FORWARD", "-m", "comment", "--comment", "msgen-harness extra nodes", "-j", CHAIN]
    if subprocess.run(["iptables", "-w", "-C", *jump], capture_output=True).returncode != 0:
        h.sh(["iptables", "-w", "-I", *jump])


def remove_host_rules(h: Harness) -> None:
    jump = ["FORWARD", "-m", "comment", "--comment", "msgen-harness extra nodes", "-j", CHAIN]
    while subprocess.run(["iptables", "-w", "-C", *jump], capture_output=True).returncode == 0:
        h.sh(["iptables", "-w", "-D", *jump])
    if subprocess.run(["iptables", "-w", "-n", "-L", CHAIN], capture_output=True).returncode == 0:
        h.sh(["iptables", "-w", "-F", CHAIN])
        h.sh(["iptables", "-w", "-X", CHAIN])
