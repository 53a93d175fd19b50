"""`pod`: ms-operator parity — bare Pods `<job>-<rt>-<i>`, each with its static index.

What ms-operator created, minus the operator: no retries beyond the pod's own
`restartPolicy`, no clean-up. Useful where only Pods are allowed, and to compare with a
cluster that ran the operator. Each pod's host name is its name; the job's headless Service
gives it a DNS name.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.plan import Options, Plan, PodSlot
from . import RENDERED, Facts, Link, labels, scheduling
from .addressing import Naming, name_problems
from .common import finish_pod, shared_objects
from .cells import N, Cell, apply, na

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import Addresses, Target


#: More bare Pods than this in one job is a typo, not a cluster; the output would not end.
MAX_PODS = 10000


_NO_STATUS = apply("bare Pods have no job status; each pod ends on its own")

SUPPORT = {
    "restartPolicy: Always / OnFailure": N,
    "restartPolicy: Never": N,
    "restartPolicy: ExitCode": na(
        "pods run with restartPolicy Never, so a pod killed by a signal (exit code 128 or "
        "more) is not retried"
    ),
    "successPolicy (default: worker 0)": _NO_STATUS,
    "success by the Scheduler or Tuner (MXJob)": _NO_STATUS,
    "success by the Scheduler or Tuner, cleanPodPolicy None (MXJob)": _NO_STATUS,
    "successPolicy: AllWorkers": _NO_STATUS,
    "runPolicy.backoffLimit": na("a failed pod is not replaced"),
    "runPolicy.backoffLimit, several roles": na("a failed pod is not replaced"),
    "runPolicy.activeDeadlineSeconds": N,
    "runPolicy.ttlSecondsAfterFinished": Cell(
        "apply", instead="finished pods stay until deleted", controller_only=True
    ),
    "runPolicy.cleanPodPolicy: Running": apply("running pods stay when the job ends"),
    "runPolicy.cleanPodPolicy: All": apply("pods stay until deleted"),
    "runPolicy.cleanPodPolicy: None": N,
    "runPolicy.schedulingPolicy (gang)": N,
    "schedulingPolicy.priorityClass": N,
    "enableDynamicWorker": Cell("native", instead="bare Pods have no job status that could fail"),
    "--kueue-queue": N,
}


class PodTarget:
    name = "pod"
    summary = "bare Pods <job>-<rt>-<i> with static indexes, as ms-operator created them"
    # One object per pod: its own limit is MAX_PODS in all, checked in render.
    facts = Facts(
        static_indexes=True, bare_pods=True, deadline_on_pods=True, workloads="bare Pods",
        chain=(Link("v1", "Pod", RENDERED),),
    )
    support = SUPPORT

    def naming(self, plan: Plan, options: Options) -> Naming:
        return Naming(
            hostname=lambda role, index: f"{plan.name}-{role.key}-{index}",
            dynamic_index=None,
            index_selector=lambda role, index: {labels.REPLICA_INDEX: str(index)},
        )

    def slots(self, plan: Plan) -> list[PodSlot]:
        if sum(role.replicas for role in plan.roles) > MAX_PODS:
            return []  # refused in render: one Pod object per replica would not end
        return [PodSlot(role, index) for role in plan.roles for index in range(role.replicas)]

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addresses,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
        total = sum(role.replicas for role in plan.roles)
        if total > MAX_PODS:
            biggest = max(plan.roles, key=lambda role: role.replicas)
            return [], [
                plan.document.diagnostic(
                    biggest.path + ("replicas",),
                    f"target pod writes one Pod per replica, and this job has {total}; accepted: "
                    f"at most {MAX_PODS} pods, or --target indexed-job (one Job per role)",
                )
            ]
        objects, diagnostics = shared_objects(plan, addressing, options, self)
        deadline = plan.run_policy.active_deadline_seconds
        for slot, merged in pods:
            assert slot.index is not None
            name = f"{plan.name}-{slot.role.key}-{slot.index}"
            restart = "Never" if slot.role.restart_policy == "ExitCode" else slot.role.restart_policy
            template, found = finish_pod(
                plan,
                slot,
                merged,
                addressing,
                restart_policy=restart,
                hostname=name,
                options=options,
                target=self,
            )
            diagnostics.extend(found)
            spec = template["spec"]
            if deadline is not None and "activeDeadlineSeconds" not in spec:
                spec["activeDeadlineSeconds"] = deadline
            metadata = {**template["metadata"], "name": name}
            if options.kueue_queue:
                # Kueue admits bare pods as one group: every pod names the group and its size.
                metadata["labels"] = {
                    **metadata["labels"],
                    **scheduling.kueue_labels(options),
                    scheduling.KUEUE_POD_GROUP_LABEL: plan.name,
                }
                metadata["annotations"] = {
                    **(metadata.get("annotations") or {}),
                    scheduling.KUEUE_POD_GROUP_COUNT: str(len(pods)),
                }
            objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
        return objects, diagnostics

    def check_names(self, plan: Plan, objects: list[dict[str, Any]]) -> list[Diagnostic]:
        """Each Pod's own host name."""
        hosts = [
            o["spec"]["hostname"] for o in objects if o["kind"] == "Pod" and o["spec"].get("hostname")
        ]
        return name_problems(plan, objects, hosts)


TARGET: Target = PodTarget()
