"""What a target decides about addresses, and a framework asks for: the replicas other pods
reach (`Endpoint`) and how a target names pods (`Naming`).

Targets own addressing (`msgen.targets.addressing`); a framework says which replicas are
reached (`Framework.endpoints`) and asks the job's addresses (`extension_points.Addresses`)
for "the host of scheduler 0" or "this pod's index", never formatting a target's names.
"""

from __future__ import annotations

from .patch import EnvValue
from .plan import Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, NamedTuple
else:
    from .type_forms import NamedTuple


class Endpoint:
    """A replica other pods must reach, and the ports it listens on.

    `by_name`: reached by its stable DNS name whatever the address mode: for frameworks that
    accept host names (MXNet, Caffe2, the 2020 MSJob), as their operators gave them.
    """

    __slots__ = ("role", "index", "ports", "by_name")

    def __init__(
        self, role: Role, index: int, ports: tuple[dict[str, Any], ...], by_name: bool = False
    ):
        self.role = role
        self.index = index
        self.ports = ports
        self.by_name = by_name

    def __repr__(self) -> str:
        return f"Endpoint({self.role.replica_type!r}, {self.index}, by_name={self.by_name})"


class Naming(NamedTuple):
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
    #: A value that is the same for every pod of one run of the job and differs between
    #: runs (the workload object's UID), where the target has such an object.
    run_identity: EnvValue | None = None
