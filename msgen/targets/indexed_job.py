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

from ..model import versions
from ..model.diagnostics import Diagnostic
from ..model.patch import EnvValue, field_ref
from ..model.plan import ALL_WORKERS, SCHEDULER_DECIDES, Options, Plan, PodSlot, Role
from . import INDEXED_POD, RENDERED, Facts, Link, labels, scheduling
from .addressing import Naming, name_problems
from .common import finish_pod, role_slots, shared_objects
from .limits import INDEXED_JOB_LIMIT
from .scheduling import warn
from .cells import N, Cell, apply, partly

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable
    from ..model.extension_points import Addresses, Target

COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
COMPLETION_INDEX_VARIABLE = "JOB_COMPLETION_INDEX"
#: The Job controller labels every pod with its Job's UID: one value per run of a Job.
CONTROLLER_UID_LABEL = "controller-uid"


#: The exit-code rule (podFailurePolicy) of the Jobs this target and `jobset` write.
EXIT_CODES = Cell(
    "native", "JobPodFailurePolicy",
    "pods run with restartPolicy Never and every failure counts against backoffLimit, "
    "whatever its exit code",
)
#: Kubernetes fails an Indexed Job with backoffLimitPerIndex once every index has ended and
#: one failed, before it looks at its successPolicy (the Job controller's order).
DYNAMIC_WORKERS = (
    "a failed Worker ends only its own index and the others keep running, but once every "
    "worker has ended and one failed, {ends}, even if worker 0 succeeded: the job succeeds "
    "only when worker 0 does while the other workers still run"
)
_EACH_JOB_ENDS = apply("each role's Job ends on its own, whatever the deciding role's outcome")

SUPPORT = {
    "restartPolicy: Always / OnFailure": N,
    "restartPolicy: Never": N,
    "restartPolicy: ExitCode": EXIT_CODES,
    "successPolicy (default: worker 0)": Cell(
        "native", "JobSuccessPolicy", "the Worker Job succeeds when every worker does"
    ),
    "success by the Scheduler or Tuner (MXJob)": _EACH_JOB_ENDS,
    "success by the Scheduler or Tuner, cleanPodPolicy None (MXJob)": _EACH_JOB_ENDS,
    "successPolicy: AllWorkers": N,
    "runPolicy.backoffLimit": N,
    "runPolicy.backoffLimit, several roles": apply(
        "each role's Job counts only its own failures against backoffLimit, so the job may "
        "retry backoffLimit times per role, where ms-operator allowed backoffLimit in all"
    ),
    "runPolicy.activeDeadlineSeconds": N,
    "runPolicy.ttlSecondsAfterFinished": N,
    "runPolicy.cleanPodPolicy: Running": apply(
        "the Scheduler and PS Jobs' pods keep running after the Worker Job ends"
    ),
    "runPolicy.cleanPodPolicy: All": apply("finished pods stay until the Jobs are deleted"),
    # ms-operator left every pod running when the job ended, failed or succeeded.
    "runPolicy.cleanPodPolicy: None": partly(
        "a role's Job that fails terminates its own running pods (the Job controller "
        "does), and so does the Worker Job when worker 0 succeeds (Kubernetes 1.31 and "
        "newer); the other roles' Jobs keep theirs"
    ),
    "runPolicy.schedulingPolicy (gang)": N,
    "schedulingPolicy.priorityClass": N,
    "enableDynamicWorker": Cell(
        "native", "JobBackoffLimitPerIndex", "a failed Worker fails the Worker Job",
        partly=DYNAMIC_WORKERS.format(ends="the Worker Job fails (FailedIndexes)"),
    ),
    "--kueue-queue": N,
}


