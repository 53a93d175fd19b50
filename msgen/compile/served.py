"""Render for the cluster that is there: every API a job's objects need must be served.

Argo CD tells the plugin what the destination cluster serves (`KUBE_API_VERSIONS`: each
`group/version`, and each `group/version/Kind` from Argo CD 2.x on); `msgen apply` and `diff`
ask the API server (discovery: each `group/version`). A JobSet, a Volcano Job or
a PodGroup sent to a cluster without that API leaves the application OutOfSync with an error
about a missing resource type; and a Job labelled for a Kueue queue on a cluster without Kueue
runs at once, unqueued. Both are render errors here, naming what to install.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model.diagnostics import Diagnostic
from ..model.source import Document

#: API group → what provides it.
PROVIDERS = {
    "jobset.x-k8s.io": "JobSet (https://jobset.sigs.k8s.io/docs/installation/)",
    "batch.volcano.sh": "Volcano (https://volcano.sh/en/docs/installation/)",
    "scheduling.volcano.sh": "Volcano (https://volcano.sh/en/docs/installation/)",
    "scheduling.x-k8s.io": "the scheduler-plugins coscheduling plugin and its PodGroup CRD "
    "(https://scheduler-plugins.sigs.k8s.io)",
    "scheduling.k8s.io": "Kubernetes' own Workload API (1.37 or newer: the GenericWorkload feature gate "
    "on kube-apiserver, kube-scheduler and kube-controller-manager, and "
    "--runtime-config=scheduling.k8s.io/v1beta1=true)",
    "kueue.x-k8s.io": "Kueue (https://kueue.sigs.k8s.io/docs/installation/)",
    "trainer.kubeflow.org": "Kubeflow Trainer (https://www.kubeflow.org/docs/components/trainer/operator-guides/installation/)",
}
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def is_served(api_version: str, kind: str, served: frozenset[str]) -> bool:
    """Whether `kind` of `api_version` is served; a list without kinds (older Argo CD) is
    read as serving every kind of its group/versions."""
    if f"{api_version}/{kind}" in served:
        return True
    listed_kinds = any(entry.startswith(api_version + "/") for entry in served)
    return api_version in served and not listed_kinds


def check(document: Document, objects: Iterable[dict[str, Any]], served: frozenset[str]) -> list[Diagnostic]:
    """An error at the job's `kind` per API its objects need that the cluster lacks."""
    missing: dict[str, str] = {}
    for obj in objects:
        api, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
        if not is_served(api, kind, served):
            missing.setdefault(f"{kind} ({api})", api.rpartition("/")[0])
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if KUEUE_QUEUE_LABEL in labels and not any(e.startswith("kueue.x-k8s.io/") for e in served):
            missing.setdefault(f"a Kueue queue ({KUEUE_QUEUE_LABEL}={labels[KUEUE_QUEUE_LABEL]})", "kueue.x-k8s.io")
    out = []
    for what, group in missing.items():
        provider = PROVIDERS.get(group, f"the API group {group or 'core'}")
        out.append(
            document.diagnostic(
                ("kind",),
                f"this job renders {what}, which the cluster does not serve (by the API "
                f"versions it lists); accepted: install {provider} in the cluster, or choose a "
                "target and options whose objects it serves",
            )
        )
    return out
