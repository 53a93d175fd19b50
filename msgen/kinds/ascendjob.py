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

from ..checks.input_model import Field

from ..model.diagnostics import Diagnostic, Severity
from ..model.plan import ALL_WORKERS, Role
from ..model.source import Document, Path
from .msjob import MSReplicaSpec, MSRunPolicy, MSSchedulingPolicy, to_run_policy
from .podtemplate import INT32_MAX, ObjectMeta, _Model
from . import ascend_recovery as recovery
from ..model.patch import copy_data
from .shared import InputKind, PlanFields, ensure_port, main_container, ports_of, replica_type_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal
    from ..model.extension_points import JobKind

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


class AscendJobKind(InputKind[AscendJob]):
    api_version = API_VERSION
    kind = KIND_NAME
    input_model = AscendJob

    def accepts(self, job: AscendJob, document: Document, out: list[Diagnostic]) -> bool:
        """Only MindSpore AscendJobs: the roles of another framework's are not read."""
        return _check_framework(job, document, out)

    def roles(self, job: AscendJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
        return _roles(job, document, out)

    def fields(
        self, job: AscendJob, roles: tuple[Role, ...], document: Document, out: list[Diagnostic]
    ) -> PlanFields:
        if job.spec.schedulerName is not None:
            out.append(
                document.diagnostic(
                    ("spec", "schedulerName"),
                    "not expressed: for a gang-scheduling PodGroup pass "
                    "--gang-scheduler volcano (or the msgen/gang-scheduler annotation); set "
                    "schedulerName in the pod templates to use another scheduler",
                    severity=Severity.WARNING,
                )
            )
        return PlanFields(
            framework="mindspore",
            main_container=MAIN_CONTAINER,
            port_name=PORT_NAME,
            # ascend-operator's defaults (SetDefaultsAscendJob, checkSpecStatus): pods are left
            # as they are when the job ends, and without a successPolicy the job succeeds when
            # all its pods have.
            run_policy=to_run_policy(job.spec.runPolicy, default_clean_pod_policy="None"),
            success_policy=job.spec.successPolicy or ALL_WORKERS,
            process_contract="ascend-operator",
            framework_settings=recovery.recovery_env(document, out),
        )


def _check_framework(job: AscendJob, document: Document, out: list[Diagnostic]) -> bool:
    """Whether the job is a MindSpore AscendJob; an error saying which it is otherwise."""
    labels = job.metadata.labels or {}
    framework = labels.get(FRAMEWORK_LABEL)
    if framework == "mindspore":
        return True
    if framework is None:
        out.append(
            document.diagnostic(
                ("metadata", "labels") if labels else ("metadata",),
                f"an AscendJob needs the label {FRAMEWORK_LABEL!r} (ascend-operator requires "
                "it); accepted: framework: mindspore",
            )
        )
    else:
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
    return False


def _roles(job: AscendJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
    raw_specs: dict[str, Any] = document.data["spec"]["replicaSpecs"]
    found: dict[str, Role] = {}
    keys: dict[str, str] = {}
    for key, spec in job.spec.replicaSpecs.items():
        path: Path = ("spec", "replicaSpecs", key)
        unknown = (
            f"replica type {key!r} is not part of a MindSpore AscendJob; accepted: "
            f"{', '.join(REPLICA_TYPES)} (in any letter case)"
        )
        replica_type = replica_type_of(key, REPLICA_TYPES, keys, document, path, out, unknown)
        if replica_type is None:
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
        main = main_container(
            template, document, path, replica_type, MAIN_CONTAINER, out,
            only_one_is_main=False, why="as ascend-operator expects",
        )  # fmt: skip
        if main is not None:
            # ascend-operator's SetDefaultsAscendJob gives every role but Worker the default
            # port: only the Scheduler's port is reached by others.
            if replica_type == "Worker":
                ports_of(main)
            else:
                ensure_port(main, PORT_NAME, DEFAULT_PORT)
        found[replica_type] = Role(
            replica_type=replica_type,
            replicas=replicas,
            restart_policy=spec.restartPolicy or "Never",
            template=template,
            path=path,
        )
    return tuple(found[t] for t in REPLICA_TYPES if t in found)


KIND: JobKind = AscendJobKind()
