"""`mxnet.mlkube.io/v1beta1 MxJob`, the original mxnet-operator's job (contracts §5).

The group is `mxnet.mlkube.io` (deepinsight/mxnet-operator `pkg/spec/mx_job.go` `CRDGroup`,
and every example there); `mlkube.io`, its group for a few days in 2017, is accepted too.
`spec.replicaSpecs` is a list of `{replicas, mxReplicaType, PsRootPort, template}`.
`jobMode: dist` needs one SCHEDULER (exactly one replica), and SERVER and WORKER replicas;
`jobMode: local` is one WORKER and nothing else, with no cluster env. `PsRootPort` (default
9091) is the port of the replica's `mxnet` container called `mxjob-port`, and the
SCHEDULER's is `DMLC_PS_ROOT_PORT`. It compiles to the same roles as `kubeflow.org/v1 MXJob`,
with that operator's own env (`frameworks/mxnet_original.py`); `msgen convert` rewrites it
as a `kubeflow.org/v1 MXJob`.
"""

from __future__ import annotations

from ...checks.input_model import Field

from ...model.diagnostics import Diagnostic
from ...model.plan import Role, RunPolicy
from ...model.source import Document, Path
from ..shared import InputKind, PlanFields
from .v1 import DEFAULT_PORT, MAIN_CONTAINER, PORT_NAME, check_replica, mxnet_fields
from ..podtemplate import ObjectMeta, PodTemplateSpec, _Model
from ...model.patch import copy_data

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal
    from ...model.extension_points import JobKind

API_VERSION = "mxnet.mlkube.io/v1beta1"
#: The group the seed job files show (`MxJob.v1beta1.mlkube.io`), accepted as well.
SEED_API_VERSION = "mlkube.io/v1beta1"
KIND_NAME = "MxJob"
#: The operator's replica types, and the names `kubeflow.org/v1 MXJob` gives them.
REPLICA_TYPES = {"SCHEDULER": "Scheduler", "SERVER": "Server", "WORKER": "Worker"}


class MxReplicaSpec(_Model):
    replicas: int | None = Field(default=None, ge=0)
    mxReplicaType: Literal["SCHEDULER", "SERVER", "WORKER"]
    PsRootPort: int | None = Field(default=None, ge=1, le=65535)
    template: PodTemplateSpec


class MxJobSpec(_Model):
    jobMode: Literal["local", "dist"]
    replicaSpecs: list[MxReplicaSpec] = Field(min_length=1)


class MxJob(_Model):
    """An MXNet job for the original mxnet-operator."""

    apiVersion: Literal["mxnet.mlkube.io/v1beta1"]
    kind: Literal["MxJob"]
    metadata: ObjectMeta
    spec: MxJobSpec
    status: dict[str, Any] | None = None


class SeedMxJob(MxJob):
    """An MXNet job for the original mxnet-operator."""

    # The same job in the group the seed files show (the docstring is the schema's text).
    apiVersion: Literal["mlkube.io/v1beta1"]  # type: ignore[assignment]


class MxJobKind(InputKind[MxJob]):
    kind = KIND_NAME

    def __init__(self, api_version: str, model: type[MxJob]):
        self.api_version = api_version
        self.input_model = model

    def roles(self, job: MxJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
        return _roles(job, document, out)

    def fields(
        self, job: MxJob, roles: tuple[Role, ...], document: Document, out: list[Diagnostic]
    ) -> PlanFields:
        return mxnet_fields(roles, RunPolicy(clean_pod_policy="None"), framework="mxnet-original")


def _roles(job: MxJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
    found: dict[str, Role] = {}
    for index, spec in enumerate(job.spec.replicaSpecs):
        path: Path = ("spec", "replicaSpecs", index)
        old_type = spec.mxReplicaType
        replica_type = REPLICA_TYPES[old_type]
        if replica_type in found:
            out.append(
                document.diagnostic(
                    path + ("mxReplicaType",),
                    f"a second {old_type} replica spec; accepted: one entry per mxReplicaType",
                )
            )
            continue
        replicas = 1 if spec.replicas is None else spec.replicas
        template = copy_data(document.data["spec"]["replicaSpecs"][index]["template"])
        port = spec.PsRootPort or DEFAULT_PORT
        check_replica(
            template,
            document,
            path,
            replica_type,
            replicas,
            out,
            replicas_path=path + ("replicas",),
            default_port=port,
        )
        _check_port(template, spec.PsRootPort, document, path, out)
        found[replica_type] = Role(
            replica_type=replica_type,
            replicas=replicas,
            # The operator left the pod template's restartPolicy as written.
            restart_policy=spec.template.spec.restartPolicy or "Never",
            template=template,
            path=path,
        )
    _check_mode(job, found, document, out)
    return tuple(found[t] for t in REPLICA_TYPES.values() if t in found)


def _check_port(
    template: dict[str, Any], ps_root_port: int | None, document: Document, path: Path,
    out: list[Diagnostic],
) -> None:  # fmt: skip
    if ps_root_port is None:
        return
    for container in template["spec"]["containers"]:
        if container["name"] != MAIN_CONTAINER:
            continue
        for port in container.get("ports") or []:
            if port.get("name") == PORT_NAME and port["containerPort"] != ps_root_port:
                out.append(
                    document.diagnostic(
                        path + ("PsRootPort",),
                        f"PsRootPort {ps_root_port} differs from the {PORT_NAME} port "
                        f"{port['containerPort']} of container {MAIN_CONTAINER!r}; accepted: "
                        "the same port in both places, or only one of them",
                    )
                )


def _check_mode(
    job: MxJob, found: dict[str, Role], document: Document, out: list[Diagnostic]
) -> None:
    mode_path: Path = ("spec", "jobMode")
    if job.spec.jobMode == "dist":
        missing = [old for old, new in REPLICA_TYPES.items() if new not in found]
        if missing:
            out.append(
                document.diagnostic(
                    mode_path,
                    f"jobMode dist needs SCHEDULER, SERVER and WORKER replica specs; missing: "
                    f"{', '.join(missing)}",
                )
            )
        scheduler = found.get("Scheduler")
        if scheduler is not None and scheduler.replicas == 0:
            out.append(
                document.diagnostic(
                    scheduler.path + ("replicas",),
                    "the SCHEDULER must have exactly one replica, not 0",
                )
            )
        return
    others = [old for old, new in REPLICA_TYPES.items() if new in found and new != "Worker"]
    worker = found.get("Worker")
    if others or worker is None or worker.replicas != 1:
        out.append(
            document.diagnostic(
                mode_path,
                "jobMode local runs one process: accepted: a single WORKER replica spec with "
                "replicas 1 (use jobMode dist for SCHEDULER, SERVER and WORKER)",
            )
        )


KIND: JobKind = MxJobKind(API_VERSION, MxJob)
SEED_KIND: JobKind = MxJobKind(SEED_API_VERSION, SeedMxJob)
