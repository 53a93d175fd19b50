"""The ports of a pod that take ports of its node: `validatePodHostNetworkDeps` and
`AccumulateUniqueHostPorts` of Kubernetes' `pkg/apis/core/validation`.

A pod with `hostNetwork: true` listens on its node's own ports, so the API server gives each
port without a hostPort its containerPort as hostPort (`defaultHostNetworkPorts`) and refuses a
regular container's hostPort that differs. Two ports of one pod must not take the same host
port, the key being protocol, hostIP and hostPort as written (`TCP//7000`; hostIP `0.0.0.0`
and none are two keys to the server): across the regular containers, and within each init
container by itself, sidecars included (init containers run one at a time; the server does
not compare a sidecar's host ports with the regular containers').

The rules are the same from 1.25 to 1.37; what changed is where the server refuses them.
Before 1.28 a workload's pod template was defaulted too, and the workload itself was refused;
since 1.28 (`DefaultHostNetworkHostPortsInPodTemplates` off, removed in 1.31) only Pods are
defaulted: the Job, StatefulSet, JobSet or Volcano Job is accepted and every pod its
controller creates is refused, so the job never starts. msgen refuses both, at the job's port.

The template checked is the role's after its kind added the operator's ports (`msjob-port`,
...): the final pod's ports, as no later stage adds a port or host networking (plug-ins add
env, volumes and mounts, `patch.Patch`). A port msgen added is not in the job's text, so a
clash with one is reported at the user's port it clashes with.
"""

from __future__ import annotations

from ...model.source import Path
from .findings import Findings, items, text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeGuard

#: A port's key for the clash check: protocol, hostIP, host port (the server's `%s/%s/%d`).
HostPortKey = tuple[str, str, int]


def check(found: Findings, spec: dict[str, Any], path: Path) -> None:
    """Host-port errors in the pod spec at `path`."""
    host_network = spec.get("hostNetwork") is True
    if host_network:
        _check_host_network_ports(found, spec, path)
    regular = [(("containers", i), c) for i, c in items(spec.get("containers"))]
    _check_clashes(found, regular, path, host_network)
    for i, init in items(spec.get("initContainers")):
        _check_clashes(found, [(("initContainers", i), init)], path, host_network)


def _check_host_network_ports(found: Findings, spec: dict[str, Any], path: Path) -> None:
    for ci, container in items(spec.get("containers")):
        for pi, port in items(container.get("ports")):
            host, inside = port.get("hostPort"), port.get("containerPort")
            if _number(host) and _number(inside) and host != inside:
                found.refuse(
                    path + ("containers", ci, "ports", pi, "hostPort"),
                    f"hostPort {host} is not accepted beside hostNetwork: true, where the"
                    f" container listens on the node's own port {inside} (its containerPort);"
                    f" accepted: hostPort {inside}, or no hostPort",
                )


def _check_clashes(
    found: Findings,
    containers: list[tuple[tuple[str, int], dict[str, Any]]],
    path: Path,
    host_network: bool,
) -> None:
    """One error per port whose host port an earlier port of `containers` took already."""
    taken: dict[HostPortKey, Path] = {}
    for where, container in containers:
        written = _written_ports(found, path + where + ("ports",))
        for pi, port in items(container.get("ports")):
            host = port.get("hostPort")
            defaulted = not _number(host) and host_network
            number = port.get("containerPort") if defaulted else host
            if not _number(number):
                continue
            key = (text(port.get("protocol")) or "TCP", text(port.get("hostIP")), number)
            at = path + where + ("ports", pi)
            first = taken.setdefault(key, at)
            if first == at:
                continue
            # A port msgen added has no place in the job's text: report the user's port.
            user_port = pi < written
            shown_at = at + (() if defaulted else ("hostPort",)) if user_port else first
            found.refuse(shown_at, _clash_message(key, first, at, path, defaulted, user_port))


def _clash_message(
    key: HostPortKey, first: Path, second: Path, path: Path, defaulted: bool, user_port: bool
) -> str:
    protocol, host_ip, number = key
    on = f" on hostIP {host_ip}" if host_ip else ""
    how = (
        " (with hostNetwork: true a port without hostPort takes its containerPort on the node)"
        if defaulted
        else ""
    )
    added = "" if user_port else f" ({_shown(second, path)} is a port msgen adds)"
    return (
        f"host port {number}/{protocol}{on} is taken twice in one pod, by {_shown(first, path)}"
        f" and {_shown(second, path)}{how}{added}; accepted: another hostPort, containerPort or"
        " protocol for one of them (the server compares the ports of all regular containers,"
        " and of each init container by itself)"
    )


def _shown(port: Path, path: Path) -> str:
    field, ci, _, pi = port[len(path) :]
    return f"{field}[{ci}].ports[{pi}]"


def _written_ports(found: Findings, path: Path) -> int:
    """How many ports the job's text lists at `path` (msgen appends its own after them)."""
    node: Any = found.document.data
    for step in path:
        if isinstance(node, dict):
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            return 0
    return len(node) if isinstance(node, list) else 0


def _number(value: Any) -> TypeGuard[int]:
    """A port number the server would use (0, a missing hostPort, means none)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
