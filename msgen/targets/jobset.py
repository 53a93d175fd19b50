"""`jobset`: one `jobset.x-k8s.io/v1alpha2` JobSet with a replicated Job per role.

Each role is a replicated Job of one Indexed Job (the same Job the `indexed-job` target
renders, with its retries, exit-code rule and worker-0 success rule), so the JobSet
controller sees the whole training job: it starts the roles in order (the scheduler first),
declares success when the Worker Job succeeds (the Scheduler Job, for a job whose outcome is
its Scheduler's: MXNet), fails the job when any role fails, and deletes
every running pod when it ends (`cleanPodPolicy: Running`). With DNS host names on, pod
`i` of role `rt` is `<job>-<rt>-0-<i>.<job>`; the JobSet controller creates the headless
Service `<job>` itself. Since JobSet 0.9 it labels every pod with its JobSet's UID
(`jobset.sigs.k8s.io/jobset-uid`, `labelAndAnnotateObject`): the identity of one run.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.patch import field_ref
from ..model.plan import Options, Plan, PodSlot, Role
from . import INDEXED_POD, RENDERED, REPLICATED_JOB, Facts, Link, scheduling
from .addressing import Naming, name_problems
from .common import finish_pod, role_slots, shared_objects
from .indexed_job import (
    DYNAMIC_WORKERS,
    EXIT_CODES,
    completion_index_naming,
    job_restart_policy,
    job_spec,
)
from .limits import INDEXED_JOB_LIMIT
from .cells import N, Cell, apply, na, partly

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import Addresses, Target

API_VERSION = "jobset.x-k8s.io/v1alpha2"
#: Put on every pod by the JobSet controller since JobSet 0.9: one value per run of the JobSet.
JOBSET_UID_LABEL = "jobset.sigs.k8s.io/jobset-uid"


SUPPORT = {
    "restartPolicy: Always / OnFailure": N,
    "restartPolicy: Never": N,
    "restartPolicy: ExitCode": EXIT_CODES,
    "successPolicy (default: worker 0)": Cell(
        "native", "JobSuccessPolicy", "the JobSet succeeds when every worker does"
    ),
    "success by the Scheduler or Tuner (MXJob)": N,
    "success by the Scheduler or Tuner, cleanPodPolicy None (MXJob)": N,
    "successPolicy: AllWorkers": N,
    "runPolicy.backoffLimit": N,
    "runPolicy.backoffLimit, several roles": partly(
        "each replicated Job counts only its own failures against backoffLimit (the JobSet "
        "fails with the first Job that passes it), so the job may retry backoffLimit times "
        "per role, where ms-operator allowed backoffLimit in all"
    ),
    "runPolicy.activeDeadlineSeconds": N,
    "runPolicy.ttlSecondsAfterFinished": N,
    "runPolicy.cleanPodPolicy: Running": N,
    "runPolicy.cleanPodPolicy: All": apply(
        "the JobSet deletes running pods when it ends; finished pods stay"
    ),
    "runPolicy.cleanPodPolicy: None": na("a JobSet always deletes its running pods when it ends"),
    "runPolicy.schedulingPolicy (gang)": N,
    "schedulingPolicy.priorityClass": N,
    "enableDynamicWorker": Cell(
        "native", "JobBackoffLimitPerIndex", "a failed Worker fails the JobSet",
        partly=DYNAMIC_WORKERS.format(
            ends="the Worker Job fails (FailedIndexes), and the JobSet with it"
        ),
    ),
    "--kueue-queue": N,
}


class JobSetTarget:
    name = "jobset"
    summary = (
        "one JobSet (jobset.x-k8s.io/v1alpha2) with a replicated Job per role, started "
        "scheduler first, succeeding with the workers"
    )
    facts = Facts(
        max_replicas=(
            INDEXED_JOB_LIMIT,
            "each replicated Job is an Indexed Job, whose parallelism the API server limits",
        ),
        job_templates=True,
        custom_resource=True,
        cleans_running_pods=True,
        workloads="a JobSet",
        chain=(Link(API_VERSION, "JobSet", RENDERED), Link("batch/v1", "Job", REPLICATED_JOB),
               Link("v1", "Pod", INDEXED_POD)),
        add_on=("JobSet v0.12", (1, 32), (
            "JobSet supports the last three Kubernetes minors at each release (v0.12: 1.32 to 1.34), "
            "and API servers before 1.32 refuse its CRD (since v0.11 a CEL rule reads a field named "
            "`namespace`); an older JobSet (0.9 on, whose pods carry the jobset-uid label msgen's "
            "RUN_ID reads) may run there, untested with msgen")),
    )
    support = SUPPORT

    def naming(self, plan: Plan, options: Options) -> Naming:
        return completion_index_naming(
            lambda role, index: f"{self.job_name(plan, role)}-{index}",
            controller_sets_subdomain=True,
            controller_creates_headless_service=True,
            run_identity=field_ref(f"metadata.labels['{JOBSET_UID_LABEL}']"),
        )

    def job_name(self, plan: Plan, role: Role) -> str:
        """The name of the role's only Job: `<jobset>-<replicated job>-<job index>`."""
        return f"{plan.name}-{self.replicated_job(plan, role)}-0"

    def replicated_job(self, plan: Plan, role: Role) -> str:
        """The name of the role's replicated Job: the role's key (a target built on this
        one may name a role's replicated Job after the convention of its own controller)."""
        return role.key

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
        replicated: list[dict[str, Any]] = []
        for slot, merged in pods:
            role = slot.role
            template, found = finish_pod(
                plan,
                slot,
                merged,
                addressing,
                restart_policy=job_restart_policy(role.restart_policy),
                hostname=None,
                options=options,
                target=self,
            )
            diagnostics.extend(found)
            spec, found = job_spec(plan, role, options, template)
            diagnostics.extend(found)
            entry: dict[str, Any] = {"name": self.replicated_job(plan, role), "replicas": 1}
            if replicated and addressing.distributed:
                # The scheduler first: the other roles start once its pod is ready.
                entry["dependsOn"] = [{"name": replicated[0]["name"], "status": "Ready"}]
            entry["template"] = {"spec": spec}
            replicated.append(entry)
        spec = {
            "network": {"enableDNSHostnames": True, "subdomain": addressing.subdomain},
            "replicatedJobs": replicated,
        }
        decider = plan.deciding_role()
        if decider is not None and decider.replicas > 0:
            # The Worker Job decides: it succeeds when worker 0 does (or every worker, with
            # AllWorkers); or the Scheduler's. The JobSet then succeeds and deletes the other
            # roles' pods.
            spec["successPolicy"] = {
                "operator": "All", "targetReplicatedJobs": [self.replicated_job(plan, decider)]
            }
        if plan.run_policy.ttl_seconds_after_finished is not None:
            spec["ttlSecondsAfterFinished"] = plan.run_policy.ttl_seconds_after_finished
        metadata: dict[str, Any] = {"name": plan.name}
        if options.kueue_queue:
            metadata["labels"] = scheduling.kueue_labels(options)
        objects.append(
            {"apiVersion": API_VERSION, "kind": "JobSet", "metadata": metadata, "spec": spec}
        )
        return objects, diagnostics

    def check_names(self, plan: Plan, objects: list[dict[str, Any]]) -> list[Diagnostic]:
        """A JobSet's pods are `<js>-<replicated job>-<job index>-<pod index>`."""
        hosts = [
            f"{o['metadata']['name']}-{r['name']}-{r['replicas'] - 1}-"
            f"{r['template']['spec']['completions'] - 1}"
            for o in objects
            if o["kind"] == "JobSet"
            for r in o["spec"]["replicatedJobs"]
        ]
        return name_problems(plan, objects, hosts)


TARGET: Target = JobSetTarget()
