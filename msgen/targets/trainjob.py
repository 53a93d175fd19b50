"""`trainjob`: a Kubeflow Trainer TrainJob and the TrainingRuntime it runs (`trainer.kubeflow.org/v1alpha1`).

Kubeflow Trainer has runtimes for PyTorch, JAX, MPI and others, and none for MindSpore: it
keeps its runtimes vendor-neutral and leaves a framework's env to "your own runtime
template". msgen writes that runtime. Trainer builds a JobSet named after the TrainJob from
the runtime's JobSet template, so each job is the `jobset` target's JobSet (its replicated
Jobs, addressing, ordering and success rule), carried by a runtime:

- one namespaced `TrainingRuntime` per job, named `<job>-<digest of its content>`, holding the
  whole JobSet template: every role's pod template with the MindSpore (MXNet, Caffe2) env;
- one `TrainJob` `<job>` referring to it, with the trainer step's `numNodes`.

Why not a shared `ClusterTrainingRuntime` per shape with the per-job facts in the TrainJob:
a TrainJob sets only the trainer step's image, command, args, env and resources, and
`runtimePatches` a few pod fields (no image, command or resources, no env of the trainer's
container), while a MindSpore job's Scheduler and PS pods differ per job and its env names the
job (the Scheduler's host or Service); a cluster-scoped runtime also needs cluster-wide
rights to apply and is shared by every namespace. And runtimes must not change under the jobs
that use them (kubeflow/trainer#2599: before Trainer 2.3 a TrainJob rebuilt its JobSet from
the runtime as it then was, after Kueue suspended it; 2.3 snapshots the runtime at the first
reconcile, so a later edit reaches no job at all). A name taken from the runtime's content
means msgen never edits a runtime: a changed job is a new runtime, and the TrainJob's
`runtimeRef` (immutable, as a Job's template) changes with it, so the change is refused as
immutable instead of silently reaching nothing: `msgen apply --recreate`, Argo CD's
`Replace=true`, or `run-name: content` for a new run under new names. Under GitOps the old
runtime is pruned with the sync; a running TrainJob no longer needs it.

Trainer's conventions, which its controller, webhook and SDK read: the runtime is labelled
`trainer.kubeflow.org/framework` (`mindspore`, `mxnet`, `caffe2`; not a job without Workers,
which has no trainer step, without which the SDK refuses to list it); the Worker role is the
trainer step, a replicated Job named `node` (the SDK lists a job's steps from the pods of
`node`) labelled `trainer.kubeflow.org/trainjob-ancestor-step: trainer` whose main container
is named `node` (Trainer's webhook requires it; `TrainerClient().get_job_logs()` reads it);
`mlPolicy.numNodes` and the TrainJob's `trainer.numNodes` are the Worker replicas, which
Trainer writes into that Job's `parallelism` and `completions`. Worker pods are therefore
`<job>-node-0-<i>`; the other roles keep their names, `<job>-<rt>-0-<i>`. Gang scheduling is
Trainer's `podGroupPolicy` (`volcano`, its queue as the template annotation Trainer reads;
`coscheduling` for scheduler-plugins): Trainer makes the PodGroup `<job>`, so msgen emits
none; the pods still name the gang scheduler, as on the other targets. Kubernetes' own
Workload and PodGroup (`--gang-scheduler kubernetes`) are msgen's, as on the other targets:
Trainer copies the pods' `spec.schedulingGroup` through the JobSet to them.

What Trainer (v2.3) and the JobSet controller label: the JobSet gets the labels and
annotations of the runtime template's `metadata` (and of the TrainJob's `runtimePatches`; a
TrainJob has no `spec.labels`), its Jobs only those of their replicated Job's template, its
pods those of their pod template, and none of the TrainJob's own. So msgen's labels
(`managed-by`, `job-name`) are written into the template's metadata and each replicated Job's:
`msgen controller` watches what carries them, and follows the TrainJob's pods through that
JobSet and its Jobs by their controller references.
"""

from __future__ import annotations

import hashlib
import json

from ..model.diagnostics import Diagnostic
from ..model.plan import Options, Plan, PodSlot, Role
from . import INDEXED_POD, RENDERED, REPLICATED_JOB, SAME_NAME, Facts, Link, scheduling
from .addressing import name_problems
from .cells import na, partly
from .jobset import SUPPORT as JOBSET_SUPPORT
from .jobset import API_VERSION as JOBSET_API_VERSION
from .jobset import JobSetTarget
from .labels import own_labels
from .limits import INDEXED_JOB_LIMIT
from .scheduling import warn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import Addresses, Target

