"""`mindspore.gitee.com/v1 MSJob`, exactly as ms-operator's CRD accepts it.

Defaulting and validation follow ms-operator (contracts §1): replica keys match
case-insensitively, `replicas` defaults to 1, `restartPolicy` to Never, `cleanPodPolicy` to
Running, and container `mindspore` gets port `msjob-port` 2222 unless it names one itself.
"""

from __future__ import annotations

from typing import Any, Literal

from . import JobKind
from ..checks.input_model import BaseModel, Field

from ..model.diagnostics import Diagnostic, Severity
from ..model.plan import CleanPodPolicy, Options, Plan, Role, RunPolicy, SchedulingPolicy
from ..model.source import Document, Path
from .podtemplate import INT32_MAX, INT64_MAX, ObjectMeta, PodTemplateSpec, Quantity, _Model
from ..model.patch import copy_data
from .shared import job_name
from ..checks.validation import validate_model

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


class MSJobKind:
    api_version = API_VERSION
    kind = KIND_NAME

    def model(self) -> type[BaseModel]:
        return MSJob

    def to_plan(self, document: Document, options: Options) -> tuple[Plan | None, list[Diagnostic]]:
        job, diagnostics = validate_model(MSJob, document)
        if job is None:
            return None, diagnostics
        name = job_name(job.metadata, document, diagnostics)
        roles = _roles(job, document, diagnostics)
        if name is None or any(d.is_error for d in diagnostics):
            return None, diagnostics
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
                run_policy=to_run_policy(job.spec.runPolicy),
                success_policy=job.spec.successPolicy or "",
                enable_dynamic_worker=bool(job.spec.enableDynamicWorker),
                document=document,
            ),
            diagnostics,
        )


def _roles(job: MSJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
    raw_specs: dict[str, Any] = document.data["spec"]["msReplicaSpecs"]
    found: dict[str, tuple[str, Role]] = {}
    for key, spec in job.spec.msReplicaSpecs.items():
        path: Path = ("spec", "msReplicaSpecs", key)
        replica_type = next((t for t in REPLICA_TYPES if t.lower() == key.lower()), None)
        if replica_type is None:
            out.append(
                document.diagnostic(
                    path,
                    f"unknown replica type {key!r}; accepted: {', '.join(REPLICA_TYPES)} "
                    "(in any letter case)",
                    key=True,
                )
            )
            continue
        if replica_type in found:
            out.append(
                document.diagnostic(
                    path,
                    f"more than one {replica_type}: keys {found[replica_type][0]!r} and {key!r} "
                    "name the same replica type; accepted: one key per replica type",
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
        if spec.template.spec.restartPolicy is not None:
            out.append(
                document.diagnostic(
                    path + ("template", "spec", "restartPolicy"),
                    "restartPolicy in the pod template is replaced by the replica's "
                    f"restartPolicy ({spec.restartPolicy or 'Never'}), as ms-operator does; "
                    "set it on the replica instead",
                    severity=Severity.WARNING,
                )
            )
        found[replica_type] = (
            key,
            Role(
                replica_type=replica_type,
                replicas=replicas,
                restart_policy=spec.restartPolicy or "Never",
                template=template,
                path=path,
            ),
        )
    return tuple(found[t][1] for t in REPLICA_TYPES if t in found)


def _check_containers(
    template: dict[str, Any],
    document: Document,
    path: Path,
    replica_type: str,
    out: list[Diagnostic],
) -> None:
    """ms-operator's checks: every container has an image; one is named `mindspore`."""
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
                f"accepted: one container named {MAIN_CONTAINER!r}, which msgen configures",
            )
        )
        return
    ports = main[0].get("ports") or []  # `ports: null` is accepted, as by the API server
    main[0]["ports"] = ports
    if not any(p.get("name") == PORT_NAME for p in ports):
        ports.append({"containerPort": DEFAULT_PORT, "name": PORT_NAME})


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
