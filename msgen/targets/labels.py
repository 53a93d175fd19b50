"""Labels every generated object carries, so `kubectl get -l` habits and dashboards keep working."""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..plan import Plan, PodSlot, Role

MANAGED_BY = "app.kubernetes.io/managed-by"
APP_NAME = "app.kubernetes.io/name"
JOB_NAME = "training.kubeflow.org/job-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"


def object_labels(plan: Plan) -> dict[str, str]:
    return {
        **plan.labels,
        MANAGED_BY: "msgen",
        APP_NAME: plan.name,
        JOB_NAME: plan.name,
    }


def role_selector(plan: Plan, role: Role) -> dict[str, str]:
    return {JOB_NAME: plan.name, REPLICA_TYPE: role.key}


def pod_metadata(plan: Plan, slot: PodSlot) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The template's own metadata with msgen's pod labels merged in; a clash is an error."""
    metadata: dict[str, Any] = dict(slot.role.template.get("metadata") or {})
    user: dict[str, str] = dict(metadata.get("labels") or {})
    ours = {MANAGED_BY: "msgen", APP_NAME: plan.name, **role_selector(plan, slot.role)}
    if slot.index is not None:
        ours[REPLICA_INDEX] = str(slot.index)
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
