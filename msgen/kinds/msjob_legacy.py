"""`kubeflow.org/v1 MSJob`, the 2020 ms-operator's job (contracts §7).

`spec.replicaSpecs` is a list of `{replicas, replicaType: MASTER|WORKER, masterPort,
template}`, with one MASTER of one replica. `masterPort` (default 23456) may be written per
replica or, as the operator's own example does, at `spec` level, as a number or a string;
`backend` (e.g. `tcp`) is accepted and, as with the operator, not passed on. The pod
template's `restartPolicy` is kept (default Never).

The operator configured only a container named `mindspore`; its own example names the
container `msjob-mnist`, so a pod's only container is configured whatever its name, with a
warning. Old files are messy, so volume mounts are checked against the pod's volumes (a
mount of an undeclared volume would leave the pod stuck in ContainerCreating).
`msgen convert` rewrites such a job as a `mindspore.gitee.com/v1 MSJob`.
"""

from __future__ import annotations

from ..checks.input_model import Field

from ..model.diagnostics import Diagnostic
from ..model.plan import ALL_WORKERS, Role, RunPolicy
from ..model.source import Document, Path
from .podtemplate import ObjectMeta, PodTemplateSpec, _Model
from ..model.patch import copy_data
from .shared import InputKind, PlanFields, check_volumes, ensure_port, main_container

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal
    from ..model.extension_points import JobKind

API_VERSION = "kubeflow.org/v1"
KIND_NAME = "MSJob"
MAIN_CONTAINER = "mindspore"
PORT_NAME = "msjob-port"
DEFAULT_PORT = 23456
REPLICA_TYPES = ("MASTER", "WORKER")

PortText = int | str


class LegacyReplicaSpec(_Model):
    replicas: int | None = Field(default=None, ge=0)
    replicaType: Literal["MASTER", "WORKER"]
    masterPort: PortText | None = None
    template: PodTemplateSpec


class LegacyMSJobSpec(_Model):
    backend: str | None = None
    masterPort: PortText | None = None
    replicaSpecs: list[LegacyReplicaSpec] = Field(min_length=1)


class LegacyMSJob(_Model):
    """A 2020 MindSpore job: one MASTER and WORKERs."""

    apiVersion: Literal["kubeflow.org/v1"]
    kind: Literal["MSJob"]
    metadata: ObjectMeta
    spec: LegacyMSJobSpec
    status: dict[str, Any] | None = None


def parse_port(
    value: PortText | None, document: Document, path: Path, out: list[Diagnostic]
) -> int | None:
    """A port written as a number or a string of digits (the operator's example quotes it)."""
    if value is None:
        return None
    text = str(value).strip()
    if text.isdigit() and 1 <= int(text) <= 65535:
        return int(text)
    out.append(
        document.diagnostic(
            path, f"masterPort {value!r} is not a port; accepted: a number from 1 to 65535"
        )
    )
    return None


class LegacyMSJobKind(InputKind[LegacyMSJob]):
    api_version = API_VERSION
    kind = KIND_NAME
    input_model = LegacyMSJob

    def roles(self, job: LegacyMSJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
        return _roles(job, document, out)

    def fields(
        self, job: LegacyMSJob, roles: tuple[Role, ...], document: Document, out: list[Diagnostic]
    ) -> PlanFields:
        return PlanFields(
            framework="mindspore-legacy",
            main_container=_main_name(roles),
            port_name=PORT_NAME,
            run_policy=RunPolicy(clean_pod_policy="None"),
            success_policy=ALL_WORKERS,
            static_indexes=True,
        )


def _main_name(roles: tuple[Role, ...]) -> str:
    """`mindspore`, or (only-container case) the name every role's single container shares."""
    for role in roles:
        names = [c["name"] for c in role.containers()]
        if MAIN_CONTAINER not in names:
            return str(names[0])
    return MAIN_CONTAINER


def _roles(job: LegacyMSJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
    spec_port = parse_port(job.spec.masterPort, document, ("spec", "masterPort"), out)
    found: dict[str, Role] = {}
    ports: dict[str, tuple[int, Path]] = {}
    main_names: set[str] = set()
    for index, spec in enumerate(job.spec.replicaSpecs):
        path: Path = ("spec", "replicaSpecs", index)
        replica_type = spec.replicaType
        if replica_type in found:
            out.append(
                document.diagnostic(
                    path + ("replicaType",),
                    f"a second {replica_type} replica spec; accepted: one entry per replicaType",
                )
            )
            continue
        replicas = 1 if spec.replicas is None else spec.replicas
        if replica_type == "MASTER" and replicas != 1:
            out.append(
                document.diagnostic(
                    path + ("replicas",),
                    f"the MASTER must have exactly one replica, not {replicas}",
                )
            )
        port_path = path + ("masterPort",)
        port = parse_port(spec.masterPort, document, port_path, out)
        if port is None:
            port, port_path = spec_port or DEFAULT_PORT, ("spec", "masterPort")
        template = copy_data(document.data["spec"]["replicaSpecs"][index]["template"])
        main = main_container(
            template, document, path, replica_type, MAIN_CONTAINER, out, only_one_is_main=True
        )
        if main is not None:
            main_names.add(main["name"])
            listening = ensure_port(main, PORT_NAME, port)
            if listening != port and (spec.masterPort is not None or spec_port is not None):
                out.append(
                    document.diagnostic(
                        port_path,
                        f"masterPort {port} differs from the {PORT_NAME} port {listening} of "
                        f"container {main['name']!r}; accepted: the same port in both places, "
                        "or only one of them",
                    )
                )
            ports[replica_type] = (listening, port_path)
        check_volumes(template, document, path, out)
        found[replica_type] = Role(
            replica_type=replica_type,
            replicas=replicas,
            restart_policy=spec.template.spec.restartPolicy or "Never",
            template=template,
            path=path,
        )
    if "MASTER" not in found:
        out.append(
            document.diagnostic(
                ("spec", "replicaSpecs"),
                "no MASTER replica spec; accepted: one MASTER (replicas 1) and any WORKERs",
            )
        )
    elif "WORKER" in ports and "MASTER" in ports and ports["WORKER"][0] != ports["MASTER"][0]:
        out.append(
            document.diagnostic(
                ports["WORKER"][1],
                f"masterPort {ports['WORKER'][0]} differs from the MASTER's "
                f"{ports['MASTER'][0]}; accepted: the port the MASTER listens on",
            )
        )
    if len(main_names) > 1:
        out.append(
            document.diagnostic(
                ("spec", "replicaSpecs"),
                f"the configured containers are named differently ({', '.join(sorted(main_names))}); "
                f"accepted: the same name in every replica, best {MAIN_CONTAINER!r}",
            )
        )
    return tuple(found[t] for t in REPLICA_TYPES if t in found)


KIND: JobKind = LegacyMSJobKind()