API_VERSION = "trainer.kubeflow.org/v1alpha1"
#: Read by Trainer's SDK to tell a runtime's framework (it lists no runtime without it).
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
#: The step of a TrainJob a replicated Job is: Trainer applies `spec.trainer` to `trainer`.
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_STEP = "trainer"
#: Trainer's name for the trainer step's replicated Job and container.
NODE = "node"
#: The template annotation Trainer's Volcano plugin copies into its PodGroup's queue.
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
#: Annotations that name a pod's default container (kubectl logs, exec).
DEFAULT_CONTAINER_ANNOTATIONS = (
    "kubectl.kubernetes.io/default-container",
    "kubectl.kubernetes.io/default-logs-container",
)
DIGEST_LENGTH = 8

SUPPORT = {
    **JOBSET_SUPPORT,
    # Trainer v2.2 and v2.3 drop a TrainJob's Failed condition on each pass (a deadline's
    # stays) and build the JobSet of a TrainJob that has not finished: a TTL on the JobSet
    # would run a failed job again each time it deleted the JobSet.
    "runPolicy.ttlSecondsAfterFinished": na(
        "not set on the JobSet Trainer builds: once a TTL deleted a failed job's JobSet, "
        "Trainer builds it again and the job runs again; the finished TrainJob and its "
        "pods stay until `msgen delete`"
    ),
    # Warned where it matters, at minAvailable or minResources (`_pod_group_policy`).
    "runPolicy.schedulingPolicy (gang)": partly(
        "the PodGroup Trainer makes waits for every pod of the job and sums their requests "
        "itself: a smaller minAvailable and a minResources are not expressed"
    ),
}


class TrainJobTarget(JobSetTarget):
    name = "trainjob"
    summary = (
        "one Kubeflow Trainer TrainJob (trainer.kubeflow.org/v1alpha1) and the TrainingRuntime "
        "it runs: the jobset target's JobSet, with the Worker role as Trainer's trainer step"
    )
    facts = Facts(
        max_replicas=(
            INDEXED_JOB_LIMIT,
            "each replicated Job is an Indexed Job, whose parallelism the API server limits",
        ),
        job_templates=True,
        custom_resource=True,
        cleans_running_pods=True,
        gang_by_policy=True,
        workloads="a TrainJob",
        # Trainer builds the JobSet `<job>` (its trainer step's replicated Job is `node`).
        chain=(Link(API_VERSION, "TrainJob", RENDERED), Link(JOBSET_API_VERSION, "JobSet", SAME_NAME),
               Link("batch/v1", "Job", REPLICATED_JOB, renamed=(("worker", NODE),)),
               Link("v1", "Pod", INDEXED_POD)),
        add_on=("Kubeflow Trainer v2.3", (1, 32), (
            "Trainer's installation guide asks for Kubernetes 1.31 or newer and v2.3's tests run 1.32 "
            "to 1.35; API servers before 1.32 refuse its TrainingRuntime CRD, whose JobSet spec has "
            "a CEL rule reading a field named `namespace`")),
    )
    support = SUPPORT

    def replicated_job(self, plan: Plan, role: Role) -> str:
        trainer = trainer_role(plan)
        return NODE if trainer is not None and role.key == trainer.key else role.key

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addresses,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
        objects, diagnostics = super().render(plan, pods, addressing, options)
        jobset = objects.pop()  # the JobSet, last: what Trainer will build from the runtime
        # Trainer makes a Volcano or scheduler-plugins PodGroup itself; Kubernetes' own Workload
        # and PodGroup (--gang-scheduler kubernetes) stay msgen's: the pods name it themselves.
        groups = [o for o in objects if o["kind"] == "PodGroup" and o["apiVersion"] != scheduling.WORKLOAD_API]
        objects = [o for o in objects if not any(o is group for group in groups)]
        spec = dict(jobset["spec"])
        spec.pop("ttlSecondsAfterFinished", None)  # not expressed: SUPPORT says why
        trainer = trainer_role(plan)
        if trainer is not None:
            spec["replicatedJobs"], found = _trainer_step(plan, trainer, spec["replicatedJobs"])
            diagnostics.extend(found)
        ours = own_labels(plan)
        spec["replicatedJobs"] = [_labelled(entry, ours) for entry in spec["replicatedJobs"]]
        runtime_spec: dict[str, Any] = {}
        if trainer is not None:
            runtime_spec["mlPolicy"] = {"numNodes": trainer.replicas}
        template: dict[str, Any] = {"metadata": {"labels": ours}, "spec": spec}
        for group in groups:
            policy, annotations = _pod_group_policy(plan, options, group, diagnostics)
            runtime_spec["podGroupPolicy"] = policy
            if annotations:
                template["metadata"]["annotations"] = annotations
        runtime_spec["template"] = template
        # Trainer's SDK lists a runtime with this label only when it has a trainer step (the
        # listing fails for the whole namespace otherwise): a job without Workers goes unlabelled.
        labels = {FRAMEWORK_LABEL: plan.framework.split("-")[0]} if trainer is not None else {}
        runtime_name = f"{plan.name}-{_digest({'labels': labels, 'spec': runtime_spec})}"
        runtime = {
            "apiVersion": API_VERSION,
            "kind": "TrainingRuntime",
            "metadata": {"name": runtime_name, **({"labels": labels} if labels else {})},
            "spec": runtime_spec,
        }
        job_spec: dict[str, Any] = {
            "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": runtime_name}
        }
        if trainer is not None:
            job_spec["trainer"] = {"numNodes": trainer.replicas}
        # Kueue admits the TrainJob (its webhook suspends it until then), not its JobSet.
        train_job = {
            "apiVersion": API_VERSION,
            "kind": "TrainJob",
            "metadata": jobset["metadata"],
            "spec": job_spec,
        }
        return [*objects, runtime, train_job], diagnostics

    def check_names(self, plan: Plan, objects: list[dict[str, Any]]) -> list[Diagnostic]:
        """The JobSet Trainer builds is named after the TrainJob; its pods are
        `<trainjob>-<replicated job>-<job index>-<pod index>`."""
        hosts = [
            f"{plan.name}-{r['name']}-{r['replicas'] - 1}-{r['template']['spec']['completions'] - 1}"
            for o in objects
            if o["kind"] == "TrainingRuntime"
            for r in o["spec"]["template"]["spec"]["replicatedJobs"]
        ]
        return name_problems(plan, objects, hosts)


