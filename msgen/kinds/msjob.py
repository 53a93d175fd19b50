"""`mindspore.gitee.com/v1 MSJob`, exactly as ms-operator's CRD accepts it.

Defaulting and validation follow ms-operator (contracts §1): replica keys match
case-insensitively, `replicas` defaults to 1, `restartPolicy` to Never, `cleanPodPolicy` to
Running, and container `mindspore` gets port `msjob-port` 2222 unless it names one itself.
"""

from __future__ import annotations

from ..checks.input_model import Field

from ..model.diagnostics import Diagnostic
from ..model.plan import CleanPodPolicy, Role, RunPolicy, SchedulingPolicy
from ..model.source import Document, Path
from .podtemplate import INT32_MAX, INT64_MAX, ObjectMeta, PodTemplateSpec, Quantity, _Model
from ..model.patch import copy_data
from .shared import InputKind, PlanFields, ensure_port, main_container, replica_role, replica_type_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal
    from ..model.extension_points import JobKind

API_VERSION = "mindspore.gitee.com/v1"
KIND_NAME = "MSJob"
MAIN_CONTAINER = "mindspore"
PORT_NAME = "msjob-port"
DEFAULT_PORT = 2222
REPLICA_TYPES = ("Scheduler", "PS", "Worker")


class MSSchedulingPolicy(_Model):
    minAvailable: int | None = Field(default=None, ge=0, le=INT32_MAX)
    queue: str | None = None
    minResources: dict[str, Quantity] | None = None
    priorityClass: str | None = None


class MSRunPolicy(_Model):
    cleanPodPolicy: Literal["All", "Running", "None"] | None = None
    ttlSecondsAfterFinished: int | None = Field(default=None, ge=0, le=INT32_MAX)
    activeDeadlineSeconds: int | None = Field(default=None, ge=1, le=INT64_MAX)
    backoffLimit: int | None = Field(default=None, ge=0, le=INT32_MAX)
    schedulingPolicy: MSSchedulingPolicy | None = None


class MSReplicaSpec(_Model):
    replicas: int | None = Field(default=None, ge=0)
    restartPolicy: Literal["Always", "OnFailure", "Never", "ExitCode"] | None = None
    template: PodTemplateSpec


class MSJobSpec(_Model):
    msReplicaSpecs: dict[str, MSReplicaSpec]
    runPolicy: MSRunPolicy | None = None
    successPolicy: Literal["", "AllWorkers"] | None = None
    enableDynamicWorker: bool | None = None


class MSJob(_Model):
    """A MindSpore training job: Scheduler, PS and Worker replicas."""

    apiVersion: Literal["mindspore.gitee.com/v1"]
    kind: Literal["MSJob"]
    metadata: ObjectMeta
    spec: MSJobSpec
    status: dict[str, Any] | None = None


class MSJobKind(InputKind[MSJob]):
    api_version = API_VERSION
    kind = KIND_NAME
    input_model = MSJob

    def roles(self, job: MSJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
        raw_specs: dict[str, Any] = document.data["spec"]["msReplicaSpecs"]
        found: dict[str, Role] = {}
        keys: dict[str, str] = {}
        for key, spec in job.spec.msReplicaSpecs.items():
            path: Path = ("spec", "msReplicaSpecs", key)
            unknown = f"unknown replica type {key!r}; accepted: {', '.join(REPLICA_TYPES)} (in any letter case)"
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
            # ms-operator's checks: every container has an image; one is named `mindspore`.
            main = main_container(template, document, path, replica_type, MAIN_CONTAINER, out, only_one_is_main=False)
            if main is not None:
                ensure_port(main, PORT_NAME, DEFAULT_PORT)
            found[replica_type] = replica_role(replica_type, replicas, spec.restartPolicy, template, document, path,
                                               out, "ms-operator")
        return tuple(found[t] for t in REPLICA_TYPES if t in found)

    def fields(
        self, job: MSJob, roles: tuple[Role, ...], document: Document, out: list[Diagnostic]
    ) -> PlanFields:
        return PlanFields(
            framework="mindspore",
            main_container=MAIN_CONTAINER,
            port_name=PORT_NAME,
            run_policy=to_run_policy(job.spec.runPolicy),
            success_policy=job.spec.successPolicy or "",
            enable_dynamic_worker=bool(job.spec.enableDynamicWorker),
        )


def to_run_policy(
    policy: MSRunPolicy | None, default_clean_pod_policy: CleanPodPolicy = "Running"
) -> RunPolicy:
    """The run policy with the operator's defaults (ms-operator: cleanPodPolicy Running)."""
    if policy is None:
        return RunPolicy(clean_pod_policy=default_clean_pod_policy)
    scheduling = policy.schedulingPolicy
    return RunPolicy(
        clean_pod_policy=policy.cleanPodPolicy or default_clean_pod_policy,
        clean_pod_policy_written=policy.cleanPodPolicy is not None,
        ttl_seconds_after_finished=policy.ttlSecondsAfterFinished,
        active_deadline_seconds=policy.activeDeadlineSeconds,
        backoff_limit=policy.backoffLimit,
        scheduling=(
            SchedulingPolicy(
                min_available=scheduling.minAvailable,
                # The operators' Go types read an empty string as a field not set (omitempty).
                queue=scheduling.queue or None,
                min_resources=scheduling.minResources,
                priority_class=scheduling.priorityClass or None,
            )
            if scheduling is not None
            else None
        ),
    )


KIND: JobKind = MSJobKind()
