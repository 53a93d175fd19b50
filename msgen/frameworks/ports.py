"""Ports and endpoints of the frameworks whose processes accept host names.

The port a framework's env names is the main container's port called `Plan.port_name`. Each
input kind makes sure that port exists (adding the operator's default), so reading it here
cannot fail for a plan that passed its kind's checks.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.plan import Plan, Role
from ..targets.addressing import Endpoint

#: Frameworks whose env lists every replica in every pod grow as replicas squared: past this
#: many the env of one pod nears the size Kubernetes accepts for an object (about 1.5 MiB),
#: and far past it a render would never end.
MAX_LISTED_REPLICAS = 2000


def main_port(plan: Plan, role: Role) -> int:
    for container in role.containers():
        if container["name"] == plan.main_container:
            for port in container.get("ports") or []:
                if port.get("name") == plan.port_name:
                    return int(port["containerPort"])
    raise AssertionError(f"{role.replica_type} has no port {plan.port_name}")


def every_replica_by_name(plan: Plan) -> list[Endpoint]:
    """Every replica, reached by its stable DNS name (no ClusterIP Service in any mode)."""
    return [
        Endpoint(role, index, ({"name": plan.port_name, "port": main_port(plan, role)},), by_name=True)
        for role in plan.roles
        for index in range(role.replicas)
    ]


def check_listed_replicas(plan: Plan, env_name: str) -> list[Diagnostic]:
    """An error when `env_name`, which lists every replica, would be too large to apply."""
    total = sum(role.replicas for role in plan.roles)
    if total <= MAX_LISTED_REPLICAS:
        return []
    largest = max(plan.roles, key=lambda role: role.replicas)
    return [
        plan.document.diagnostic(
            largest.path + ("replicas",),
            f"{total} replicas in all: {env_name} lists every replica in every pod, which "
            f"Kubernetes would reject as too large; accepted: at most {MAX_LISTED_REPLICAS} "
            "replicas in all",
        )
    ]
