"""msgen.targets.trainjob: a Kubeflow Trainer TrainJob and the TrainingRuntime it runs.

What Trainer's controller, webhook and SDK read (kubeflow/trainer v2.3: the runtime's
framework label, the trainer step's ancestor label, its `node` replicated Job and container,
`numNodes`), the runtime named after its content, the gang and queue mapped onto Trainer's
`podGroupPolicy` and Kueue's label, and how `msgen status` judges a TrainJob, from plain data.
The golden cases show every sample; the schema tests validate every output against Trainer's
CRDs at every minor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen import targets
from msgen.model import run_policy
from msgen.model.plan import Options
from msgen.reconcile import status
from msgen.targets import trainjob
from msgen.targets.labels import APP_NAME, JOB_NAME, MANAGED_BY
from msgen.targets.trainjob import ANCESTOR_LABEL, FRAMEWORK_LABEL, NODE, TARGET

from .conftest import GOLDEN, ROOT, msgen
from .kube_schemas import crd_errors
from .plugin_plans import (
    addresses,
    job,
    plan,
    pod_templates,
    raw_pods,
    render,
    workloads,
)
from .test_target_plugins import check_facts


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


def replicated_jobs(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    runtime = one(objects, "TrainingRuntime")
    return {r["name"]: r for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]}


def containers(replicated: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in replicated["template"]["spec"]["template"]["spec"]["containers"]}


def test_it_is_the_registered_target() -> None:
    assert targets.lookup("trainjob") is TARGET


def test_facts_are_true_of_what_it_renders() -> None:
    check_facts(TARGET)


def test_renders_a_trainjob_and_the_runtime_it_refers_to() -> None:
    objects, diagnostics = render(plan(), "trainjob")
    assert [d.message for d in diagnostics] == []
    assert [o["kind"] for o in objects] == ["Service", "TrainingRuntime", "TrainJob"]
    (made,) = workloads(objects)
    runtime = one(objects, "TrainingRuntime")
    assert made["metadata"]["name"] == "tiny"
    assert made["spec"] == {
        "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": runtime["metadata"]["name"]},
        "trainer": {"numNodes": 2},
    }
    assert run_policy.ANNOTATION in made["metadata"]["annotations"]
    assert run_policy.ANNOTATION not in (runtime["metadata"].get("annotations") or {})
    assert runtime["metadata"]["labels"][FRAMEWORK_LABEL] == "mindspore"
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 2}
    rjobs = replicated_jobs(objects)
    assert list(rjobs) == ["scheduler", NODE]
    node, scheduler = rjobs[NODE], rjobs["scheduler"]
    # Trainer's trainer step: labelled, one replica, a container named node, Trainer's count.
    assert node["template"]["metadata"] == {"labels": {**OURS, ANCESTOR_LABEL: "trainer"}}
    assert node["replicas"] == 1 and node["template"]["spec"]["parallelism"] == 2
    assert list(containers(node)) == [NODE]
    assert list(containers(scheduler)) == ["mindspore"]
    assert scheduler["template"]["metadata"] == {"labels": OURS}
    assert runtime["spec"]["template"]["metadata"] == {"labels": OURS}
    # The JobSet spec is the jobset target's, with the Workers' replicated Job renamed.
    spec = runtime["spec"]["template"]["spec"]
    assert spec["successPolicy"] == {"operator": "All", "targetReplicatedJobs": [NODE]}
    assert node["dependsOn"] == [{"name": "scheduler", "status": "Ready"}]
    assert spec["network"] == {"enableDNSHostnames": True, "subdomain": "tiny"}
    env = {e["name"]: e for e in containers(node)[NODE]["env"]}
    assert env["MS_ROLE"]["value"] == "MS_WORKER" and env["MS_WORKER_NUM"]["value"] == "2"
    labels = node["template"]["spec"]["template"]["metadata"]["labels"]
    assert labels["training.kubeflow.org/replica-type"] == "worker"
    assert TARGET.check_names(plan(), objects) == []


#: msgen's labels, which `msgen controller` watches and groups a job's objects by.
OURS = {MANAGED_BY: "msgen", APP_NAME: "tiny", JOB_NAME: "tiny"}


def test_the_jobset_and_jobs_trainer_builds_carry_msgens_labels_and_only_those() -> None:
    """Trainer copies the runtime template's metadata onto the JobSet, the JobSet controller
    each replicated Job's template metadata onto its Jobs (neither copies the TrainJob's
    labels): msgen's own labels go there, the job's own (a Kueue queue: Kueue admits the
    TrainJob) do not."""
    labelled = job().replace("metadata:\n  name: tiny\n",
                             "metadata:\n  name: tiny\n  labels: {team: a, kueue.x-k8s.io/queue-name: q}\n")
    assert labelled != job()
    objects, _ = render(plan(labelled), "trainjob")
    runtime = one(objects, "TrainingRuntime")
    assert runtime["spec"]["template"]["metadata"] == {"labels": OURS}
    for replicated in replicated_jobs(objects).values():
        assert {k: v for k, v in replicated["template"]["metadata"]["labels"].items() if k != ANCESTOR_LABEL} == OURS
    assert one(objects, "TrainJob")["metadata"]["labels"]["team"] == "a"


def test_names_pods_as_the_jobset_trainer_builds_names_them() -> None:
    made = plan()
    naming = TARGET.naming(made, Options(target="trainjob"))
    worker, scheduler = made.role("Worker"), made.role("Scheduler")
    assert worker is not None and scheduler is not None
    assert naming.hostname(worker, 1) == "tiny-node-0-1"
    assert naming.hostname(scheduler, 0) == "tiny-scheduler-0-0"
    objects, _ = render(made, "trainjob", scheduler_address="dns")
    env = {e["name"]: e for e in containers(replicated_jobs(objects)[NODE])[NODE]["env"]}
    assert env["MS_SCHED_HOST"]["value"] == "tiny-scheduler-0-0.tiny"


def test_the_runtime_is_named_after_its_content() -> None:
    """A changed job is a new runtime, never an edit of the one a running TrainJob used."""
    first, _ = render(plan(), "trainjob")
    again, _ = render(plan(), "trainjob")
    changed, _ = render(plan(job().replace("2.2.14", "2.3.0")), "trainjob")
    names = [one(o, "TrainingRuntime")["metadata"]["name"] for o in (first, again, changed)]
    assert names[0] == names[1] != names[2]
    assert all(n.startswith("tiny-") and len(n) == len("tiny-") + trainjob.DIGEST_LENGTH for n in names)
    assert one(changed, "TrainJob")["spec"]["runtimeRef"]["name"] == names[2]
    assert one(first, "TrainJob")["metadata"]["name"] == one(changed, "TrainJob")["metadata"]["name"] == "tiny"


REFERENCES = job(restart_policy="ExitCode").replace(
    "              command: [python, train.py]\n",
    "              command: [python, train.py]\n"
    "              env:\n"
    "                - name: CPUS\n"
    "                  valueFrom: {resourceFieldRef: {containerName: mindspore, resource: limits.cpu}}\n"
    "          volumes:\n"
    "            - name: limits\n"
    "              downwardAPI:\n"
    "                items: [{path: cpu, resourceFieldRef: {containerName: mindspore, resource: limits.cpu}}]\n",
).replace(
    "      template:\n        spec:\n",
    "      template:\n        metadata:\n          annotations: {kubectl.kubernetes.io/default-container: mindspore}\n"
    "        spec:\n",
)


def test_what_names_the_main_container_follows_it_to_node() -> None:
    objects, diagnostics = render(plan(REFERENCES), "trainjob")
    assert [d.message for d in diagnostics if d.severity.name == "ERROR"] == []
    rjobs = replicated_jobs(objects)
    node, scheduler = rjobs[NODE]["template"]["spec"], rjobs["scheduler"]["template"]["spec"]
    pod = node["template"]
    env = {e["name"]: e for e in containers(rjobs[NODE])[NODE]["env"]}
    assert env["CPUS"]["valueFrom"]["resourceFieldRef"]["containerName"] == NODE
    (volume,) = [v for v in pod["spec"]["volumes"] if v["name"] == "limits"]
    assert volume["downwardAPI"]["items"][0]["resourceFieldRef"]["containerName"] == NODE
    assert pod["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] == NODE
    rules = node["podFailurePolicy"]["rules"]
    assert [r["onExitCodes"]["containerName"] for r in rules if "onExitCodes" in r] == [NODE]
    # The other roles keep the container's own name everywhere.
    pod = scheduler["template"]
    assert pod["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] == "mindspore"
    (volume,) = [v for v in pod["spec"]["volumes"] if v["name"] == "limits"]
    assert volume["downwardAPI"]["items"][0]["resourceFieldRef"]["containerName"] == "mindspore"


def test_a_container_already_named_node_is_an_error_at_its_name(tmp_path: Path) -> None:
    text = job().replace(
        "              command: [python, train.py]\n",
        "              command: [python, train.py]\n            - name: node\n              image: sidecar:1\n",
    )
    path = tmp_path / "job.yaml"
    path.write_text(text)
    run = msgen("render", str(path), "--target", "trainjob")
    assert run.exit_code == 1 and run.stdout == ""
    line = text.splitlines().index("            - name: node", 20) + 1  # the Worker's sidecar
    assert f"job.yaml:{line}:21: error: spec.msReplicaSpecs.Worker.template.spec.containers[1].name:" in run.stderr
    assert "container name 'node' is taken" in run.stderr and "accepted: another name" in run.stderr
    assert run.stderr.count(": error: ") == 1
    # Other targets take the same job.
    assert msgen("render", str(path), "--target", "jobset").exit_code == 0


GANG = job(run_policy="{schedulingPolicy: {queue: research, priorityClass: high}}")


@pytest.mark.parametrize(
    "scheduler,policy,annotations,pod_scheduler",
    [
        ("volcano", {"volcano": {}}, {trainjob.VOLCANO_QUEUE_ANNOTATION: "research"}, "volcano"),
        ("scheduler-plugins", {"coscheduling": {}}, None, "scheduler-plugins-scheduler"),
    ],
)
def test_gang_scheduling_is_trainers_pod_group_policy(
    scheduler: str, policy: dict[str, Any], annotations: dict[str, str] | None, pod_scheduler: str
) -> None:
    objects, diagnostics = render(plan(GANG), "trainjob", gang_scheduler=scheduler)
    assert "PodGroup" not in {o["kind"] for o in objects}  # Trainer makes it, named after the TrainJob
    runtime = one(objects, "TrainingRuntime")
    assert runtime["spec"]["podGroupPolicy"] == policy
    assert runtime["spec"]["template"].get("metadata", {}).get("annotations") == annotations
    for template in pod_templates(one(objects, "TrainJob"), objects):
        assert template["spec"]["schedulerName"] == pod_scheduler
        assert template["spec"]["priorityClassName"] == "high"
    warned = [d.message for d in diagnostics]
    if scheduler == "scheduler-plugins":
        assert any("has no queue" in m for m in warned), warned
    else:
        assert warned == []
    alone, _ = render(plan(GANG), "trainjob")
    assert "podGroupPolicy" not in one(alone, "TrainingRuntime")["spec"]


def test_what_trainers_pod_group_cannot_say_is_warned_at_its_line() -> None:
    text = job(run_policy="{schedulingPolicy: {minAvailable: 2, minResources: {cpu: 4}}}")
    objects, diagnostics = render(plan(text), "trainjob", gang_scheduler="volcano")
    found = {d.field_path: d.message for d in diagnostics}
    assert "waits for every pod of the job (3)" in found["spec.runPolicy.schedulingPolicy.minAvailable"]
    assert "sums the pods' requests itself" in found["spec.runPolicy.schedulingPolicy.minResources"]
    assert all(d.severity.name == "WARNING" for d in diagnostics)
    whole = job(run_policy="{schedulingPolicy: {minAvailable: 3}}")
    assert render(plan(whole), "trainjob", gang_scheduler="volcano")[1] == []


def test_kueue_admits_the_trainjob_not_its_parts() -> None:
    objects, diagnostics = render(plan(), "trainjob", kueue_queue="team-a")
    assert diagnostics == []
    assert one(objects, "TrainJob")["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert "suspend" not in one(objects, "TrainJob")["spec"]  # Kueue's webhook suspends it
    runtime = one(objects, "TrainingRuntime")
    assert "kueue" not in yaml.safe_dump(runtime)


#: A job with no Worker that msgen accepts (a Scheduler with no Worker is an error): PS only.
PS_ONLY = """apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {name: tiny}
spec:
  msReplicaSpecs:
    PS:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
            - {name: mindspore, image: mindspore/mindspore:2.2.14, command: [python, train.py]}
