"""Labels every generated object carries, so `kubectl get -l` habits and dashboards keep working.

Pods also carry the labels their operator gave them through kubeflow/common's `GenLabels` and
`SetReplicaType` / `SetReplicaIndex` (ms-operator, ascend-operator and training-operator's
MXJob all use them): the unprefixed `job-name`, `replica-type`, `replica-index` and
`group-name` (the job's API group), `training.kubeflow.org/operator-name` with the operator's
own name, and `training.kubeflow.org/job-role: master` on the pods an operator calls master
(`IsMasterRole`: ascend-operator's Scheduler, training-operator's MXNet Servers). Users
select on them: MindCluster's samples put a required pod anti-affinity on `job-name` +
`replica-type`.

`replica-index` needs the pod's index as a label value, so it is written only where the index
is static (one pod template per replica: the `pod` target, roles of one replica). Elsewhere
the target's own label carries it: `batch.kubernetes.io/job-completion-index` (Indexed Jobs,
JobSets), `apps.kubernetes.io/pod-index` (StatefulSets), `volcano.sh/task-index` (Volcano).
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.names import MAX_LABEL
from ..model.plan import Plan, PodSlot, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..model.type_forms import NamedTuple

MANAGED_BY = "app.kubernetes.io/managed-by"
APP_NAME = "app.kubernetes.io/name"
JOB_NAME = "training.kubeflow.org/job-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"
OPERATOR_NAME = "training.kubeflow.org/operator-name"
JOB_ROLE = "training.kubeflow.org/job-role"
#: kubeflow/common's deprecated, unprefixed labels, which the operators still set
LEGACY_JOB_NAME = "job-name"
LEGACY_REPLICA_TYPE = "replica-type"
LEGACY_REPLICA_INDEX = "replica-index"
LEGACY_GROUP_NAME = "group-name"


class OperatorLabels(NamedTuple):
    """What one kubeflow/common-based operator put on its pods."""

    operator_name: str
    #: replica types whose pods carry `job-role: master`
    master_roles: tuple[str, ...] = ()


#: (apiVersion, kind) → the operator's labels. Names are each operator's own constants:
#: ms-operator `controllerName`, ascend-operator `api.ControllerName`, training-operator's
#: MXJob `controllerName`. Kinds whose operators predate kubeflow/common are not listed.
OPERATORS: dict[tuple[str, str], OperatorLabels] = {
    ("mindspore.gitee.com/v1", "MSJob"): OperatorLabels("msjob-controller"),
    ("mindxdl.gitee.com/v1", "AscendJob"): OperatorLabels(
        "ascendjob-controller", master_roles=("Scheduler",)
    ),
    ("kubeflow.org/v1", "MXJob"): OperatorLabels("mxjob-controller", master_roles=("Server",)),
}


def object_labels(plan: Plan) -> dict[str, str]:
    return {**plan.labels, **own_labels(plan)}


def own_labels(plan: Plan) -> dict[str, str]:
    """msgen's labels without the job's own: what the objects another controller builds from
    msgen's carry, so that `msgen controller` watches them (`managed-by`) and groups them by
    job (`job-name`)."""
    return {MANAGED_BY: "msgen", APP_NAME: plan.name, JOB_NAME: plan.name}


def role_selector(plan: Plan, role: Role) -> dict[str, str]:
    return {JOB_NAME: plan.name, REPLICA_TYPE: role.key}


def pod_metadata(plan: Plan, slot: PodSlot) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The template's own metadata with msgen's pod labels merged in; a clash is an error."""
    metadata: dict[str, Any] = dict(slot.role.template.get("metadata") or {})
    user: dict[str, str] = dict(metadata.get("labels") or {})
    ours = {MANAGED_BY: "msgen", APP_NAME: plan.name, **role_selector(plan, slot.role)}
    if slot.index is not None:
        ours[REPLICA_INDEX] = str(slot.index)
    ours.update(operator_pod_labels(plan, slot))
    diagnostics = []
    for key, value in ours.items():
        if key in user and user[key] != value:
            diagnostics.append(
                plan.document.diagnostic(
                    slot.role.path + ("template", "metadata", "labels", key),
                    f"label {key}={user[key]!r} clashes with the value msgen sets ({value!r}); "
                    "accepted: leave this label out",
                )
            )
    metadata["labels"] = {**user, **ours}
    return metadata, diagnostics


#: caffe2-operator's own pod labels (it predates kubeflow/common): `genLabels` and the
#: replica labels in pkg/controller, with the API group it registered.
CAFFE2_KIND = ("kubeflow.org/v1alpha1", "Caffe2Job")
CAFFE2_GROUP_NAME = "group_name"
CAFFE2_JOB_KEY = "caffe2_job_key"
CAFFE2_REPLICA_TYPE = "caffe2_replica_type"
CAFFE2_REPLICA_INDEX = "caffe2_replica_index"


def caffe2_pod_labels(plan: Plan, slot: PodSlot) -> dict[str, str]:
    """caffe2-operator's labels, as far as they are known at render time.

    `caffe2_job_key` is `<namespace>-<job>`, so it is written only when the job names its
    namespace (or one is given on the command line) and the two fit a label value (63
    characters; the API server refuses a longer one, as it refused the operator's pods); `runtime_id` was the operator's
    creation timestamp and has no render-time value, so it is left out. The operator's only
    replica type was the lower-case `worker`.
    """
    out = {CAFFE2_GROUP_NAME: "kubeflow.org", CAFFE2_REPLICA_TYPE: "worker"}
    key = f"{plan.namespace}-{plan.name}"
    if plan.namespace and len(key) <= MAX_LABEL:
        out[CAFFE2_JOB_KEY] = key
    if slot.index is not None:
        out[CAFFE2_REPLICA_INDEX] = str(slot.index)
    return out


def operator_pod_labels(plan: Plan, slot: PodSlot) -> dict[str, str]:
    """The labels the job's operator put on this pod (none for kinds it did not label)."""
    if (plan.api_version, plan.kind) == CAFFE2_KIND:
        return caffe2_pod_labels(plan, slot)
    operator = OPERATORS.get((plan.api_version, plan.kind))
    if operator is None:
        return {}
    out = {
        OPERATOR_NAME: operator.operator_name,
        LEGACY_GROUP_NAME: plan.api_version.split("/")[0],
        LEGACY_JOB_NAME: plan.name,
        LEGACY_REPLICA_TYPE: slot.role.key,
    }
    if slot.index is not None:
        out[LEGACY_REPLICA_INDEX] = str(slot.index)
    if slot.role.replica_type in operator.master_roles:
        out[JOB_ROLE] = "master"
    return out
