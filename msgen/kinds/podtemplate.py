"""Input models for the Kubernetes parts every job kind embeds (pod templates).

Only the fields msgen reads are typed; every other field Kubernetes defines is accepted as
written and passed through. The field tables equal Kubernetes' newest schema (a test compares
them with the schemas `kubernetes-validate` bundles), so a misspelt field is reported here,
with its position, instead of being pruned or rejected later by the API server.
"""

from __future__ import annotations

from ..checks.input_model import BaseModel, ConfigDict, Field, create_model, field_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal
else:
    from ..model.type_forms import Any  # a passed-through field's annotation

Quantity = int | float | str
#: The largest values of Kubernetes' int32 and int64 fields (counts, seconds).
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

OBJECT_META_FIELDS = (
    "annotations", "creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp",
    "finalizers", "generateName", "generation", "labels", "managedFields", "name", "namespace",
    "ownerReferences", "resourceVersion", "selfLink", "uid",
)  # fmt: skip
POD_SPEC_FIELDS = (
    "activeDeadlineSeconds", "affinity", "automountServiceAccountToken", "containers",
    "dnsConfig", "dnsPolicy", "enableServiceLinks", "ephemeralContainers", "evictionResponders",
    "hostAliases", "hostIPC", "hostNetwork", "hostPID", "hostUsers", "hostname",
    "hostnameOverride", "imagePullSecrets", "initContainers", "nodeName", "nodeSelector", "os",
    "overhead", "preemptionPolicy", "priority", "priorityClassName", "readinessGates",
    "resourceClaims", "resources", "restartPolicy", "runtimeClassName", "schedulerName",
    "schedulingGates", "schedulingGroup", "securityContext", "serviceAccount",
    "serviceAccountName", "setHostnameAsFQDN", "shareProcessNamespace", "subdomain",
    "terminationGracePeriodSeconds", "tolerations", "topologySpreadConstraints", "volumes",
)  # fmt: skip
CONTAINER_FIELDS = (
    "args", "command", "env", "envFrom", "image", "imagePullPolicy", "lifecycle",
    "livenessProbe", "name", "ports", "readinessProbe", "resizePolicy", "resources",
    "restartPolicy", "restartPolicyRules", "securityContext", "startupProbe", "stdin",
    "stdinOnce", "terminationMessagePath", "terminationMessagePolicy", "tty", "volumeDevices",
    "volumeMounts", "workingDir",
)  # fmt: skip

_STRICT = ConfigDict(extra="forbid", strict=True)


class _Model(BaseModel):
    model_config = _STRICT


class EnvVar(_Model):
    name: str
    value: str | None = None
    valueFrom: dict[str, Any] | None = None


class ContainerPort(_Model):
    containerPort: int = Field(ge=1, le=65535)
    name: str | None = None
    protocol: Literal["TCP", "UDP", "SCTP"] | None = None
    hostIP: str | None = None
    hostPort: int | None = Field(default=None, ge=0, le=65535)


class ResourceRequirements(_Model):
    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None
    claims: list[Any] | None = None


def _passthrough(names: tuple[str, ...], typed: type[BaseModel]) -> dict[str, Any]:
    return {name: (Any, None) for name in names if name not in field_names(typed)}


class VolumeMount(_Model):
    name: str
    mountPath: str
    readOnly: bool | None = None
    subPath: str | None = None
    subPathExpr: str | None = None
    mountPropagation: str | None = None
    recursiveReadOnly: str | None = None
    bindMountOptions: Any = None


class Volume(BaseModel):
    """A pod volume: msgen reads its name; the volume source passes through."""

    model_config = ConfigDict(extra="allow", strict=True)
    name: str


class ContainerFields(_Model):
    """The container fields msgen reads; the rest of Kubernetes' fields pass through."""

    name: str
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    ports: list[ContainerPort] | None = None
    resources: ResourceRequirements | None = None
    volumeMounts: list[VolumeMount] | None = None


class ObjectMetaFields(_Model):
    name: str | None = None
    generateName: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


if TYPE_CHECKING:
    Container = ContainerFields
    ObjectMeta = ObjectMetaFields
else:
    Container = create_model(
        "Container", __base__=ContainerFields, **_passthrough(CONTAINER_FIELDS, ContainerFields)
    )
    ObjectMeta = create_model(
        "ObjectMeta", __base__=ObjectMetaFields, **_passthrough(OBJECT_META_FIELDS, ObjectMetaFields)
    )


class PodSpecFields(_Model):
    containers: list[Container] = Field(min_length=1)
    initContainers: list[Container] | None = None
    hostNetwork: bool | None = None
    enableServiceLinks: bool | None = None
    hostname: str | None = None
    subdomain: str | None = None
    restartPolicy: Literal["Always", "OnFailure", "Never"] | None = None
    volumes: list[Volume] | None = None
    nodeSelector: dict[str, str] | None = None


if TYPE_CHECKING:
    PodSpec = PodSpecFields
else:
    PodSpec = create_model(
        "PodSpec", __base__=PodSpecFields, **_passthrough(POD_SPEC_FIELDS, PodSpecFields)
    )


class PodTemplateSpec(_Model):
    metadata: ObjectMeta | None = None
    spec: PodSpec
