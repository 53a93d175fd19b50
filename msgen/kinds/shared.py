"""What every input kind shares: the skeleton of `to_plan`, and the checks and defaults of its
operator.

Every kind compiles a job the same way (`InputKind.to_plan`): the document is validated
against the kind's model, then its name, its roles and what else its Plan says are read, and
only when none of them found an error is the Plan made, so one run reports every finding of
a job. The operators all did the same few things to a replica's pod template: find the
container they configure by name, give it a default port, and insist on images; replica keys
matched in any letter case. Old job files are often inconsistent in ways Kubernetes only
reports once pods fail to start (a volume mounted but never declared), so msgen names each
problem where it was written.
"""

from __future__ import annotations

from ..checks.input_model import BaseModel
from ..checks.validation import VOLUME_SOURCES, validate_model
from ..model.diagnostics import Diagnostic, Severity, has_errors
from ..model.names import dns1035_label, refused
from ..model.plan import Options, Plan, ProcessContract, RestartPolicy, Role, RunPolicy
from ..model.source import Document, Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic, NamedTuple, TypeVar
else:
    from ..model.type_forms import Generic, NamedTuple, TypeVar

J = TypeVar("J", bound=BaseModel)


class PlanFields(NamedTuple):
    """What a kind's Plan says beside the job's name, namespace, labels and roles."""

    framework: str
    main_container: str
    port_name: str
    run_policy: RunPolicy
    success_policy: str
    enable_dynamic_worker: bool = False
    static_indexes: bool = False
    framework_settings: dict[str, str] = {}  # never mutated
    process_contract: ProcessContract = "ms-operator"


