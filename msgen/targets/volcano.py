"""`volcano`: one `batch.volcano.sh/v1alpha1` Job with a task per role.

A Volcano Job is its own gang: the volcano scheduler starts its pods together once
`minAvailable` of them fit (the job's `schedulingPolicy.minAvailable`, else every pod), in
the job's `queue` and priority. Pods are `<job>-<rt>-<i>`; the `svc` plugin gives them that
host name, the subdomain `<job>` and the headless Service `<job>`.

A pod learns its index in its task from the label `volcano.sh/task-index`, which Volcano's job
controller puts on every pod since Volcano 1.9 (`createJobPod`), read through the downward
API into `MSGEN_TASK_INDEX`, defined before any value that uses it. (The `env` plugin's
`VC_TASK_INDEX` is appended after the pod's own env, where `$(...)` cannot use it; it is still
enabled for scripts that read it.) Volcano 1.9 is therefore the oldest Volcano this target
supports: on older Volcano the label is missing and the index reads as empty. The job
controller also annotates every pod `scheduling.k8s.io/group-name: <job>-<job UID>` (its
PodGroup's name, since Volcano 1.6): the identity of one run of the job.

Policies map onto Volcano's events and actions, per task:

- a pod evicted (preemption, node drain) restarts its task and is not counted as a failure;
- `restartPolicy` Never or ExitCode: a failed pod terminates the job, or restarts it while
  `backoffLimit` allows (the job's `maxRetry`, one more: see `max_retry`); with `enableDynamicWorker`, a failed Worker
  does neither; OnFailure and Always restart the container in place, as the kubelet does;
- the Worker task completing (the Scheduler task, for MXNet, whose operators followed the
  Scheduler) completes the job and stops the other roles' pods (`cleanPodPolicy: Running`,
  ms-operator's default; `None` leaves them running, though a failed pod that ends the job
  still stops them: `SUPPORT` below says so).
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.patch import field_ref
from ..model.plan import Options, Plan, PodSlot, Role
from . import RENDERED, TASK_INDEX, Facts, Link, scheduling
from .addressing import Naming, name_problems
from .common import finish_pod, role_slots, shared_objects
from .indexed_job import UNLIMITED_BACKOFF
from .limits import INDEXED_JOB_LIMIT, MOST_OF_A_CLUSTER
from .scheduling import warn
from .cells import N, apply, na, partly

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import Addresses, Target


#: Set on every pod by Volcano's job controller since Volcano 1.9 (label and annotation).
TASK_INDEX_LABEL = "volcano.sh/task-index"
#: Defined first in each container, so later values can use `$(MSGEN_TASK_INDEX)`.
TASK_INDEX_VARIABLE = "MSGEN_TASK_INDEX"
#: `<job>-<job UID>` on every pod, set by Volcano's job controller: one value per run.
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"


SUPPORT = {
    "restartPolicy: Always / OnFailure": N,
    "restartPolicy: Never": N,
    "restartPolicy: ExitCode": na(
        "Volcano matches one exit code per policy; pods run with restartPolicy Never and "
        "any failure is handled as with Never"
    ),
    "successPolicy (default: worker 0)": apply("the Volcano Job completes when every worker does"),
    "success by the Scheduler or Tuner (MXJob)": N,
    # Volcano completes a job early only with CompleteJob, which stops the other pods.
    "success by the Scheduler or Tuner, cleanPodPolicy None (MXJob)": apply(
        "the Volcano Job completes when every task has (completing it with one task would "
        "stop the other tasks' pods)"
    ),
    "successPolicy: AllWorkers": N,
    "runPolicy.backoffLimit": N,
    "runPolicy.backoffLimit, several roles": N,  # maxRetry counts the whole Volcano Job's
    "runPolicy.activeDeadlineSeconds": N,
    "runPolicy.ttlSecondsAfterFinished": N,
    "runPolicy.cleanPodPolicy: Running": N,
    "runPolicy.cleanPodPolicy: All": apply(
        "the Volcano Job deletes running pods when it ends; finished pods stay"
    ),
    "runPolicy.cleanPodPolicy: None": partly(
        "a failed pod of a Never or ExitCode role (but a Worker with enableDynamicWorker) "
        "ends the Volcano Job (TerminateJob, or RestartJob with backoffLimit), which "
        "deletes every running pod; finished pods stay"
    ),
    "runPolicy.schedulingPolicy (gang)": N,
    "schedulingPolicy.priorityClass": N,
    "enableDynamicWorker": N,
    "--kueue-queue": na("Kueue does not admit Volcano Jobs; Volcano queues them itself"),
}


def max_retry(backoff_limit: int) -> int:
    """The Volcano Job's `maxRetry` that retries a failed job `backoff_limit` times, as a Job's
    `backoffLimit` and ms-operator's do. Volcano counts the run it restarts, not the restarts:
    `RestartJob` raises `retryCount` as the job enters `Restarting`, and a `Restarting` job
    whose `retryCount` has reached `maxRetry` fails (`pkg/controllers/job/state`, v1.14), so
    `maxRetry: N` allows N - 1 restarts. Kept within the field's int32."""
    return min(backoff_limit + 1, UNLIMITED_BACKOFF)


