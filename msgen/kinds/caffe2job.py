"""`kubeflow.org/v1alpha1 Caffe2Job`, as caffe2-operator accepted it (contracts §6).

One replica set of workers (`spec.replicaSpecs`, no parameter server) meeting through a Redis
server or an NFS directory (`spec.backendSpecs`). Every replica has a container named
`caffe2` with an image, which gets port `caffe2job-port` 2222 unless it names one itself.
The job ends with its chief, worker 0 (`spec.terminationPolicy.chief`).
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..diagnostics import Diagnostic, Severity
from ..frameworks import caffe2
from ..plan import Options, Plan, Role, RunPolicy
from ..source import Document, Path
from .podtemplate import ObjectMeta, PodTemplateSpec, _Model
from .shared import ensure_port, job_name, main_container
from .validation import validate_model

API_VERSION = "kubeflow.org/v1alpha1"
KIND_NAME = "Caffe2Job"
MAIN_CONTAINER = "caffe2"
PORT_NAME = "caffe2job-port"
DEFAULT_PORT = 2222
DEFAULT_REDIS_PORT = 6379


class BackendSpec(_Model):
    backendType: Literal["none", "redis", "nfs"]
    redisHost: str | None = None
    redisPort: int | None = Field(default=None, ge=1, le=65535)
    nfsPath: str | None = None


class ReplicaSpec(_Model):
    replicas: int | None = Field(default=None, ge=1)
    template: PodTemplateSpec


class Chief(_Model):
    replicaName: str | None = None
    replicaIndex: int | None = Field(default=None, ge=0)


class TerminationPolicy(_Model):
    chief: Chief | None = None


class Caffe2JobSpec(_Model):
    backendSpecs: BackendSpec | None = None
    replicaSpecs: ReplicaSpec
    terminationPolicy: TerminationPolicy | None = None


class Caffe2Job(_Model):
    """A Caffe2 job: workers that share gradients through Gloo, meeting via Redis or NFS."""

    apiVersion: Literal["kubeflow.org/v1alpha1"]
    kind: Literal["Caffe2Job"]
    metadata: ObjectMeta
    spec: Caffe2JobSpec
    status: dict[str, Any] | None = None


class Caffe2JobKind:
    api_version = API_VERSION
    kind = KIND_NAME

    def model(self) -> type[BaseModel]:
        return Caffe2Job

    def to_plan(self, document: Document, options: Options) -> tuple[Plan | None, list[Diagnostic]]:
        job, out = validate_model(Caffe2Job, document)
        if job is None:
            return None, out
        name = job_name(job.metadata, document, out)
        settings = _backend(job, document, out)
        path: Path = ("spec", "replicaSpecs")
        template = copy.deepcopy(document.data["spec"]["replicaSpecs"]["template"])
        main = main_container(
            template, document, path, "the Caffe2Job", MAIN_CONTAINER, out, only_one_is_main=False
        )
        if main is not None:
            ensure_port(main, PORT_NAME, DEFAULT_PORT)
        _check_chief(job, document, out)
        if name is None or any(d.is_error for d in out):
            return None, out
        spec = job.spec.replicaSpecs
        role = Role(
            replica_type="Worker",
            replicas=spec.replicas or 1,
            restart_policy=spec.template.spec.restartPolicy or "Never",
            template=template,
            path=path,
        )
        meta = job.metadata
        plan = Plan(
            api_version=API_VERSION,
            kind=KIND_NAME,
            name=name,
            namespace=meta.namespace or options.namespace,
            labels=dict(meta.labels or {}),
            framework="caffe2",
            main_container=MAIN_CONTAINER,
            port_name=PORT_NAME,
            roles=(role,),
            run_policy=RunPolicy(clean_pod_policy="None"),
            success_policy="",
            enable_dynamic_worker=False,
            document=document,
            framework_settings=settings,
        )
        return plan, out


def _backend(job: Caffe2Job, document: Document, out: list[Diagnostic]) -> dict[str, str]:
    backend = job.spec.backendSpecs
    path: Path = ("spec", "backendSpecs")
    if backend is None or backend.backendType == "none":
        return {}
    if backend.backendType == "redis":
        if not backend.redisHost:
            out.append(
                document.diagnostic(
                    path, "backendType redis needs redisHost; accepted: the Redis server's host"
                )
            )
            return {}
        return {
            caffe2.REDIS_HOST: backend.redisHost,
            caffe2.REDIS_PORT: str(backend.redisPort or DEFAULT_REDIS_PORT),
        }
    if not backend.nfsPath:
        out.append(
            document.diagnostic(
                path, "backendType nfs needs nfsPath; accepted: a directory every worker mounts"
            )
        )
        return {}
    return {caffe2.NFS_PATH: backend.nfsPath}


def _check_chief(job: Caffe2Job, document: Document, out: list[Diagnostic]) -> None:
    policy = job.spec.terminationPolicy
    chief = policy.chief if policy is not None else None
    if chief is None:
        return
    path: Path = ("spec", "terminationPolicy", "chief")
    if chief.replicaName not in (None, "worker", "Worker", "WORKER"):
        out.append(
            document.diagnostic(
                path + ("replicaName",),
                f"chief replicaName {chief.replicaName!r} names no replica; accepted: worker",
            )
        )
    if chief.replicaIndex not in (None, 0):
        out.append(
            document.diagnostic(
                path + ("replicaIndex",),
                f"chief replicaIndex {chief.replicaIndex} is not expressed: the job ends with "
                "worker 0, as it does by default",
                severity=Severity.WARNING,
            )
        )


KIND = Caffe2JobKind()
