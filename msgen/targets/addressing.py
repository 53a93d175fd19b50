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

from dataclasses import dataclass
from typing import Any, Callable

from ..names import service_env_prefix
from ..patch import EnvValue, literal
from ..plan import AddressMode, Plan, PodSlot, Role
from . import labels


@dataclass(frozen=True)
class Endpoint:
    """A replica other pods must reach, and the ports it listens on."""

    role: Role
    index: int
    ports: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Naming:
    """What a target decides about names: host names, and a pod's index where it is not static."""

    hostname: Callable[[Role, int], str]
    #: The pod's index where it is not static; None where the target cannot give it.
    dynamic_index: EnvValue | None
    index_variable: str | None = None
    index_selector: Callable[[Role, int], dict[str, str]] | None = None
    #: The pod's own name where it is `<job>-<rt>-<i>` but not static (StatefulSet, Volcano).
    dynamic_pod_name: EnvValue | None = None
    #: The workload controller gives pods their DNS subdomain itself (StatefulSet, JobSet,
    #: Volcano's svc plugin); a template must not set it.
    controller_sets_subdomain: bool = False
    #: The workload controller creates the headless Service itself (JobSet, Volcano).
    controller_creates_headless_service: bool = False


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
        if self.mode == "dns":
            hostname = self.naming.hostname(endpoint.role, endpoint.index)
            return literal(f"{hostname}.{self.subdomain}")
        prefix = service_env_prefix(self.service_name(endpoint))
        return literal(f"$({prefix}_SERVICE_HOST)")

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