class IndexedJobTarget:
    name = "indexed-job"
    summary = "per role an Indexed batch/v1 Job, plus the Services the addressing needs"
    facts = Facts(
        max_replicas=(
            INDEXED_JOB_LIMIT, "a role is an Indexed Job, whose parallelism the API server limits"
        ),
        static_indexes=True,
        job_templates=True,
        suspends_jobs_at_end=True,
        retries_counted_per_role=True,
        workloads="Jobs",
        workload_per_role=True,
        chain=(Link("batch/v1", "Job", RENDERED), Link("v1", "Pod", INDEXED_POD)),
    )
    support = SUPPORT

    def naming(self, plan: Plan, options: Options) -> Naming:
        if plan.static_indexes:
            return Naming(
                hostname=lambda role, index: f"{self.job_name(plan, role)}-{index}",
                dynamic_index=None,
                index_selector=lambda role, index: {labels.REPLICA_INDEX: str(index)},
            )
        return completion_index_naming(
            lambda role, index: f"{self.job_name(plan, role)}-{index}",
            run_identity=_run_identity(plan),
        )

    @staticmethod
    def job_name(plan: Plan, role: Role) -> str:
        return f"{plan.name}-{role.key}"

    def slots(self, plan: Plan) -> list[PodSlot]:
        if plan.static_indexes:
            return [PodSlot(role, i) for role in plan.roles for i in range(role.replicas)]
        return role_slots(plan)

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addresses,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
        objects, diagnostics = shared_objects(plan, addressing, options, self)
        if options.kueue_queue and len(pods) > 1:
            diagnostics.append(
                warn(
                    plan,
                    ("kind",),
                    "Kueue admits each role's Job on its own, so part of the job can start "
                    "while the rest waits; use --target jobset to admit the job as a whole",
                )
            )
        for slot, merged in pods:
            role = slot.role
            name = self.job_name(plan, role)
            hostname = None
            if plan.static_indexes:
                name = hostname = f"{name}-{slot.index}"
            template, found = finish_pod(
                plan,
                slot,
                merged,
                addressing,
                restart_policy=job_restart_policy(role.restart_policy),
                hostname=hostname,
                options=options,
                target=self,
            )
            diagnostics.extend(found)
            spec, found = job_spec(plan, role, options, template)
            diagnostics.extend(found)
            if plan.run_policy.ttl_seconds_after_finished is not None:
                spec["ttlSecondsAfterFinished"] = plan.run_policy.ttl_seconds_after_finished
            metadata: dict[str, Any] = {"name": name}
            if options.kueue_queue:
                metadata["labels"] = scheduling.kueue_labels(options)
            objects.append(
                {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}
            )
        return objects, diagnostics

    def check_names(self, plan: Plan, objects: list[dict[str, Any]]) -> list[Diagnostic]:
        """An Indexed Job's pods are `<Job>-<completion index>`."""
        hosts = [
            f"{o['metadata']['name']}-{o['spec']['completions'] - 1}"
            for o in objects
            if o["kind"] == "Job" and o["spec"].get("completionMode") == "Indexed"
        ]
        return name_problems(plan, objects, hosts)


