"""`statefulset`: per role an `apps/v1` StatefulSet behind the job's headless Service.

For long-running roles, and for platforms that only allow StatefulSets. Each role is a
StatefulSet `<job>-<rt>` with `serviceName: <job>` and parallel pod management, so its pods
`<job>-<rt>-<i>` start together and keep their ordinal host names across restarts.

Restart semantics differ from a Job's: StatefulSet pods always restart, so a job never
completes or fails; `restartPolicy` Never or ExitCode, success policies and retry limits
cannot be expressed (each is reported). A pod learns its ordinal from the
`apps.kubernetes.io/pod-index` label (Kubernetes 1.28 and newer); before that, Workers get
their pod name as `MS_NODE_ID`, as ms-operator gave it.
"""

from __future__ import annotations

from ..model import versions
from ..model.diagnostics import Diagnostic
from ..model.patch import field_ref
from ..model.plan import Options, Plan, PodSlot, Role
from . import ORDINAL, RENDERED, Facts, Link, labels, scheduling
from .addressing import Naming, name_problems
from .common import finish_pod, role_slots, shared_objects
from .limits import INDEXED_JOB_LIMIT, MOST_OF_A_CLUSTER
from .scheduling import warn
from .cells import N, na

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import Addresses, Target

POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
#: Defined first where a value needs the ordinal inside a longer text, e.g. `$(MSGEN_POD_INDEX)`.
POD_INDEX_VARIABLE = "MSGEN_POD_INDEX"


#: The longest StatefulSet name whose pods can be created: the controller labels each pod
#: `controller-revision-hash: <set>-<hash>`, a label value (at most 63), the hash up to 10.
MAX_SET_NAME = 52


_ALWAYS_RESTART = na("StatefulSet pods always restart, whatever their exit code")
_NEVER_COMPLETES = na("a StatefulSet never completes")
_NEVER_FINISHES = na("a StatefulSet never finishes")

SUPPORT = {
    "restartPolicy: Always / OnFailure": N,
    "restartPolicy: Never": _ALWAYS_RESTART,
    "restartPolicy: ExitCode": _ALWAYS_RESTART,
    "successPolicy (default: worker 0)": _NEVER_COMPLETES,
    "success by the Scheduler or Tuner (MXJob)": _NEVER_COMPLETES,
    "success by the Scheduler or Tuner, cleanPodPolicy None (MXJob)": _NEVER_COMPLETES,
    "successPolicy: AllWorkers": _NEVER_COMPLETES,
    "runPolicy.backoffLimit": _ALWAYS_RESTART,
    "runPolicy.backoffLimit, several roles": _ALWAYS_RESTART,
    "runPolicy.activeDeadlineSeconds": na(
        "a StatefulSet has no deadline; its pods would be restarted"
    ),
    "runPolicy.ttlSecondsAfterFinished": _NEVER_FINISHES,
    "runPolicy.cleanPodPolicy: Running": _NEVER_FINISHES,
    "runPolicy.cleanPodPolicy: All": _NEVER_FINISHES,
    "runPolicy.cleanPodPolicy: None": N,
    "runPolicy.schedulingPolicy (gang)": N,
    "schedulingPolicy.priorityClass": N,
    "enableDynamicWorker": N,
    "--kueue-queue": N,
}


class StatefulSetTarget:
    name = "statefulset"
    summary = (
        "per role a StatefulSet with parallel pod management; pods always restart, so the "
        "job never completes"
    )
    facts = Facts(
        max_replicas=(INDEXED_JOB_LIMIT, MOST_OF_A_CLUSTER),
        pods_run_until_deleted=True,
        workloads="StatefulSets",
        workload_per_role=True,
        rank_table_kind="StatefulSet",
        chain=(Link("apps/v1", "StatefulSet", RENDERED), Link("v1", "Pod", ORDINAL)),
    )
    support = SUPPORT

    def naming(self, plan: Plan, options: Options) -> Naming:
        index = None
        if versions.enabled("PodIndexLabel", options.kube_version):
            index = field_ref(f"metadata.labels['{POD_INDEX_LABEL}']")
        return Naming(
            hostname=lambda role, i: f"{self.set_name(plan, role)}-{i}",
            dynamic_index=index,
            index_variable=POD_INDEX_VARIABLE if index is not None else None,
            index_selector=lambda role, i: {POD_NAME_LABEL: f"{self.set_name(plan, role)}-{i}"},
            dynamic_pod_name=field_ref("metadata.name"),
            controller_sets_subdomain=True,
        )

    @staticmethod
    def set_name(plan: Plan, role: Role) -> str:
        return f"{plan.name}-{role.key}"

    def slots(self, plan: Plan) -> list[PodSlot]:
        return role_slots(plan)

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addresses,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
        objects, diagnostics = shared_objects(plan, addressing, options, self)
        if addressing.distributed and addressing.naming.dynamic_index is None:
            workers = plan.workers()
            if workers is not None and workers.replicas > 1:
                diagnostics.append(
                    warn(
                        plan,
                        workers.path,
                        "StatefulSet pods learn their ordinal from the apps.kubernetes.io/"
                        f"pod-index label from Kubernetes {versions.since('PodIndexLabel')}; "
                        "before that Workers get their pod name as MS_NODE_ID, as with "
                        "ms-operator, and ranks follow the order workers register in",
                    )
                )
        for slot, merged in pods:
            role = slot.role
            template, found = finish_pod(
                plan,
                slot,
                merged,
                addressing,
                restart_policy="Always",
                hostname=None,
                options=options,
                target=self,
            )
            diagnostics.extend(found)
            metadata: dict[str, Any] = {"name": self.set_name(plan, role)}
            if options.kueue_queue:
                metadata["labels"] = scheduling.kueue_labels(options)
            objects.append(
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "metadata": metadata,
                    "spec": {
                        "podManagementPolicy": "Parallel",
                        "replicas": role.replicas,
                        "selector": {"matchLabels": labels.role_selector(plan, role)},
                        "serviceName": addressing.subdomain,
                        "template": template,
                    },
                }
            )
        return objects, diagnostics

    def check_names(self, plan: Plan, objects: list[dict[str, Any]]) -> list[Diagnostic]:
        """A StatefulSet's pods are `<set>-<ordinal>`, and carry the label
        `controller-revision-hash: <set>-<hash>` (a hash of up to 10 characters): a set name
        longer than 52 characters is accepted, but none of its pods can ever be created."""
        sets = [o["metadata"]["name"] for o in objects if o["kind"] == "StatefulSet"]
        hosts = [
            f"{o['metadata']['name']}-{o['spec']['replicas'] - 1}"
            for o in objects
            if o["kind"] == "StatefulSet"
        ]
        too_long = sorted((name for name in sets if len(name) > MAX_SET_NAME), key=len)[::-1]
        if too_long:
            return [
                plan.document.diagnostic(
                    ("metadata", "name"),
                    f"job name {plan.name!r} makes the StatefulSet {too_long[0]!r} "
                    f"({len(too_long[0])} characters): its pods' controller-revision-hash label "
                    f"would exceed 63 characters, so none could be created; accepted: a job name "
                    f"of at most {MAX_SET_NAME - (len(too_long[0]) - len(plan.name))} characters "
                    "for target statefulset",
                )
            ]
        return name_problems(plan, objects, hosts)


TARGET: Target = StatefulSetTarget()
