"""`mindxdl.gitee.com/v1 AscendJob` (ascend-operator), for its MindSpore form (contracts §3).

An AscendJob labelled `framework: mindspore` compiles like an MSJob with ascend-operator's
names: replicas `Scheduler` and `Worker`, container `ascend`, port `ascendjob-port` (2222
unless the container names one). Its pods see ascend-operator's environment: every Worker pod
gets `MS_LOCAL_WORKER` (devices per pod) and `MS_NODE_RANK` (its index), `MS_WORKER_NUM`
counts devices × Worker pods, and the pod's own launch script starts one process per device
(launcher `none` by default), so launch scripts written for ascend-operator keep working.
Replica keys match in any letter case; `cleanPodPolicy` defaults to None and, without a
`successPolicy`, the job succeeds when all its pods have (ascend-operator's defaults, not
ms-operator's). The job's `recover-strategy` annotation and fault-tolerance labels become the
env ascend-operator derives from them (`ascend_recovery`).
PyTorch and TensorFlow AscendJobs use other env contracts (`Master`/`Chief` replicas) and are
refused with a clear message.
"""

from __future__ import annotations

from typing import Any, Literal

from . import JobKind
from ..checks.input_model import BaseModel, Field

from ..model.diagnostics import Diagnostic, Severity
from ..model.plan import ALL_WORKERS, Options, Plan, Role
from ..model.source import Document, Path
from .msjob import MSReplicaSpec, MSRunPolicy, MSSchedulingPolicy, to_run_policy
from .podtemplate import INT32_MAX, ObjectMeta, _Model
from . import ascend_recovery as recovery
from ..model.patch import copy_data
from .shared import job_name, replica_type_of
from ..checks.validation import validate_model

API_VERSION = "mindxdl.gitee.com/v1"
KIND_NAME = "AscendJob"
MAIN_CONTAINER = "ascend"
PORT_NAME = "ascendjob-port"
DEFAULT_PORT = 2222
REPLICA_TYPES = ("Scheduler", "Worker")
FRAMEWORK_LABEL = "framework"
FRAMEWORKS = ("mindspore", "pytorch", "tensorflow")


class AscendSchedulingPolicy(MSSchedulingPolicy):
    scheduleTimeoutSeconds: int | None = Field(default=None, ge=0, le=INT32_MAX)


class AscendRunPolicy(MSRunPolicy):
    """ms-operator's runPolicy, with the scheduling and suspend fields ascend-operator adds."""

    schedulingPolicy: AscendSchedulingPolicy | None = None
    suspend: bool | None = None


class AscendJobSpec(_Model):
    replicaSpecs: dict[str, MSReplicaSpec]
    runPolicy: AscendRunPolicy | None = None
    successPolicy: Literal["", "AllWorkers"] | None = None
    schedulerName: str | None = None


class AscendJob(_Model):
    """An ascend-operator training job; msgen compiles the MindSpore form."""

    apiVersion: Literal["mindxdl.gitee.com/v1"]
    kind: Literal["AscendJob"]
    metadata: ObjectMeta
    spec: AscendJobSpec
    status: dict[str, Any] | None = None


class AscendJobKind:
    api_version = API_VERSION
    kind = KIND_NAME

    def model(self) -> type[BaseModel]:
        return AscendJob

    def to_plan(self, document: Document, options: Options) -> tuple[Plan | None, list[Diagnostic]]:
        job, diagnostics = validate_model(AscendJob, document)
        if job is None:
            return None, diagnostics
        _check_framework(job, document, diagnostics)
        if any(d.is_error for d in diagnostics):
            return None, diagnostics
        name = job_name(job.metadata, document, diagnostics)
        roles = _roles(job, document, diagnostics)
        if name is None or any(d.is_error for d in diagnostics):
            return None, diagnostics
        if job.spec.schedulerName is not None:
            diagnostics.append(
                document.diagnostic(
                    ("spec", "schedulerName"),
                    "not expressed: for a gang-scheduling PodGroup pass "
                    "--gang-scheduler volcano (or the msgen/gang-scheduler annotation); set "
                    "schedulerName in the pod templates to use another scheduler",
                    severity=Severity.WARNING,
                )
            )
        meta = job.metadata
        return (
            Plan(
                api_version=API_VERSION,
                kind=KIND_NAME,
                name=name,
                namespace=meta.namespace or options.namespace,
                labels=dict(meta.labels or {}),
                framework="mindspore",
                main_container=MAIN_CONTAINER,
                port_name=PORT_NAME,
                roles=roles,
                # ascend-operator's defaults (SetDefaultsAscendJob, checkSpecStatus): pods
                # are left as they are when the job ends, and without a successPolicy the job
                # succeeds when all its pods have.
                run_policy=to_run_policy(job.spec.runPolicy, default_clean_pod_policy="None"),
                success_policy=job.spec.successPolicy or ALL_WORKERS,
                enable_dynamic_worker=False,
                document=document,
                process_contract="ascend-operator",
                framework_settings=recovery.recovery_env(document, diagnostics),
            ),
            diagnostics,
        )