def completion_index_naming(hostname: Callable[[Role, int], str], **more: Any) -> Naming:
    """Naming for pods of Indexed Jobs (this target's and a JobSet's): the completion index.

    The Job controller only appends JOB_COMPLETION_INDEX when the container does not define
    it; defining it first lets later values use $(JOB_COMPLETION_INDEX).
    """
    return Naming(
        hostname=hostname,
        dynamic_index=field_ref(f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"),
        index_variable=COMPLETION_INDEX_VARIABLE,
        index_selector=lambda role, index: {COMPLETION_INDEX_ANNOTATION: str(index)},
        **more,
    )


def job_spec(
    plan: Plan, role: Role, options: Options, template: dict[str, Any]
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The Indexed Job spec of one role, with the run policies a Job expresses.

    Shared by the `indexed-job` and `jobset` targets (a JobSet's replicated Job is this Job).
    """
    diagnostics: list[Diagnostic] = []
    run = plan.run_policy
    spec: dict[str, Any] = {
        "completionMode": "Indexed",
        "completions": role.replicas,
        "parallelism": role.replicas,
    }
    if plan.static_indexes:
        # One pod per Job, not Indexed: the Job controller would replace the pod's host name
        # with `<Job>-<completion index>`.
        spec = {"completions": 1, "parallelism": 1}
    if role.restart_policy == "Always":
        diagnostics.append(
            warn(
                plan,
                role.path + ("restartPolicy",),
                "restartPolicy Always is not accepted by Jobs: pods restart OnFailure "
                "instead; use --target pod or statefulset to keep Always",
            )
        )
    per_index = _dynamic_workers(plan, role, options, diagnostics)
    if per_index:
        # A failed worker fails only its own index: the others keep training, and the job
        # still succeeds when worker 0 does.
        spec["backoffLimitPerIndex"] = run.backoff_limit or 0
    elif run.backoff_limit is not None:
        spec["backoffLimit"] = run.backoff_limit
    else:
        unset = _unset_backoff_limit(role, options)
        if unset is not None:
            spec["backoffLimit"] = unset
    if _exit_code_policy_applies(role, options):
        spec["podFailurePolicy"] = exit_code_policy(
            plan.main_container, "FailIndex" if per_index else "FailJob"
        )
    if (
        role.key == "worker"
        and role.replicas > 1
        and not plan.static_indexes
        and plan.success_policy not in (ALL_WORKERS, SCHEDULER_DECIDES)
        and versions.enabled("JobSuccessPolicy", options.kube_version)
    ):
        # ms-operator's default: the job succeeds when worker 0 does.
        spec["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}
    if run.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = run.active_deadline_seconds
    spec["template"] = template
    return spec, diagnostics


#: The largest backoffLimit (int32), Kubernetes' own "no limit": what the API server
#: defaults backoffLimit to when a Job uses backoffLimitPerIndex.
UNLIMITED_BACKOFF = 2**31 - 1


def _unset_backoff_limit(role: Role, options: Options) -> int | None:
    """The Job's backoffLimit when the job sets none: the operators' limits, not the Job's 6.

    Without `runPolicy.backoffLimit` the operators (kubeflow/common `PastBackoffLimit`)
    counted no restarts: a container of an `OnFailure`/`Always` role restarted in place
    without limit, and an `ExitCode` pod killed by a signal was recreated without limit,
    while a failed `Never` pod failed the job at once. A Job counts its containers' restarts
    (OnFailure) and its failed pods against `backoffLimit`, 6 by default.
    """
    if role.restart_policy == "Never":
        return 0
    if role.restart_policy in ("OnFailure", "Always"):
        return UNLIMITED_BACKOFF
    if _exit_code_policy_applies(role, options):
        return UNLIMITED_BACKOFF  # exit codes 1-127 still fail the job at once
    return None  # ExitCode before pod failure policies: reported by support.unexpressed


def _exit_code_policy_applies(role: Role, options: Options) -> bool:
    return role.restart_policy == "ExitCode" and versions.enabled(
        "JobPodFailurePolicy", options.kube_version
    )


def _dynamic_workers(
    plan: Plan, role: Role, options: Options, diagnostics: list[Diagnostic]
) -> bool:
    """Whether this role's Job gives each worker its own retry budget (`enableDynamicWorker`)."""
    if not plan.enable_dynamic_worker or role.key != "worker" or plan.static_indexes:
        return False
    if not versions.enabled("JobBackoffLimitPerIndex", options.kube_version):
        return False  # reported by support.unexpressed
    if job_restart_policy(role.restart_policy) != "Never":
        diagnostics.append(
            warn(
                plan,
                ("spec", "enableDynamicWorker"),
                "enableDynamicWorker needs the Worker restartPolicy Never or ExitCode (a Job's "
                "per-index retries need it); with OnFailure the kubelet restarts a failed "
                "worker in place and the Worker Job fails when backoffLimit is used up",
            )
        )
        return False
    return True


def exit_code_policy(container: str, action: str = "FailJob") -> dict[str, Any]:
    """ms-operator's ExitCode rule: 1-127 are the program's own failures and fail the job
    (or, for dynamic workers, only that worker's index); 128 and above (signals, OOM kills)
    are retried; disruptions (preemption, eviction, node drain) are not counted against the
    backoff limit."""
    return {
        "rules": [
            # status: required by the API server from 1.26 to 1.34 (later it defaults to True)
            {
                "action": "Ignore",
                "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
            },
            {
                "action": action,
                # required (though it may be empty) by the API's schema up to 1.28
                "onPodConditions": [],
                "onExitCodes": {
                    "containerName": container,
                    "operator": "In",
                    "values": list(range(1, 128)),
                },
            },
        ]
    }


def job_restart_policy(policy: str) -> str:
    """A Job's pod restart policy: Jobs do not accept Always; ExitCode runs as Never."""
    return {"Always": "OnFailure", "OnFailure": "OnFailure"}.get(policy, "Never")



def _run_identity(plan: Plan) -> EnvValue | None:
    """A job of one role is one Job: its UID names the run. Several Jobs share none."""
    if len([role for role in plan.roles if role.replicas > 0]) != 1 or plan.static_indexes:
        return None
    return field_ref(f"metadata.labels['{CONTROLLER_UID_LABEL}']")


TARGET: Target = IndexedJobTarget()
