"""The declaration of a `kubeflow.org/v1 MXJob` (its fields, types and bounds), which the
kind (`mxjob`) validates a job against and its run policy (`mxjob_run_policy`) reads.

The spec has both forms of the run policy: training-operator's `runPolicy`, and kubeflow
mxnet-operator's fields inline at `spec`.
"""

from __future__ import annotations

from ...checks.input_model import Field
from ..msjob import MSRunPolicy, MSSchedulingPolicy
from ..podtemplate import INT32_MAX, INT64_MAX, ObjectMeta, PodTemplateSpec, _Model

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal


class MXSchedulingPolicy(MSSchedulingPolicy):
    scheduleTimeoutSeconds: int | None = Field(default=None, ge=0, le=INT32_MAX)


class MXRunPolicy(MSRunPolicy):
    """kubeflow's common RunPolicy, as training-operator's MXJob CRD has it."""

    schedulingPolicy: MXSchedulingPolicy | None = None
    suspend: bool | None = None


class MXReplicaSpec(_Model):
    replicas: int | None = Field(default=None, ge=0)
    restartPolicy: Literal["Always", "OnFailure", "Never", "ExitCode"] | None = None
    template: PodTemplateSpec
    #: MX_CONFIG's label of the role, as kubeflow/mxnet-operator 1.0 read it (its tuning
    #: example writes it); later operators read the annotation instead (`mxjob_labels`).
    label: str | None = None


class MXInlineSchedulingPolicy(_Model):
    """kubeflow/common v0.3.1's SchedulingPolicy, as kubeflow mxnet-operator's MXJob has it."""

    minAvailable: int | None = Field(default=None, ge=0, le=INT32_MAX)


class MXJobSpec(_Model):
    """Both forms of the spec (see mxjob_run_policy): `runPolicy`, or its fields inline."""

    jobMode: Literal["MXTrain", "MXTune"]
    mxReplicaSpecs: dict[str, MXReplicaSpec]
    runPolicy: MXRunPolicy | None = None
    cleanPodPolicy: Literal["All", "Running", "None"] | None = None
    ttlSecondsAfterFinished: int | None = Field(default=None, ge=0, le=INT32_MAX)
    activeDeadlineSeconds: int | None = Field(default=None, ge=1, le=INT64_MAX)
    backoffLimit: int | None = Field(default=None, ge=0, le=INT32_MAX)
    schedulingPolicy: MXInlineSchedulingPolicy | None = None
    #: In mxnet-operator's BytePS example: its v1beta1 MXJob's field, which no v1 MXJob has
    #: (a warning says so).
    successPolicy: str | None = None


class MXJob(_Model):
    """An MXNet job: ps-lite Scheduler, Servers and Workers, or a tuning job."""

    apiVersion: Literal["kubeflow.org/v1"]
    kind: Literal["MXJob"]
    metadata: ObjectMeta
    spec: MXJobSpec
    status: dict[str, Any] | None = None
