"""How pods of a job find each other, shared by every target.

Targets own addressing: a framework asks for "the host of scheduler 0" or "this pod's index"
and never formats a target's host names itself. Two ways to reach a replica (contracts §1):

- `cluster-ip` (default): a ClusterIP Service per addressed replica, created before the pods,
  makes the kubelet inject `<SERVICE>_SERVICE_HOST`; env values reference it as `$(NAME)`.
  This is the static equivalent of the ClusterIP address ms-operator wrote in, and an IP
  address is what MindSpore documents for `MS_SCHED_HOST`.
- `dns`: the replica's stable DNS name `<hostname>.<subdomain>` through the job's headless
  Service. No extra Service, but the process must accept a host name.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.names import dns1035_label, refused, service_env_prefix
from ..model.addresses import Endpoint as Endpoint
from ..model.addresses import Naming as Naming
from ..model.patch import EnvValue, literal
from ..model.plan import AddressMode, Options, Plan, PodSlot, Role
from . import labels

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Addressing:
    def __init__(self, plan: Plan, mode: AddressMode, naming: Naming, endpoints: list[Endpoint]):
        self.plan = plan
        self.mode = mode
        self.naming = naming
        self.endpoints = endpoints

    @property
    def subdomain(self) -> str:
        """The headless Service (and pod `subdomain`) that gives pods stable DNS names."""
        return self.plan.name

    @property
    def distributed(self) -> bool:
        return bool(self.endpoints)

    def service_name(self, endpoint: Endpoint) -> str:
        return f"{self.plan.name}-{endpoint.role.key}-{endpoint.index}"

    def host(self, endpoint: Endpoint) -> EnvValue:
        if self.mode == "dns" or endpoint.by_name:
            return literal(self.replica_host(endpoint.role, endpoint.index))
        prefix = service_env_prefix(self.service_name(endpoint))
        return literal(f"$({prefix}_SERVICE_HOST)")

    def replica_host(self, role: Role, index: int) -> str:
        """The stable DNS name of replica `index` of `role`: `<hostname>.<subdomain>`."""
        return f"{self.naming.hostname(role, index)}.{self.subdomain}"

    def index_text(self, slot: PodSlot) -> tuple[str, tuple[tuple[str, EnvValue], ...]]:
        """The pod's index as text to put inside a longer value (a JSON document, a name).

        Static: the digits. Run time: `$(VARIABLE)`, with the variable it requires defined
        earlier in the container, since Kubernetes expands only variables defined before.
        The pipeline refuses a target that cannot give a framework needing it the index.
        """
        if slot.index is not None:
            return str(slot.index), ()
        variable = self.naming.index_variable
        assert variable is not None and self.naming.dynamic_index is not None
        return f"$({variable})", ((variable, self.naming.dynamic_index),)

    def index(self, slot: PodSlot) -> EnvValue | None:
        """The pod's replica index; None where the target cannot tell a pod its index."""
        if slot.index is not None:
            return literal(slot.index)
        return self.naming.dynamic_index

    def pod_name(self, slot: PodSlot) -> EnvValue:
        """`<job>-<rt>-<i>`: the stable name ms-operator gave each pod."""
        base = f"{self.plan.name}-{slot.role.key}"
        if slot.index is not None:
            return literal(f"{base}-{slot.index}")
        if self.naming.dynamic_pod_name is not None:
            return self.naming.dynamic_pod_name
        variable = self.naming.index_variable
        assert variable is not None and self.naming.dynamic_index is not None
        return EnvValue(
            value=f"{base}-$({variable})", requires=((variable, self.naming.dynamic_index),)
        )

    def services(self) -> list[dict[str, Any]]:
        """The Services this addressing needs: ClusterIP per endpoint, then the headless one."""
        if not self.distributed:
            return []
        out = []
        if self.mode == "cluster-ip":
            for endpoint in self.endpoints:
                if endpoint.by_name:
                    continue
                selector = labels.role_selector(self.plan, endpoint.role)
                if endpoint.role.replicas > 1 and self.naming.index_selector is not None:
                    selector.update(self.naming.index_selector(endpoint.role, endpoint.index))
                spec: dict[str, Any] = {"selector": selector, "type": "ClusterIP"}
                if endpoint.ports:
                    spec["ports"] = [dict(p) for p in endpoint.ports]
                out.append(
                    {
                        "apiVersion": "v1",
                        "kind": "Service",
                        "metadata": {"name": self.service_name(endpoint)},
                        "spec": spec,
                    }
                )
        if self.naming.controller_creates_headless_service:
            return out
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": self.subdomain},
                "spec": {
                    "clusterIP": "None",
                    "publishNotReadyAddresses": True,
                    "selector": {labels.JOB_NAME: self.plan.name},
                },
            }
        )
        return out


def name_problems(
    plan: Plan, objects: list[dict[str, Any]], host_names: list[str]
) -> list[Diagnostic]:
    """Every object name and every pod host name a target derives must be a DNS-1035 label.

    A target calls this from its `check_names` with the host names its workload controllers
    give pods (which appear in no object): only the target knows how they are formed.
    """
    derived = [o["metadata"]["name"] for o in objects] + host_names
    out = []
    for name in dict.fromkeys(derived):
        problems = dns1035_label(name)
        if problems:
            out.append(
                plan.document.diagnostic(
                    ("metadata", "name"),
                    f"job name {plan.name!r} makes the name {name!r}, which {refused(problems)}",
                )
            )
    return out


#: What a host-network pod needs to resolve cluster names (its default means the node's).
HOST_NETWORK_DNS = "ClusterFirstWithHostNet"


def scheduler_resolving_roles(plan: Plan, options: Options) -> list[Role]:
    """The roles whose pods resolve the scheduler's name when they start (`--scheduler-address
    dns`, `launchers.resolve`): all but the Scheduler, in a job that has one."""
    if options.scheduler_address != "dns" or plan.replicas("Scheduler") == 0:
        return []
    return [r for r in plan.roles if r.replica_type != "Scheduler" and r.replicas > 0]


def dns_policy(plan: Plan, options: Options, role: Role, spec: dict[str, Any]) -> str | None:
    """The `dnsPolicy` a pod of `role` needs to resolve the scheduler's name, where its
    template sets none: only host-network pods need one."""
    if not spec.get("hostNetwork") or "dnsPolicy" in spec:
        return None
    if not any(r is role for r in scheduler_resolving_roles(plan, options)):
        return None
    return HOST_NETWORK_DNS