def trainer_role(plan: Plan) -> Role | None:
    """The role Trainer's `spec.trainer` describes: the Workers, where the job has any."""
    workers = plan.workers()
    return workers if workers is not None and workers.replicas > 0 else None


def _trainer_step(
    plan: Plan, trainer: Role, replicated: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """The replicated Jobs with the trainer's labelled as Trainer's trainer step and its main
    container named `node` (copies: the parts may be shared with other objects)."""
    out = []
    diagnostics: list[Diagnostic] = []
    for entry in replicated:
        if entry["name"] != NODE:
            out.append(entry)
            continue
        job = dict(entry["template"]["spec"])
        pod, found = _node_container(plan, trainer, job["template"])
        diagnostics.extend(found)
        job["template"] = pod
        policy = job.get("podFailurePolicy")
        if policy is not None:
            job["podFailurePolicy"] = _rename_in_failure_policy(policy, plan.main_container)
        metadata = {"labels": {ANCESTOR_LABEL: TRAINER_STEP}}
        out.append({**entry, "template": {**entry["template"], "metadata": metadata, "spec": job}})
    return out, diagnostics


def _labelled(entry: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """The replicated Job with `labels` on its template's metadata (a copy): the JobSet
    controller gives its Jobs those labels, and none of the JobSet's own."""
    template = entry["template"]
    metadata = dict(template.get("metadata") or {})
    metadata["labels"] = {**labels, **(metadata.get("labels") or {})}
    return {**entry, "template": {**template, "metadata": metadata}}


def _node_container(
    plan: Plan, role: Role, pod: dict[str, Any]
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The pod template with its main container named `node`, and every reference to the main
    container by name (resource fields through the downward API, kubectl's default-container
    annotations) following it."""
    main = plan.main_container
    spec = pod["spec"]
    for kind in ("containers", "initContainers"):
        for i, container in enumerate(spec.get(kind) or []):
            if container.get("name") == NODE and NODE != main:
                return pod, [
                    plan.document.diagnostic(
                        role.path + ("template", "spec", kind, i, "name"),
                        f"container name {NODE!r} is taken: with target trainjob the "
                        f"{role.replica_type} pods are Trainer's trainer step, whose container "
                        f"{main!r} Trainer requires to be named {NODE!r}; accepted: another "
                        "name for this container",
                    )
                ]
    spec = dict(spec)
    for kind in ("containers", "initContainers"):
        if kind in spec:
            spec[kind] = [_renamed_container(c, main) for c in spec[kind]]
    if "volumes" in spec:
        spec["volumes"] = [_renamed_volume(v, main) for v in spec["volumes"]]
    metadata = dict(pod.get("metadata") or {})
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict) and any(annotations.get(k) == main for k in DEFAULT_CONTAINER_ANNOTATIONS):
        metadata["annotations"] = {
            k: (NODE if k in DEFAULT_CONTAINER_ANNOTATIONS and v == main else v) for k, v in annotations.items()
        }
    return {**pod, "metadata": metadata, "spec": spec}, []


def _renamed_container(container: dict[str, Any], main: str) -> dict[str, Any]:
    out = dict(container)
    if out.get("name") == main:
        out["name"] = NODE
    if "env" in out:
        out["env"] = [_renamed_env(e, main) for e in out["env"]]
    return out


def _renamed_env(entry: dict[str, Any], main: str) -> dict[str, Any]:
    source = entry.get("valueFrom")
    if not isinstance(source, dict):
        return entry
    field = source.get("resourceFieldRef")
    if not isinstance(field, dict) or field.get("containerName") != main:
        return entry
    return {**entry, "valueFrom": {**source, "resourceFieldRef": {**field, "containerName": NODE}}}


def _renamed_items(items: Any, main: str) -> Any:
    if not isinstance(items, list):
        return items
    out = []
    for item in items:
        field = item.get("resourceFieldRef") if isinstance(item, dict) else None
        if isinstance(field, dict) and field.get("containerName") == main:
            item = {**item, "resourceFieldRef": {**field, "containerName": NODE}}
        out.append(item)
    return out


def _renamed_volume(volume: dict[str, Any], main: str) -> dict[str, Any]:
    downward = volume.get("downwardAPI")
    if isinstance(downward, dict) and "items" in downward:
        volume = {**volume, "downwardAPI": {**downward, "items": _renamed_items(downward["items"], main)}}
    projected = volume.get("projected")
    if isinstance(projected, dict) and isinstance(projected.get("sources"), list):
        sources = []
        for source in projected["sources"]:
            inner = source.get("downwardAPI") if isinstance(source, dict) else None
            if isinstance(inner, dict) and "items" in inner:
                source = {**source, "downwardAPI": {**inner, "items": _renamed_items(inner["items"], main)}}
            sources.append(source)
        volume = {**volume, "projected": {**projected, "sources": sources}}
    return volume


def _rename_in_failure_policy(policy: dict[str, Any], main: str) -> dict[str, Any]:
    rules = []
    for rule in policy["rules"]:
        codes = rule.get("onExitCodes")
        if codes is not None and codes.get("containerName") == main:
            rule = {**rule, "onExitCodes": {**codes, "containerName": NODE}}
        rules.append(rule)
    return {**policy, "rules": rules}


def _pod_group_policy(
    plan: Plan, options: Options, group: dict[str, Any], diagnostics: list[Diagnostic]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Trainer's `podGroupPolicy` for the PodGroup msgen would have made, the template
    annotations it reads, and a warning for what its PodGroup cannot say (it waits for every
    pod and sums their requests itself)."""
    chosen = scheduling.policy(plan)
    where = plan.run_policy.path + ("schedulingPolicy",)
    every_pod = sum(role.replicas for role in plan.roles)
    if group["spec"]["minMember"] != every_pod:
        diagnostics.append(
            warn(
                plan,
                where + ("minAvailable",),
                f"{group['spec']['minMember']} is not expressed by target trainjob: "
                f"the PodGroup Trainer makes waits for every pod of the job ({every_pod})",
            )
        )
    if chosen.min_resources is not None:
        diagnostics.append(
            warn(
                plan,
                where + ("minResources",),
                "not expressed by target trainjob: the PodGroup Trainer makes "
                "sums the pods' requests itself",
            )
        )
    if options.gang_scheduler == "volcano":
        queue = group["spec"].get("queue")
        return {"volcano": {}}, ({VOLCANO_QUEUE_ANNOTATION: queue} if queue else {})
    return {"coscheduling": {}}, {}


def _digest(content: dict[str, Any]) -> str:
    """A short digest of the runtime's content: its name changes whenever it does."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


TARGET: Target = TrainJobTarget()