class VolcanoTarget:
    name = "volcano"
    summary = "one Volcano Job (batch.volcano.sh/v1alpha1) with a task per role, gang-scheduled"
    facts = Facts(
        max_replicas=(INDEXED_JOB_LIMIT, MOST_OF_A_CLUSTER),
        custom_resource=True,
        deadline_on_pods=True,
        own_gang=True,
        cleans_running_pods=True,
        completed_by_command=True,
        workloads="a Volcano Job",
        rank_table_kind="Job",
        chain=(Link("batch.volcano.sh/v1alpha1", "Job", RENDERED), Link("v1", "Pod", TASK_INDEX)),
    )
    support = SUPPORT

    def naming(self, plan: Plan, options: Options) -> Naming:
        return Naming(
            hostname=lambda role, index: f"{plan.name}-{role.key}-{index}",
            dynamic_index=field_ref(f"metadata.labels['{TASK_INDEX_LABEL}']"),
            index_variable=TASK_INDEX_VARIABLE,
            index_selector=lambda role, index: {TASK_INDEX_LABEL: str(index)},
            dynamic_pod_name=field_ref("metadata.name"),
            controller_sets_subdomain=True,
            controller_creates_headless_service=True,
            run_identity=field_ref(f"metadata.annotations['{GROUP_NAME_ANNOTATION}']"),
        )

    def slots(self, plan: Plan) -> list[PodSlot]:
        return role_slots(plan)

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addresses,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
        # The volcano target emits no PodGroup: shared_objects gives Services and warnings.
        objects, diagnostics = shared_objects(plan, addressing, options, self)
        if options.gang_scheduler == "scheduler-plugins":
            diagnostics.append(
                warn(
                    plan,
                    ("kind",),
                    "--gang-scheduler scheduler-plugins does not apply to a Volcano Job, which "
                    "the volcano scheduler gang-schedules itself: no PodGroup is emitted",
                )
            )
        chosen = scheduling.policy(plan)
        if chosen.min_resources is not None:
            diagnostics.append(
                warn(
                    plan,
                    ("spec", "runPolicy", "schedulingPolicy", "minResources"),
                    "a Volcano Job has no minResources: Volcano sums its tasks' requests itself",
                )
            )
        tasks = []
        for slot, merged in pods:
            role = slot.role
            restart = "Never" if role.restart_policy == "ExitCode" else role.restart_policy
            template, found = finish_pod(
                plan,
                slot,
                merged,
                addressing,
                restart_policy=restart,
                hostname=None,
                options=options,
                target=self,
            )
            diagnostics.extend(found)
            deadline = plan.run_policy.active_deadline_seconds
            if deadline is not None and "activeDeadlineSeconds" not in template["spec"]:
                template["spec"]["activeDeadlineSeconds"] = deadline
            task: dict[str, Any] = {"name": role.key, "replicas": role.replicas}
            policies = _task_policies(plan, role)
            if policies:
                task["policies"] = policies
            task["template"] = template
            tasks.append(task)
        spec: dict[str, Any] = {
            "minAvailable": scheduling.min_member(plan),
            "schedulerName": scheduling.VOLCANO_SCHEDULER,
        }
        if chosen.queue is not None:
            spec["queue"] = chosen.queue
        if chosen.priority_class is not None:
            spec["priorityClassName"] = chosen.priority_class
        if plan.run_policy.backoff_limit:
            spec["maxRetry"] = max_retry(plan.run_policy.backoff_limit)
        if plan.run_policy.ttl_seconds_after_finished is not None:
            spec["ttlSecondsAfterFinished"] = plan.run_policy.ttl_seconds_after_finished
        if addressing.distributed:
            plugins: dict[str, list[str]] = {"svc": []}
            if any(slot.index is None for slot, _ in pods):
                plugins["env"] = []
            spec["plugins"] = plugins
        spec["tasks"] = tasks
        objects.append(
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "metadata": {"name": plan.name},
                "spec": spec,
            }
        )
        return objects, diagnostics

    def check_names(self, plan: Plan, objects: list[dict[str, Any]]) -> list[Diagnostic]:
        """A Volcano Job's pods are `<job>-<task>-<index>`."""
        hosts = [
            f"{o['metadata']['name']}-{t['name']}-{t['replicas'] - 1}"
            for o in objects
            if o["apiVersion"] == "batch.volcano.sh/v1alpha1"
            for t in o["spec"]["tasks"]
        ]
        return name_problems(plan, objects, hosts)


def _task_policies(plan: Plan, role: Role) -> list[dict[str, str]]:
    policies = [{"action": "RestartTask", "event": "PodEvicted"}]
    dynamic = plan.enable_dynamic_worker and role.key == "worker"
    if role.restart_policy in ("Never", "ExitCode") and not dynamic:
        action = "RestartJob" if plan.run_policy.backoff_limit else "TerminateJob"
        policies.append({"action": action, "event": "PodFailed"})
    decider = plan.deciding_role()
    deciding = decider is not None and role.key == decider.key
    if deciding and plan.run_policy.clean_pod_policy != "None":
        policies.append({"action": "CompleteJob", "event": "TaskCompleted"})
    return policies


TARGET: Target = VolcanoTarget()