"""


def test_a_job_without_workers_has_no_trainer_step() -> None:
    objects, _ = render(plan(PS_ONLY), "trainjob")
    runtime = one(objects, "TrainingRuntime")
    assert FRAMEWORK_LABEL not in (runtime["metadata"].get("labels") or {})  # the SDK would refuse it
    assert "mlPolicy" not in runtime["spec"] and "trainer" not in one(objects, "TrainJob")["spec"]
    assert list(replicated_jobs(objects)) == ["ps"]


def test_the_ttl_is_not_put_on_the_jobset_trainer_would_build_again() -> None:
    """Trainer v2.3 removes a failed TrainJob's Failed condition on each pass and builds the
    JobSet of a TrainJob that has not finished: on the 3-node harness a failed job whose
    JobSet the TTL deleted ran again 20 s later. So the TTL is left out, and said so."""
    objects, diagnostics = render(plan(job(run_policy="{ttlSecondsAfterFinished: 60}")), "trainjob")
    runtime = one(objects, "TrainingRuntime")["spec"]["template"]["spec"]
    assert "ttlSecondsAfterFinished" not in runtime
    assert not any("ttlSecondsAfterFinished" in o.get("spec", {}) for o in objects)
    (warning,) = [d.message for d in diagnostics]
    assert "not supported by target trainjob" in warning and "builds it again" in warning


def test_trainers_crds_know_every_field_msgen_writes() -> None:
    """The strict CRD check the schema tests run can fail: a field Trainer's CRD lacks would be
    pruned by the API server without a word."""
    objects, _ = render(plan(), "trainjob")
    train_job = one(objects, "TrainJob")
    assert crd_errors(train_job) == []
    misspelt = {**train_job, "spec": {**train_job["spec"], "trainner": {"numNodes": 2}}}
    assert crd_errors(misspelt) == ["spec.trainner: unknown field"]
    runtime = one(objects, "TrainingRuntime")
    assert crd_errors(runtime) == []
    deep = yaml.safe_load(yaml.safe_dump(runtime))
    deep["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"][0]["nmae"] = "x"
    assert any(e.endswith(".containers.0.nmae: unknown field") for e in crd_errors(deep))


def _golden_outputs() -> list[Path]:
    return sorted(p for p in GOLDEN.glob("*.trainjob*/expected.yaml"))


@pytest.mark.parametrize("path", _golden_outputs(), ids=lambda p: p.parent.name)
def test_every_output_meets_trainers_webhook_and_sdk(path: Path) -> None:
    """Every golden output as Trainer's webhook and controller and its SDK read it: the runtime
    the TrainJob names is there; a trainer step has one replica, a `node` container and the
    count Trainer writes into it; a labelled runtime has the mlPolicy and image the SDK needs."""
    objects = [o for o in yaml.safe_load_all(path.read_text()) if o]
    sample = yaml.safe_load((path.parent / "case.yaml").read_text())["sample"]
    annotations = (yaml.safe_load((ROOT / sample).read_text())["metadata"].get("annotations") or {})
    if annotations.get("msgen/target", "trainjob") != "trainjob":
        pytest.skip(f"{sample} chooses target {annotations['msgen/target']} in its own annotation")
    train_job, runtime = one(objects, "TrainJob"), one(objects, "TrainingRuntime")
    assert train_job["spec"]["runtimeRef"]["name"] == runtime["metadata"]["name"]
    assert runtime["metadata"].get("namespace") == train_job["metadata"].get("namespace")
    steps = [r for r in runtime["spec"]["template"]["spec"]["replicatedJobs"]
             if ANCESTOR_LABEL in (r["template"].get("metadata") or {}).get("labels", {})]
    assert [r["name"] for r in steps] == [NODE]
    (step,) = steps
    assert step["replicas"] == 1 and containers(step)[NODE]["image"]
    nodes = step["template"]["spec"]["parallelism"]
    assert runtime["spec"]["mlPolicy"]["numNodes"] == train_job["spec"]["trainer"]["numNodes"] == nodes
    assert runtime["metadata"]["labels"][FRAMEWORK_LABEL] in ("mindspore", "mxnet", "caffe2")


def test_every_sample_has_a_trainjob_golden_case() -> None:
    samples = sorted((ROOT / "samples").rglob("*.yaml"))
    cases = {p.name.split(".trainjob")[0] for p in GOLDEN.glob("*.trainjob*")}
    assert {s.relative_to(ROOT / "samples").with_suffix("").as_posix().replace("/", "__") for s in samples} <= cases


# `msgen status` and `apply --wait`: a TrainJob's conditions are the job's end (pure data).

POLICY = run_policy.JobPolicy(
    job="tiny", target="trainjob",
    roles={"Scheduler": run_policy.RoleRule(1, "Never"), "Worker": run_policy.RoleRule(2, "OnFailure")},
)


def _train_job(*conditions: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "tiny", "creationTimestamp": "2026-11-24T08:00:00Z"},
        "status": {"conditions": [{"lastTransitionTime": "2026-11-24T08:40:00Z", **c} for c in conditions]},
    }


def _pod(role: str, index: int, phase: str) -> dict[str, Any]:
    labels = {"training.kubeflow.org/job-name": "tiny", "training.kubeflow.org/replica-type": role}
    annotations = {"batch.kubernetes.io/job-completion-index": str(index)}
    return {"apiVersion": "v1", "kind": "Pod", "status": {"phase": phase},
            "metadata": {"name": f"tiny-{role}-{index}", "labels": labels, "annotations": annotations}}


WORKER_0_DONE = [_pod("scheduler", 0, "Running"), _pod("worker", 0, "Succeeded"), _pod("worker", 1, "Running")]


def test_a_trainjob_that_has_not_ended_is_not_judged_from_its_pods() -> None:
    """Worker 0 succeeded, but the TrainJob has not said Complete: the job still runs (Trainer
    may still fail it), as `kubectl wait --for=condition=Complete trainjob/tiny` would say."""
    found = status.aggregate(POLICY, [_train_job()], WORKER_0_DONE)
    assert found.phase == "Running" and not found.finished
    suspended = _train_job({"type": "Suspended", "status": "True", "reason": "Suspended", "message": "TrainJob is suspended"})
    assert status.aggregate(POLICY, [suspended], []).phase == "Created"


def test_complete_is_success() -> None:
    done = _train_job({"type": "Complete", "status": "True", "reason": "AllJobsCompleted",
                       "message": "jobset completed successfully"})
    found = status.aggregate(POLICY, [done], WORKER_0_DONE)
    assert (found.phase, found.conditions[-1].reason) == ("Succeeded", "JobSucceeded")
    assert found.conditions[-1].message == "TrainJob tiny completed"
    assert found.completion_time == "2026-11-24T08:40:00Z"
    # Its JobSet deleted at its TTL, pods and all: the TrainJob still says so.
    assert status.aggregate(POLICY, [done], []).phase == "Succeeded"


@pytest.mark.parametrize(
    "reason,message",
    [("FailedJobs", "jobset failed due to one or more job failures (first failed job: tiny-node-0)"),
     ("DeadlineExceeded", "TrainJob exceeded its active deadline")],
)
def test_failed_is_failure_with_trainers_reason(reason: str, message: str) -> None:
    failed = _train_job({"type": "Failed", "status": "True", "reason": reason, "message": message})
    found = status.aggregate(POLICY, [failed], WORKER_0_DONE)
    assert (found.phase, found.conditions[-1].reason, found.conditions[-1].message) == ("Failed", reason, message)
    resumed = _train_job({"type": "Suspended", "status": "False", "reason": "Resumed", "message": "TrainJob is resumed"},
                         {"type": "Failed", "status": "False", "reason": reason, "message": message})
    assert not status.aggregate(POLICY, [resumed], WORKER_0_DONE).finished


def test_its_entry_points_on_a_tiny_job() -> None:
    """`naming` (a Worker's host name; whether pods read their index at run time), `slots`
    (one pod template per role or per replica), `render` (the objects), `check_names` (every
    derived name a DNS label, refused for a long job name)."""
    made, options = plan(), Options(target="trainjob")
    worker = made.role("Worker")
    assert worker is not None
    naming = trainjob.TARGET.naming(made, options)
    assert (naming.hostname(worker, 1), naming.dynamic_index is not None) == ('tiny-node-0-1', True)
    slots = trainjob.TARGET.slots(made)
    assert [(s.role.replica_type, s.index) for s in slots] == [('Scheduler', 0), ('Worker', None)]
    objects, _ = trainjob.TARGET.render(made, raw_pods(slots), addresses(made, "trainjob"), options)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [('Service', 'tiny-scheduler-0'), ('TrainingRuntime', 'tiny-35dfbe71'), ('TrainJob', 'tiny')]
    assert trainjob.TARGET.check_names(made, objects) == []
    long = plan(job(name="b" * 52))
    objects, _ = trainjob.TARGET.render(long, raw_pods(trainjob.TARGET.slots(long)), addresses(long, "trainjob"), options)
    assert [d.is_error for d in trainjob.TARGET.check_names(long, objects)][:1] == [True]
