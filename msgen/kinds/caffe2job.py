"""`kubeflow.org/v1alpha1 Caffe2Job`, as caffe2-operator accepted it (contracts §6).

One replica set of workers (`spec.replicaSpecs`, no parameter server) meeting through a Redis
server or an NFS directory (`spec.backendSpecs`). Every replica has a container named
`caffe2` with an image. No port is added to it: caffe2-operator added none (its port
defaulting is commented out), and the example jobs run on the host network, where a container
port becomes a host port and lets one shard only onto each node.

The backend's fields become the shards' env whatever `backendType` says, as the operator
passed them on; without `backendSpecs` the operator chose redis for more than one replica,
with no host. The job succeeds when every shard has and fails when any fails
(`status.go` `updateStatus`): `spec.terminationPolicy` is accepted and, as by the operator,
not read.
"""

from __future__ import annotations

from ..checks.input_model import Field

from ..model.diagnostics import Diagnostic, Severity
from ..frameworks import caffe2
from ..model.plan import ALL_WORKERS, Role, RunPolicy
from ..model.source import Document, Path
from .podtemplate import ObjectMeta, PodTemplateSpec, _Model
from ..model.patch import copy_data
from .shared import InputKind, PlanFields, main_container

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal
    from ..model.extension_points import JobKind

API_VERSION = "kubeflow.org/v1alpha1"
KIND_NAME = "Caffe2Job"
MAIN_CONTAINER = "caffe2"
#: A port of this name on container `caffe2`, where the user declares one, is the port
#: `CAFFE2_CONFIG` lists; otherwise it lists the operator's constant 2222.
PORT_NAME = "caffe2job-port"


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


class Caffe2JobKind(InputKind[Caffe2Job]):
    api_version = API_VERSION
    kind = KIND_NAME
    input_model = Caffe2Job

    def roles(self, job: Caffe2Job, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
        """One role of Workers, the shards."""
        path: Path = ("spec", "replicaSpecs")
        template = copy_data(document.data["spec"]["replicaSpecs"]["template"])
        main_container(
            template, document, path, "the Caffe2Job", MAIN_CONTAINER, out, only_one_is_main=False
        )
        spec = job.spec.replicaSpecs
        role = Role(
            replica_type="Worker",
            replicas=spec.replicas or 1,
            restart_policy=spec.template.spec.restartPolicy or "Never",
            template=template,
            path=path,
        )
        return (role,)

    def fields(
        self, job: Caffe2Job, roles: tuple[Role, ...], document: Document, out: list[Diagnostic]
    ) -> PlanFields:
        settings = _backend(job, document, out)
        _check_termination_policy(job, document, out)
        return PlanFields(
            framework="caffe2",
            main_container=MAIN_CONTAINER,
            port_name=PORT_NAME,
            run_policy=RunPolicy(clean_pod_policy="None"),
            # caffe2-operator: Succeeded once every shard has; Failed once any has.
            success_policy=ALL_WORKERS,
            framework_settings=settings,
        )


def _backend(job: Caffe2Job, document: Document, out: list[Diagnostic]) -> dict[str, str]:
    """`REDIS_HOST`, `REDIS_PORT`, `NFS_PATH` as caffe2-operator set them (`createNewPod`):
    always all three, straight from `backendSpecs` (empty, and `"0"` for the port, when
    unset), whatever the backend type."""
    backend = job.spec.backendSpecs
    path: Path = ("spec", "backendSpecs")
    settings = {
        caffe2.REDIS_HOST: (backend.redisHost if backend else None) or "",
        caffe2.REDIS_PORT: str((backend.redisPort if backend else None) or 0),
        caffe2.NFS_PATH: (backend.nfsPath if backend else None) or "",
    }
    replicas = job.spec.replicaSpecs.replicas or 1
    if backend is None or backend.backendType == "none":
        if replicas > 1:
            what = (
                "no backendSpecs: caffe2-operator chose backendType redis, with no host"
                if backend is None
                else "backendType none"
            )
            out.append(
                document.diagnostic(
                    path if backend is not None else ("spec",),
                    f"{what}, for {replicas} shards: REDIS_HOST and NFS_PATH are empty and "
                    'REDIS_PORT is "0", so the shards have nowhere to meet unless the command '
                    "names a rendezvous itself; accepted: backendType redis with redisHost, "
                    "or nfs with nfsPath",
                    severity=Severity.WARNING,
                )
            )
        return settings
    if backend.backendType == "redis":
        if not backend.redisHost:
            out.append(
                document.diagnostic(
                    path, "backendType redis needs redisHost; accepted: the Redis server's host"
                )
            )
        elif backend.redisPort is None:
            out.append(
                document.diagnostic(
                    path,
                    'backendType redis without redisPort: REDIS_PORT is "0", as caffe2-operator '
                    "set it, which no Redis server listens on; accepted: redisPort, the "
                    "server's port (Redis's own default is 6379)",
                    severity=Severity.WARNING,
                )
            )
        return settings
    if not backend.nfsPath:
        out.append(
            document.diagnostic(
                path, "backendType nfs needs nfsPath; accepted: a directory every worker mounts"
            )
        )
    return settings


def _check_termination_policy(job: Caffe2Job, document: Document, out: list[Diagnostic]) -> None:
    """caffe2-operator defaulted `terminationPolicy.chief` to worker 0 and never read it: the
    job ends when every shard has. msgen does the same, and says so where one is written."""
    if job.spec.terminationPolicy is None:
        return
    out.append(
        document.diagnostic(
            ("spec", "terminationPolicy"),
            "terminationPolicy is not used, as caffe2-operator did not use it: the job "
            "succeeds when every shard has succeeded and fails when any shard fails",
            severity=Severity.WARNING,
        )
    )


KIND: JobKind = Caffe2JobKind()
