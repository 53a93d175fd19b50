"""Ports and endpoints of the frameworks whose processes accept host names.

The port a framework's env names is the main container's port called `Plan.port_name`. Each
input kind makes sure that port exists (adding the operator's default), so reading it here
cannot fail for a plan that passed its kind's checks.
"""

from __future__ import annotations

from ..plan import Plan, Role
from ..targets.addressing import Endpoint


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
