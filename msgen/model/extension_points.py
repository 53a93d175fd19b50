"""Every extension point of msgen, in one place: the small interfaces a plug-in picks from.

The stages of a render are fixed (`compile.pipeline`); what varies is a plug-in, found by
key in its package's registry and imported on first use, so a render loads only the plug-ins
its jobs need:

| extension point    | registry (key)                                | a plug-in is         | it implements                          |
|--------------------|-----------------------------------------------|----------------------|----------------------------------------|
| input kind         | `kinds._REGISTRY` (apiVersion, kind)          | a module's `KIND`    | JobKind                                |
| framework env      | `frameworks._REGISTRY` (`Plan.framework`)     | a module             | Framework; ChecksJob, NeedsPodIndex, ExplainsPodIndex if it needs them |
| device             | `devices._REGISTRY` (device kind: resources)  | a module             | Device                                 |
| process start      | `launchers._BY_DEVICE`, `_BY_FRAMEWORK`       | a module             | StartsProcesses; ChecksJob, LabelsWorkloads if it needs them |
| launcher           | `launchers.launcher.LAUNCHERS` (`--launcher`) | an instance          | Launcher                               |
| target             | `targets._REGISTRY` (`--target`)              | a module's `TARGET`  | Target (DeclaresTarget, RendersTarget) |

An optional interface is asked only of a plug-in that has it (each registry's helpers, such as
`frameworks.check`): a plug-in writes no method that does nothing. What the interfaces
exchange are the bottom layer's values: `Plan`, `Role`, `PodSlot` and `Options` (plan),
`Patch`, `EnvValue` and `WorkloadLabels` (patch), `Diagnostic`, `Document` and `Path`, a
target's `Facts` and `Cell` (target_facts), `Endpoint` and `Naming` (addresses), and the job's
`Addresses` below, which a target makes (`targets.addressing.Addressing`) and a framework reads.

Only type checking reads this module: each registry's lookup returns these types and each
plug-in module ends with a block assigning itself to the interfaces it implements, so mypy
checks every plug-in; a render never imports it. At run time, tests/test_plugin_registries.py
checks every registered plug-in against them, and tests/test_plugin_tests.py that each plug-in's
own test module calls every entry point it implements.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .addresses import Endpoint, Naming
    from .diagnostics import Diagnostic
    from .patch import EnvValue, Patch, WorkloadLabels
    from .plan import Options, Plan, PodSlot, Role
    from .source import Document, Path
    from .target_facts import Cell, Facts


# --- input kinds -------------------------------------------------------------------------


class InputModel(Protocol):
    """An input model: a class declared with `checks.input_model`, as pydantic reads it."""

    @classmethod
    def model_json_schema(cls, **arguments: Any) -> dict[str, Any]: ...


@runtime_checkable
class JobKind(Protocol):
    """An input kind: a document of this `api_version` and `kind` becomes a Plan, or the
    findings that stop it (`kinds.shared.InputKind` is the skeleton every kind follows)."""

    api_version: str
    kind: str

    def model(self) -> type[InputModel]: ...

    def to_plan(self, document: Document, options: Options) -> tuple[Plan | None, list[Diagnostic]]: ...


# --- what frameworks and process contributors may check ----------------------------------


@runtime_checkable
class ChecksJob(Protocol):
    """Findings about a job before it is rendered (a framework's contract, a launcher's needs)."""

    def check(self, plan: Plan, options: Options) -> list[Diagnostic]: ...


# --- frameworks ------------------------------------------------------------------------------


@runtime_checkable
class Framework(Protocol):
    """A framework's env contract: the replicas other pods reach, and what each pod's main
    container is told (one Patch per pod)."""

    def endpoints(self, plan: Plan) -> list[Endpoint]: ...

    def contribute(self, plan: Plan, slot: PodSlot, addressing: Addresses) -> Patch: ...


@runtime_checkable
class NeedsPodIndex(Protocol):
    """A framework whose env tells a pod its own index (in a value, a rank): a target that
    cannot give pods their index refuses its jobs. Without it, no pod needs its index."""

    def needs_pod_index(self, plan: Plan) -> bool: ...


@runtime_checkable
class ExplainsPodIndex(Protocol):
    """A framework whose refusal for want of pod indexes names where the job asks for them."""

    def pod_index_reason(self, plan: Plan) -> tuple[Path, str] | None: ...


# --- devices ---------------------------------------------------------------------------------


@runtime_checkable
class Device(Protocol):
    """An accelerator's module: what a pod of `role` needs, in a job that asks for it."""

    def contribute(self, plan: Plan, role: Role) -> list[Patch]: ...


