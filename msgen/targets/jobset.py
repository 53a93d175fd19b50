"""`jobset`: one `jobset.x-k8s.io/v1alpha2` JobSet with a replicated Job per role.

Each role is a replicated Job of one Indexed Job (the same Job the `indexed-job` target
renders, with its retries, exit-code rule and worker-0 success rule), so the JobSet
controller sees the whole training job: it starts the roles in order (the scheduler first),
declares success when the Worker Job succeeds, fails the job when any role fails, and deletes
every running pod when it ends (`cleanPodPolicy: Running`). With DNS host names on, pod
`i` of role `rt` is `<job>-<rt>-0-<i>.<job>`; the JobSet controller creates the headless
Service `<job>` itself.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..plan import Options, Plan, PodSlot, Role
from . import scheduling
from .addressing import Addressing, Naming, name_problems
from .common import finish_pod, role_slots, shared_objects
from .indexed_job import completion_index_naming, job_restart_policy, job_spec


class JobSetTarget:
    name = "jobset"
    summary = (
        "one JobSet (jobset.x-k8s.io/v1alpha2) with a replicated Job per role, started "
        "scheduler first, succeeding with the workers"
    )

    def naming(self, plan: Plan, options: Options) -> Naming:
        return completion_index_naming(
            lambda role, index: f"{self.job_name(plan, role)}-{index}",
            controller_sets_subdomain=True,
            controller_creates_headless_service=True,
        )

    @staticmethod
    def job_name(plan: Plan, role: Role) -> str:
        """The name of the role's only Job: `<jobset>-<replicated job>-<job index>`."""
        return f"{plan.name}-{role.key}-0"

    def slots(self, plan: Plan) -> list[PodSlot]:
        return role_slots(plan)

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addressing,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
        objects, diagnostics = shared_objects(plan, addressing, options, self.name)
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
                target=self.name,
            )
            diagnostics.extend(found)
            spec, found = job_spec(plan, role, options, template)
            diagnostics.extend(found)
            entry: dict[str, Any] = {"name": role.key, "replicas": 1}
            if replicated and addressing.distributed:
                # The scheduler first: the other roles start once its pod is ready.
                entry["dependsOn"] = [{"name": replicated[0]["name"], "status": "Ready"}]
            entry["template"] = {"spec": spec}
            replicated.append(entry)
        spec = {
            "network": {"enableDNSHostnames": True, "subdomain": addressing.subdomain},
            "replicatedJobs": replicated,
        }
        workers = plan.workers()
        if workers is not None and workers.replicas > 0:
            # The Worker Job decides: it succeeds when worker 0 does (or every worker, with
            # AllWorkers); the JobSet then succeeds and deletes the other roles' pods.
            spec["successPolicy"] = {"operator": "All", "targetReplicatedJobs": [workers.key]}
        if plan.run_policy.ttl_seconds_after_finished is not None:
            spec["ttlSecondsAfterFinished"] = plan.run_policy.ttl_seconds_after_finished
        metadata: dict[str, Any] = {"name": plan.name}
        if options.kueue_queue:
            metadata["labels"] = scheduling.kueue_labels(options)
            spec["suspend"] = True
        objects.append(
            {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata, "spec": spec}
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


TARGET = JobSetTarget()
