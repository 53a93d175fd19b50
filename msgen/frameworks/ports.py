"""The port a framework's env names: the main container's port named `Plan.port_name`.

Each input kind makes sure that port exists (adding the operator's default), so reading it
here cannot fail for a plan that passed its kind's checks.
"""

from __future__ import annotations

from ..plan import Plan, Role


def main_port(plan: Plan, role: Role) -> int:
    for container in role.containers():
        if container["name"] == plan.main_container:
            for port in container.get("ports") or []:
                if port.get("name") == plan.port_name:
                    return int(port["containerPort"])
    raise AssertionError(f"{role.replica_type} has no port {plan.port_name}")