class InputKind(Generic[J]):
    """An input kind (a `JobKind`) as every kind is written: its API, its model `J`, and the
    three steps that are its own.

    - `accepts`: whether msgen compiles this job of the kind at all (an AscendJob of another
      framework: no, said once); by default every job;
    - `roles`: each replica spec as a `Role`, checked and defaulted as its operator did;
    - `fields`: what else the Plan says (framework, main container, policies), with the
      findings reading them made.
    """

    api_version: str
    kind: str
    input_model: type[J]

    def model(self) -> type[BaseModel]:
        return self.input_model

    def to_plan(self, document: Document, options: Options) -> tuple[Plan | None, list[Diagnostic]]:
        """validate -> name -> roles -> fields, then the Plan when none of them is an error."""
        job, out = validate_model(self.input_model, document)
        if job is None or not self.accepts(job, document, out):
            return None, out
        metadata: Any = job.metadata  # type: ignore[attr-defined]  # every kind's model has it
        name = job_name(metadata, document, out)
        roles = self.roles(job, document, out)
        fields = self.fields(job, roles, document, out)
        if name is None or has_errors(out):
            return None, out
        return (
            Plan(
                api_version=self.api_version,
                kind=self.kind,
                name=name,
                namespace=metadata.namespace or options.namespace,
                labels=dict(metadata.labels or {}),
                roles=roles,
                document=document,
                **fields._asdict(),
            ),
            out,
        )

    def accepts(self, job: J, document: Document, out: list[Diagnostic]) -> bool:
        return True

    def roles(self, job: J, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
        raise NotImplementedError

    def fields(
        self, job: J, roles: tuple[Role, ...], document: Document, out: list[Diagnostic]
    ) -> PlanFields:
        raise NotImplementedError


if TYPE_CHECKING:  # mypy checks the skeleton against the interface it implements
    from ..model.extension_points import JobKind

    _CONFORMS: JobKind = InputKind[BaseModel]()

VOLUME_MOUNT_FIELDS = (
    "name", "mountPath", "readOnly", "subPath", "subPathExpr", "mountPropagation",
    "recursiveReadOnly",
)  # fmt: skip


def job_name(metadata: Any, document: Document, out: list[Diagnostic]) -> str | None:
    """The job's name, which every rendered object is named after."""
    if metadata.generateName is not None:
        out.append(
            document.diagnostic(
                ("metadata", "generateName"),
                "generateName is not accepted: every object msgen renders is named after the "
                "job; accepted: metadata.name",
                key=True,
            )
        )
    if not metadata.name:
        out.append(document.diagnostic(("metadata",), "missing required field 'name'"))
        return None
    problems = dns1035_label(metadata.name)
    if problems:
        out.append(
            document.diagnostic(
                ("metadata", "name"), f"job name {metadata.name!r} {refused(problems)}"
            )
        )
        return None
    return str(metadata.name)


def main_container(
    template: dict[str, Any],
    document: Document,
    path: Path,
    replica_type: str,
    wanted: str,
    out: list[Diagnostic],
    *,
    only_one_is_main: bool,
    why: str = "which msgen configures",
) -> dict[str, Any] | None:
    """The container the operator configured: the one named `wanted` (`why`, said when
    there is none); every container has an image.

    With `only_one_is_main`, a pod's single container is configured whatever its name (with a
    warning), as the 2020 MSJob's own example needs.
    """
    containers: list[dict[str, Any]] = template["spec"]["containers"]
    containers_path = path + ("template", "spec", "containers")
    for index, container in enumerate(containers):
        if not container.get("image"):
            out.append(
                document.diagnostic(
                    containers_path + (index,),
                    f"container {container['name']!r} of {replica_type} has no image; "
                    "accepted: a container image reference",
                )
            )
    named = [c for c in containers if c["name"] == wanted]
    if named:
        return named[0]
    if only_one_is_main and len(containers) == 1:
        out.append(
            document.diagnostic(
                containers_path + (0, "name"),
                f"{replica_type}'s only container is named {containers[0]['name']!r}, not "
                f"{wanted!r}: msgen configures it, as the only container of the pod",
                severity=Severity.WARNING,
            )
        )
        return containers[0]
    names = ", ".join(repr(c["name"]) for c in containers)
    out.append(
        document.diagnostic(
            containers_path,
            f"{replica_type} has no container named {wanted!r} (found {names}); "
            f"accepted: one container named {wanted!r}, {why}",
        )
    )
    return None


def ports_of(container: dict[str, Any]) -> list[dict[str, Any]]:
    """The container's ports, a list from now on (`ports: null` is accepted, as by the API
    server)."""
    ports: list[dict[str, Any]] = container.get("ports") or []
    container["ports"] = ports
    return ports


def ensure_port(container: dict[str, Any], name: str, default: int) -> int:
    """The container's port called `name`, added with the operator's default when missing."""
    ports = ports_of(container)
    for port in ports:
        if port.get("name") == name:
            return int(port["containerPort"])
    ports.append({"containerPort": default, "name": name})
    return default


def check_volumes(
    template: dict[str, Any], document: Document, path: Path, out: list[Diagnostic]
) -> None:
    """Mounts must name declared volumes and carry only mount fields; unused volumes warn."""
    spec = template["spec"]
    spec_path = path + ("template", "spec")
    volumes = spec.get("volumes")
    declared = [
        v.get("name") if isinstance(v, dict) and isinstance(v.get("name"), str) else None
        for v in (volumes if isinstance(volumes, list) else [])
    ]
    mounted: set[str] = set()
    for group in ("initContainers", "containers"):
        for ci, container in enumerate(spec.get(group) or []):
            mounts = container.get("volumeMounts")
            for mi, mount in enumerate(mounts if isinstance(mounts, list) else []):
                mount_path = spec_path + (group, ci, "volumeMounts", mi)
                if not isinstance(mount, dict):
                    continue
                for key in mount:
                    if isinstance(key, str) and key not in VOLUME_MOUNT_FIELDS:
                        hint = (
                            f"; a {key} volume source belongs in the pod's volumes"
                            if key in VOLUME_SOURCES
                            else ""
                        )
                        out.append(
                            document.diagnostic(
                                mount_path + (key,),
                                f"{key!r} is not a field of a volumeMount{hint}; accepted: "
                                f"{', '.join(VOLUME_MOUNT_FIELDS)}",
                                key=True,
                            )
                        )
                name = mount.get("name")
                if not isinstance(name, str):
                    continue
                if not mount.get("mountPath"):
                    out.append(
                        document.diagnostic(
                            mount_path,
                            f"the mount of volume {name!r} has no mountPath; accepted: the "
                            "absolute path where the container sees the volume",
                        )
                    )
                mounted.add(name)
                if name not in declared:
                    import difflib  # only for a mistake: keeps valid renders' start-up lean

                    names = [d for d in declared if d]
                    close = difflib.get_close_matches(name, names, n=1)
                    known = ", ".join(repr(d) for d in names) or "none"
                    suggestion = f" (did you mean {close[0]!r}?)" if close else ""
                    out.append(
                        document.diagnostic(
                            mount_path + ("name",),
                            f"volume {name!r} is mounted but not declared in the pod's "
                            f"volumes{suggestion}; declared: {known}",
                        )
                    )
    for vi, name in enumerate(declared):
        if name and name not in mounted:
            out.append(
                document.diagnostic(
                    spec_path + ("volumes", vi, "name"),
                    f"volume {name!r} is declared but no container mounts it",
                    severity=Severity.WARNING,
                )
            )


def replica_type_of(
    key: str,
    accepted: tuple[str, ...],
    seen: dict[str, str],
    document: Document,
    path: Path,
    out: list[Diagnostic],
    unknown: str | None = None,
) -> str | None:
    """The replica type a replica-spec key names, matched case-insensitively; `unknown`, when
    given, is the error for a key that names none.

    The kubeflow/common operators (ms-operator, ascend-operator `setTypeNamesToCamelCase`,
    mxnet-operator `setMXNetTypeNamesToCamelCase`) accept `worker` or `WORKER` for `Worker`;
    so does msgen. Two keys naming one type (`Worker` and `worker`) are an error, where the
    operators would silently keep one. `seen` maps the types found so far to their keys.
    """
    replica_type = next((t for t in accepted if t.lower() == key.lower()), None)
    if replica_type is None:
        if unknown is not None:
            out.append(document.diagnostic(path, unknown, key=True))
        return None
    if replica_type in seen:
        out.append(
            document.diagnostic(
                path,
                f"more than one {replica_type}: keys {seen[replica_type]!r} and {key!r} name "
                "the same replica type; accepted: one key per replica type",
                key=True,
            )
        )
        return None
    seen[replica_type] = key
    return replica_type



def replica_role(
    replica_type: str,
    replicas: int,
    restart_policy: RestartPolicy | None,
    template: dict[str, Any],
    document: Document,
    path: Path,
    out: list[Diagnostic],
    operator: str,
) -> Role:
    """The Role of one replica spec of a kubeflow/common operator's job (ms-operator,
    mxnet-operator v1): its `restartPolicy` (Never when unset, docs/contracts.md) replaces
    whatever the pod template sets, as the operator does; one set there is named with a
    warning, since a user who wrote it expects it to count."""
    replaced: RestartPolicy = restart_policy or "Never"
    if (template.get("spec") or {}).get("restartPolicy") is not None:
        out.append(
            document.diagnostic(
                path + ("template", "spec", "restartPolicy"),
                "restartPolicy in the pod template is replaced by the replica's "
                f"restartPolicy ({replaced}), as {operator} does; set it on the replica instead",
                severity=Severity.WARNING,
            )
        )
    return Role(replica_type=replica_type, replicas=replicas, restart_policy=replaced, template=template, path=path)