def _check_framework(job: AscendJob, document: Document, out: list[Diagnostic]) -> None:
    labels = job.metadata.labels or {}
    framework = labels.get(FRAMEWORK_LABEL)
    if framework is None:
        out.append(
            document.diagnostic(
                ("metadata", "labels") if labels else ("metadata",),
                f"an AscendJob needs the label {FRAMEWORK_LABEL!r} (ascend-operator requires "
                "it); accepted: framework: mindspore",
            )
        )
    elif framework != "mindspore":
        known = framework in FRAMEWORKS
        out.append(
            document.diagnostic(
                ("metadata", "labels", FRAMEWORK_LABEL),
                f"framework {framework!r}: "
                + (
                    "msgen compiles MindSpore AscendJobs only; PyTorch and TensorFlow jobs use "
                    "ascend-operator's other env contracts"
                    if known
                    else "not an ascend-operator framework"
                )
                + "; accepted: mindspore",
            )
        )


def _roles(job: AscendJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
    raw_specs: dict[str, Any] = document.data["spec"]["replicaSpecs"]
    found: dict[str, Role] = {}
    keys: dict[str, str] = {}
    for key, spec in job.spec.replicaSpecs.items():
        path: Path = ("spec", "replicaSpecs", key)
        replica_type = replica_type_of(key, REPLICA_TYPES, keys, document, path, out)
        if replica_type is None:
            if key.lower() not in {t.lower() for t in REPLICA_TYPES}:
                out.append(
                    document.diagnostic(
                        path,
                        f"replica type {key!r} is not part of a MindSpore AscendJob; accepted: "
                        f"{', '.join(REPLICA_TYPES)} (in any letter case)",
                        key=True,
                    )
                )
            continue
        replicas = 1 if spec.replicas is None else spec.replicas
        if replica_type == "Scheduler" and replicas > 1:
            out.append(
                document.diagnostic(
                    path + ("replicas",),
                    f"more than one Scheduler: replicas {replicas}; accepted: 0 or 1",
                )
            )
        template = copy_data(raw_specs[key]["template"])
        _check_containers(template, document, path, replica_type, out)
        found[replica_type] = Role(
            replica_type=replica_type,
            replicas=replicas,
            restart_policy=spec.restartPolicy or "Never",
            template=template,
            path=path,
        )
    return tuple(found[t] for t in REPLICA_TYPES if t in found)


def _check_containers(
    template: dict[str, Any], document: Document, path: Path, replica_type: str, out: list[Diagnostic]
) -> None:
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
    main = [c for c in containers if c["name"] == MAIN_CONTAINER]
    if not main:
        names = ", ".join(repr(c["name"]) for c in containers)
        out.append(
            document.diagnostic(
                containers_path,
                f"{replica_type} has no container named {MAIN_CONTAINER!r} (found {names}); "
                f"accepted: one container named {MAIN_CONTAINER!r}, as ascend-operator expects",
            )
        )
        return
    ports = main[0].get("ports") or []  # (`ports: null` too)
    main[0]["ports"] = ports
    # ascend-operator's SetDefaultsAscendJob gives every role but Worker the default port:
    # only the Scheduler's port is reached by others.
    if replica_type != "Worker" and not any(p.get("name") == PORT_NAME for p in ports):
        ports.append({"containerPort": DEFAULT_PORT, "name": PORT_NAME})


KIND: JobKind = AscendJobKind()
