"""`indexed-job` (default): per role an Indexed `batch/v1` Job.

Each role is one Job `<job>-<rt>` with `completionMode: Indexed`, so its pods get stable
indexes (`batch.kubernetes.io/job-completion-index`) and stable host names `<job>-<rt>-<i>`;
the job's headless Service `<job>` and the pods' `subdomain` give them DNS names. Jobs bring
retries (`backoffLimit`), deadlines and clean-up after finishing (`ttlSecondsAfterFinished`).

A plan whose per-pod values need static indexes (`Plan.static_indexes`) gets one (not
Indexed) Job of one pod per replica instead, `<job>-<rt>-<i>`, with that pod's host name:
the names the `pod` target gives, with a Job's retries and clean-up.
"""

from __future__ import annotations

from typing import Any

from .. import versions
from ..diagnostics import Diagnostic
from ..patch import EnvValue, field_ref
from ..plan import Options, Plan, PodSlot, Role
from . import labels
from .addressing import Addressing, Naming
from .common import finish_pod, unexpressed_policies, warn

COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_VARIABLE = "JOB_COMPLETION_INDEX"
#: The Job controller labels every pod with its Job's UID: one value per run of a Job.
CONTROLLER_UID_LABEL = "controller-uid"


class IndexedJobTarget:
    name = "indexed-job"
    summary = "per role an Indexed batch/v1 Job, plus the Services the addressing needs"

    def naming(self, plan: Plan) -> Naming:
        if plan.static_indexes:
            return Naming(
                hostname=lambda role, index: f"{self.job_name(plan, role)}-{index}",
                dynamic_index=None,
                index_selector=lambda role, index: {labels.REPLICA_INDEX: str(index)},
                run_identity=_run_identity(plan),
            )
        return Naming(
            hostname=lambda role, index: f"{self.job_name(plan, role)}-{index}",
            dynamic_index=field_ref(f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"),
            # The Job controller only appends JOB_COMPLETION_INDEX when the container does
            # not define it; defining it first lets later values use $(JOB_COMPLETION_INDEX).
            index_variable=COMPLETION_INDEX_VARIABLE,
            index_selector=lambda role, index: {COMPLETION_INDEX_ANNOTATION: str(index)},
            run_identity=_run_identity(plan),
        )

    @staticmethod
    def job_name(plan: Plan, role: Role) -> str:
        return f"{plan.name}-{role.key}"

    def slots(self, plan: Plan) -> list[PodSlot]:
        if plan.static_indexes:
            return [PodSlot(role, i) for role in plan.roles for i in range(role.replicas)]
        # A role of one replica has the static index 0, so its values need no downward API.
        return [
            PodSlot(role, 0 if role.replicas == 1 else None)
            for role in plan.roles
            if role.replicas > 0
        ]

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addressing,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
        native = {"backoffLimit", "ttlSecondsAfterFinished", "activeDeadlineSeconds"}
        exit_codes = versions.enabled("JobPodFailurePolicy", options.kube_version)
        if exit_codes:
            native.add("restartPolicy: ExitCode")
        diagnostics = unexpressed_policies(
            plan,
            self.name,
            native,
            f"it needs a Job podFailurePolicy, Kubernetes {versions.since('JobPodFailurePolicy')} "
            "or newer; pods run with restartPolicy Never and every failure counts against "
            "backoffLimit, whatever its exit code",
        )
        objects = addressing.services()
        run = plan.run_policy
        for slot, merged in pods:
            role = slot.role
            restart = _job_restart_policy(role.restart_policy)
            if role.restart_policy == "Always":
                diagnostics.append(
                    warn(
                        plan,
                        role.path + ("restartPolicy",),
                        "restartPolicy Always is not accepted by Jobs: pods restart OnFailure "
                        "instead; use --target pod to keep Always",
                    )
                )
            name = self.job_name(plan, role)
            hostname = None
            if plan.static_indexes:
                name = hostname = f"{name}-{slot.index}"
            template, found = finish_pod(
                plan, slot, merged, addressing, restart_policy=restart, hostname=hostname
            )
            diagnostics.extend(found)
            spec: dict[str, Any] = {
                "completionMode": "Indexed",
                "completions": role.replicas,
                "parallelism": role.replicas,
            }
            if plan.static_indexes:
                # Not Indexed: the Job controller would replace the pod's host name with
                # `<Job>-<completion index>`.
                spec = {"completions": 1, "parallelism": 1}
            # ms-operator fails the job on the first failed pod unless a backoffLimit says
            # otherwise; a Job's own default (6 retries) would quietly differ.
            if run.backoff_limit is not None:
                spec["backoffLimit"] = run.backoff_limit
            elif role.restart_policy == "Never":
                spec["backoffLimit"] = 0
            if role.restart_policy == "ExitCode" and exit_codes:
                spec["podFailurePolicy"] = exit_code_policy(plan.main_container)
            success, found = _success_policy(plan, role, options)
            diagnostics.extend(found)
            if success is not None:
                spec["successPolicy"] = success
            if run.active_deadline_seconds is not None:
                spec["activeDeadlineSeconds"] = run.active_deadline_seconds
            if run.ttl_seconds_after_finished is not None:
                spec["ttlSecondsAfterFinished"] = run.ttl_seconds_after_finished
            spec["template"] = template
            objects.append(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": name},
                    "spec": spec,
                }
            )
        return objects, diagnostics


def exit_code_policy(container: str) -> dict[str, Any]:
    """ms-operator's ExitCode rule: 1-127 are the program's own failures and fail the job;
    128 and above (signals, OOM kills) are retried; disruptions (preemption, eviction,
    node drain) are not counted against the backoff limit."""
    return {
        "rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
            {
                "action": "FailJob",
                "onExitCodes": {
                    "containerName": container,
                    "operator": "In",
                    "values": list(range(1, 128)),
                },
            },
        ]
    }


def _success_policy(
    plan: Plan, role: Role, options: Options
) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """ms-operator's default: the job succeeds when worker 0 does (`AllWorkers`: every worker)."""
    if (
        role.replica_type != "Worker"
        or role.replicas < 2
        or plan.success_policy == "AllWorkers"
        or plan.static_indexes
    ):
        return None, []
    if versions.enabled("JobSuccessPolicy", options.kube_version):
        return {"rules": [{"succeededIndexes": "0"}]}, []
    path = ("spec", "successPolicy") if "successPolicy" in plan.document.data["spec"] else role.path
    return None, [
        warn(
            plan,
            path,
            "success when worker 0 succeeds (ms-operator's default successPolicy) needs a Job "
            f"successPolicy, Kubernetes {versions.since('JobSuccessPolicy')} or newer: the "
            "Worker Job succeeds when every worker does",
        )
    ]


def _run_identity(plan: Plan) -> EnvValue | None:
    """A job of one role is one Job: its UID names the run. Several Jobs share none."""
    if len([role for role in plan.roles if role.replicas > 0]) != 1 or plan.static_indexes:
        return None
    return field_ref(f"metadata.labels['{CONTROLLER_UID_LABEL}']")


def _job_restart_policy(policy: str) -> str:
    return {"Always": "OnFailure", "OnFailure": "OnFailure"}.get(policy, "Never")


TARGET = IndexedJobTarget()