# --- how a pod's processes start -------------------------------------------------------------


@runtime_checkable
class StartsProcesses(Protocol):
    """A process contributor (launcher, device settings, cluster tuning): what the run's
    options add to each pod, on top of the framework's env."""

    def contribute(self, plan: Plan, slot: PodSlot, addressing: Addresses, options: Options) -> list[Patch]: ...


@runtime_checkable
class LabelsWorkloads(Protocol):
    """A process contributor that labels the rendered workloads themselves (not their pods)."""

    def workload_labels(self, plan: Plan, options: Options) -> tuple[WorkloadLabels, ...]: ...


@runtime_checkable
class Launcher(Protocol):
    """What starts the processes of a multi-device Worker pod, chosen by `--launcher`."""

    name: str
    #: It becomes the container's command (the container's own command its arguments).
    wraps_command: bool

    def check(self, plan: Plan, role: Role, options: Options) -> list[Diagnostic]: ...

    def contribute(self, plan: Plan, role: Role, options: Options) -> list[Patch]: ...

# --- targets ---------------------------------------------------------------------------------


class DeclaresTarget(Protocol):
    """What a target says of itself: its name, its facts and its cell for each MSJob policy,
    each checked against what it renders (tests/test_target_plugins.py)."""

    name: str
    summary: str
    facts: Facts

    @property
    def support(self) -> Mapping[str, Cell]:
        """How each MSJob policy (a row of `targets.support.ROWS`) is expressed by this target."""
        ...


class RendersTarget(Protocol):
    """How a target shapes a Plan: pod names and addresses (`naming`), the pod templates
    (`slots`: one per role, or one per replica), the objects (`render`), and that every name
    it made, the pods' host names included, is one Kubernetes accepts (`check_names`)."""

    def naming(self, plan: Plan, options: Options) -> Naming: ...

    def slots(self, plan: Plan) -> list[PodSlot]: ...

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addresses,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]: ...

    def check_names(self, plan: Plan, objects: list[dict[str, Any]]) -> list[Diagnostic]:
        """Errors for names in `objects` (the job's whole output) and the pod host names the
        target's controllers derive from them that are not DNS-1035 labels."""
        ...


@runtime_checkable
class Target(DeclaresTarget, RendersTarget, Protocol):
    """A `--target`: what it declares, and how it renders."""


class Addresses(Protocol):
    """The job's addresses as a target made them (`targets.addressing.Addressing`): what a
    framework, a process contributor and the target itself may ask of them."""

    naming: Naming

    @property
    def distributed(self) -> bool:
        """Some replica is reached by others."""
        ...

    @property
    def subdomain(self) -> str:
        """The headless Service (and pod `subdomain`) that gives pods stable DNS names."""
        ...

    def host(self, endpoint: Endpoint) -> EnvValue: ...

    def replica_host(self, role: Role, index: int) -> str: ...

    def index(self, slot: PodSlot) -> EnvValue | None: ...

    def index_text(self, slot: PodSlot) -> tuple[str, tuple[tuple[str, EnvValue], ...]]: ...

    def pod_name(self, slot: PodSlot) -> EnvValue: ...

    def services(self) -> list[dict[str, Any]]: ...
