"""`--scheduler-address dns`: resolve the scheduler's name when a container starts.

MindSpore takes `MS_SCHED_HOST` as an IP address literal: its scheduler client builds the
socket address with `inet_pton` alone (`SocketOperation::GetSockAddr` of its dynamic cluster,
as in 2.10; the 1.x parameter server's `TcpClient` refused a non-IP host as "illegal"), and a
host name there makes every PS and Worker log "Parse ip failed" and retry until the
cluster times out. Only msrun resolves its `--master_addr` itself. So in `dns` mode the main
container of every PS and Worker pod runs `resolve_scheduler.sh` first (inline, as
`/bin/sh -c`): it waits until the name resolves (the record appears once the Scheduler pod has
an address), puts the address in `MS_SCHED_HOST` and execs the container's command, or exits 1
after `MSGEN_RESOLVE_TIMEOUT` seconds (default 600) saying why: a job never hangs on a name.

A container without `command` cannot be wrapped (its image's entrypoint is unknown when msgen
renders): that is an error in `dns` mode, naming `cluster-ip` as the alternative. The
resolver is the outermost wrapper, around the launcher's, so msrun's `--master_addr`
resolves at once too. A host-network pod resolves names with its node's resolver, which knows
no cluster names, unless its `dnsPolicy` is `ClusterFirstWithHostNet` (Kubernetes' advice for
such pods): msgen sets that where the template sets no policy, and refuses `ClusterFirst` and
`Default`, which mean the node's resolver there.
"""

from __future__ import annotations

import os

from ..model.diagnostics import Diagnostic
from ..model.patch import CommandWrap, Patch
from ..model.plan import Options, Plan, PodSlot, Role
from ..targets.addressing import HOST_NETWORK_DNS, scheduler_resolving_roles

SCRIPT_NAME = "resolve_scheduler.sh"
#: `$0` of the inline script, which its messages and `ps` show
PROGRAM = "msgen-resolve"
WHY = (
    "MindSpore reads MS_SCHED_HOST as an IP address only, so with --scheduler-address dns msgen "
    "resolves the scheduler's name when the container starts, by wrapping its command"
)


def script() -> str:
    """The resolver's text, read beside this module (package data), as the launcher's is."""
    with open(os.path.join(os.path.dirname(__file__), SCRIPT_NAME), encoding="utf-8") as f:
        return f.read()


def check(plan: Plan, options: Options, launcher_wraps: Role | None) -> list[Diagnostic]:
    """A container to wrap must set `command` (unless the launcher already reports it), and
    a host-network pod must not be told to use its node's resolver."""
    out = []
    for role in scheduler_resolving_roles(plan, options):
        spec = role.template["spec"]
        policy = spec.get("dnsPolicy")
        if spec.get("hostNetwork") and policy in ("ClusterFirst", "Default"):
            out.append(
                plan.document.diagnostic(
                    role.path + ("template", "spec", "dnsPolicy"),
                    f"dnsPolicy {policy} makes a host-network {role.replica_type} pod resolve "
                    "with its node's resolver, which cannot resolve the scheduler's cluster DNS "
                    f"name (--scheduler-address dns); accepted: {HOST_NETWORK_DNS}, no "
                    f"dnsPolicy (msgen sets {HOST_NETWORK_DNS}), or --scheduler-address "
                    "cluster-ip",
                )
            )
        if role is launcher_wraps:
            continue
        for ci, container in enumerate(role.containers()):
            if container["name"] == plan.main_container and not container.get("command"):
                out.append(
                    plan.document.diagnostic(
                        role.path + ("template", "spec", "containers", ci),
                        f"container {plan.main_container!r} of {role.replica_type} sets no "
                        f"command: {WHY}, and the image's entrypoint is unknown when msgen "
                        "renders; accepted: the full command in `command` (and `args`), or "
                        "--scheduler-address cluster-ip",
                    )
                )
    return out


def contribute(plan: Plan, slot: PodSlot, options: Options) -> list[Patch]:
    if not any(role is slot.role for role in scheduler_resolving_roles(plan, options)):
        return []
    wrap = CommandWrap(("/bin/sh", "-c", script(), PROGRAM))
    return [Patch(contributor=WHY, command_wrap=((plan.main_container, wrap),))]
