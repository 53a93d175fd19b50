"""Run policies per target (contracts §1, §8), read from the rendered objects.

Success, failure and restart rules, gang scheduling and PodGroup sizing, priority and Kueue:
each test renders a job as a user would and checks what the cluster would be told, target by
target, and that what a target cannot express is reported at the policy's position.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from msgen.targets import NAMES as TARGETS
from msgen.targets import support

from .conftest import ROOT, msgen
from .test_mindspore_contract import pod_templates, role_of

JOB = """
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {name: pol}
spec:
  runPolicy: {}
  msReplicaSpecs:
    Scheduler:
      template: {spec: {containers: [{name: mindspore, image: ms, resources: {requests: {cpu: 500m, memory: 1Gi}}}]}}
    Worker:
      replicas: 3
      restartPolicy: RESTART
      template:
        spec:
          initContainers: [{name: fetch, image: busybox, resources: {requests: {cpu: "16"}}}]
          containers:
            - {name: mindspore, image: ms, resources: {requests: {cpu: "2", memory: 4Gi}, limits: {nvidia.com/gpu: 1}}}
            - {name: sidecar, image: s, resources: {requests: {cpu: 250m, memory: 512Mi}}}
"""


def job(restart: str = "Never", run_policy: str = "{}", extra: str = "") -> str:
    text = JOB.replace("RESTART", restart).replace("runPolicy: {}", f"runPolicy: {run_policy}")
    return text.replace("spec:\n  runPolicy", f"spec:\n{extra}  runPolicy") if extra else text


def render(text: str, *args: str) -> tuple[list[dict[str, Any]], str]:
    run = msgen("render", "-", *args, input=text)
    assert run.exit_code == 0, run.stderr
    return run.objects(), run.stderr


def one(objects: list[dict[str, Any]], kind: str, api: str | None = None) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and (api is None or o["apiVersion"] == api)]
    assert len(found) == 1, [o["kind"] for o in objects]
    return found[0]


def worker_job_spec(objects: list[dict[str, Any]], target: str) -> dict[str, Any]:
    if target == "jobset":
        rjobs = one(objects, "JobSet")["spec"]["replicatedJobs"]
        spec: dict[str, Any] = next(r for r in rjobs if r["name"] == "worker")["template"]["spec"]
        return spec
    return next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "pol-worker")["spec"]


def volcano_task(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    task: dict[str, Any] = next(
        t for t in one(objects, "Job", "batch.volcano.sh/v1alpha1")["spec"]["tasks"] if t["name"] == name
    )
    return task


# ---- success ---------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["indexed-job", "jobset"])
def test_default_success_is_worker_0_from_1_31(target: str) -> None:
    objects, _ = render(job(), "--target", target)
    assert worker_job_spec(objects, target)["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    objects, stderr = render(job(), "--target", target, "--kube-version", "1.30")
    assert "successPolicy" not in worker_job_spec(objects, target)
    assert f"successPolicy (default: worker 0) needs Kubernetes 1.31 or newer with target {target}" in stderr


def test_jobset_succeeds_with_the_worker_job_and_starts_the_scheduler_first() -> None:
    objects, _ = render(job(), "--target", "jobset")
    spec = one(objects, "JobSet")["spec"]
    assert spec["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["worker"]}
    scheduler, worker = spec["replicatedJobs"]
    assert scheduler["name"] == "scheduler" and "dependsOn" not in scheduler
    assert worker["dependsOn"] == [{"name": "scheduler", "status": "Ready"}]


def test_volcano_completes_with_the_workers_and_reports_worker_0() -> None:
    objects, stderr = render(job(), "--target", "volcano")
    assert {"action": "CompleteJob", "event": "TaskCompleted"} in volcano_task(objects, "worker")["policies"]
    assert all(p["event"] != "TaskCompleted" for p in volcano_task(objects, "scheduler")["policies"])
    assert "successPolicy (default: worker 0) needs `msgen apply --wait` or `msgen controller` with target volcano; when neither runs, the Volcano Job completes when every worker does" in stderr
    everyone = job(extra="  successPolicy: AllWorkers\n")
    assert "successPolicy" not in render(everyone, "--target", "volcano")[1]


def test_clean_pod_policy_none_says_which_running_pods_are_still_stopped() -> None:
    """ms-operator left every pod running when a job ended; Jobs and Volcano do not always."""
    text = job(run_policy="{cleanPodPolicy: None}")
    where = "<stdin>:6:31: warning: spec.runPolicy.cleanPodPolicy: None"
    objects, stderr = render(text, "--target", "volcano")
    worker = volcano_task(objects, "worker")["policies"]
    # Success leaves the other roles' pods running ...
    assert all(p["action"] != "CompleteJob" for p in worker)
    # ... but a failed pod terminates the Volcano Job, and with it every running pod.
    assert {"action": "TerminateJob", "event": "PodFailed"} in worker
    assert f"{where} is only partly expressed by target volcano: a failed pod of a Never" in stderr
    objects, stderr = render(text, "--target", "indexed-job")
    # A failed Job's pods are terminated by the Job controller, and so are a Job's lingering
    # pods once its successPolicy is met: worker 0 succeeding stops the other workers.
    assert worker_job_spec(objects, "indexed-job")["backoffLimit"] == 0
    assert worker_job_spec(objects, "indexed-job")["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    assert f"{where} is only partly expressed by target indexed-job: a role's Job that fails" in stderr
    for target in ("pod", "statefulset"):
        assert "cleanPodPolicy" not in render(text, "--target", target)[1], target
    _, stderr = render(text, "--target", "jobset")
    assert "spec.runPolicy.cleanPodPolicy: None is not supported by target jobset" in stderr


def test_readme_table_shows_partly_expressed_policies() -> None:
    row = next(line for line in support.markdown_table().splitlines() if "cleanPodPolicy: None" in line)
    assert row == "| `runPolicy.cleanPodPolicy: None` | partly | native | native | not supported | partly | not supported |"


@pytest.mark.parametrize("target,shown", [("indexed-job", "needs `msgen apply --wait` or `msgen controller`"), ("jobset", None), ("volcano", None)])
def test_clean_pod_policy_running(target: str, shown: str | None) -> None:
    _, stderr = render(job(run_policy="{cleanPodPolicy: Running}"), "--target", target)
    if shown is None:
        assert "cleanPodPolicy" not in stderr
    else:
        assert f"runPolicy.cleanPodPolicy: Running {shown} with target {target}" in stderr
        assert "<stdin>:6:31: warning: spec.runPolicy.cleanPodPolicy:" in stderr


# ---- failure and restart -----------------------------------------------------------------


@pytest.mark.parametrize("target", ["indexed-job", "jobset"])
def test_exit_code_is_a_pod_failure_policy_from_1_26(target: str) -> None:
    objects, _ = render(job("ExitCode"), "--target", target, "--kube-version", "1.26")
    spec = worker_job_spec(objects, target)
    ignore, fail = spec["podFailurePolicy"]["rules"]
    # status is required by Kubernetes' schema from 1.26 to 1.34, onPodConditions up to 1.28
    condition = {"type": "DisruptionTarget", "status": "True"}
    assert ignore == {"action": "Ignore", "onPodConditions": [condition]}
    assert fail["action"] == "FailJob" and fail["onExitCodes"]["values"] == list(range(1, 128))
    assert fail["onPodConditions"] == []
    for version in ("1.26", "1.28", "1.29", "1.34", "1.35"):
        kubernetes_validate.validate(
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": spec},
            version,
            strict=True,
        )
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    objects, stderr = render(job("ExitCode"), "--target", target, "--kube-version", "1.25")
    assert "podFailurePolicy" not in worker_job_spec(objects, target)
    assert "restartPolicy: ExitCode needs Kubernetes 1.26 or newer" in stderr


@pytest.mark.parametrize("target", ["pod", "statefulset", "volcano"])
def test_exit_code_is_reported_where_not_expressible(target: str) -> None:
    objects, stderr = render(job("ExitCode"), "--target", target)
    assert (
        "<stdin>:12:22: warning: spec.msReplicaSpecs.Worker.restartPolicy: "
        f"ExitCode is not supported by target {target}"
    ) in stderr
    workers = [t for _, t, _ in pod_templates(objects) if role_of(t) == "worker"]
    assert {t["spec"]["restartPolicy"] for t in workers} == {"Always" if target == "statefulset" else "Never"}


@pytest.mark.parametrize(
    "restart,job_value,volcano_value",
    [("Always", "OnFailure", "Always"), ("OnFailure", "OnFailure", "OnFailure"), ("Never", "Never", "Never")],
)
def test_restart_policy_per_target(restart: str, job_value: str, volcano_value: str) -> None:
    expected = {"indexed-job": job_value, "jobset": job_value, "trainjob": job_value, "pod": restart,
                "volcano": volcano_value, "statefulset": "Always"}
    for target in TARGETS:
        objects, stderr = render(job(restart), "--target", target)
        workers = [t for _, t, _ in pod_templates(objects) if role_of(t) == "worker"]
        assert {t["spec"]["restartPolicy"] for t in workers} == {expected[target]}, target
    _, stderr = render(job("Never"), "--target", "statefulset")
    assert "restartPolicy: Never is not supported by target statefulset: StatefulSet pods always restart" in stderr
    assert "restartPolicy: restartPolicy" not in stderr  # the path is said once


def test_backoff_limit_per_target() -> None:
    text = job(run_policy="{backoffLimit: 2}")
    for target in ("indexed-job", "jobset"):
        objects, _ = render(text, "--target", target)
        assert worker_job_spec(objects, target)["backoffLimit"] == 2
    objects, _ = render(text, "--target", "volcano")
    # Volcano fails a job whose restarts counted reach maxRetry as it restarts it: 2 retries
    # need maxRetry 3 (seen on Volcano v1.14: maxRetry 1 failed the job at its first failure).
    assert one(objects, "Job", "batch.volcano.sh/v1alpha1")["spec"]["maxRetry"] == 3
    assert {"action": "RestartJob", "event": "PodFailed"} in volcano_task(objects, "worker")["policies"]
    # Without a backoffLimit a failed pod fails the job at once, as with ms-operator.
    objects, _ = render(job(), "--target", "volcano")
    assert {"action": "TerminateJob", "event": "PodFailed"} in volcano_task(objects, "worker")["policies"]
    objects, _ = render(job(), "--target", "indexed-job")
    assert worker_job_spec(objects, "indexed-job")["backoffLimit"] == 0
    # The largest backoffLimit stays within maxRetry's int32.
    objects, _ = render(job(run_policy="{backoffLimit: 2147483647}"), "--target", "volcano")
    assert one(objects, "Job", "batch.volcano.sh/v1alpha1")["spec"]["maxRetry"] == 2147483647
    for target in ("pod", "statefulset"):  # a Scheduler and Workers: counted over both roles
        assert f"runPolicy.backoffLimit: a limit shared by several roles is not supported by target {target}" in render(text, "--target", target)[1]


INT32_MAX = 2147483647


@pytest.mark.parametrize("restart", ["OnFailure", "Always"])
def test_restarting_roles_restart_without_limit_when_no_backoff_limit_is_set(restart: str) -> None:
    """The operators counted no restarts without a backoffLimit; a Job stops after 6."""
    for target in ("indexed-job", "jobset"):
        objects, _ = render(job(restart), "--target", target)
        spec = worker_job_spec(objects, target)
        assert spec["backoffLimit"] == INT32_MAX, target
        assert spec["template"]["spec"]["restartPolicy"] == "OnFailure"
        kubernetes_validate.validate(
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": spec}, "1.37", strict=True
        )
    # The kubelet restarts these pods in place, without limit, and nothing caps it.
    objects, _ = render(job(restart), "--target", "volcano")
    worker = volcano_task(objects, "worker")
    assert worker["template"]["spec"]["restartPolicy"] == restart
    assert all(p["event"] != "PodFailed" for p in worker["policies"])
    assert "maxRetry" not in one(objects, "Job", "batch.volcano.sh/v1alpha1")["spec"]
    for target, expected in (("pod", restart), ("statefulset", "Always")):
        objects, _ = render(job(restart), "--target", target)
        workers = [t for _, t, _ in pod_templates(objects) if role_of(t) == "worker"]
        assert {t["spec"]["restartPolicy"] for t in workers} == {expected}, target
    # A backoffLimit the job sets is the limit.
    objects, _ = render(job(restart, "{backoffLimit: 3}"), "--target", "indexed-job")
    assert worker_job_spec(objects, "indexed-job")["backoffLimit"] == 3


@pytest.mark.parametrize("target", ["indexed-job", "jobset"])
def test_exit_code_retries_signals_without_limit_when_no_backoff_limit_is_set(target: str) -> None:
    objects, _ = render(job("ExitCode"), "--target", target, "--kube-version", "1.26")
    spec = worker_job_spec(objects, target)
    assert spec["backoffLimit"] == INT32_MAX
    assert spec["podFailurePolicy"]["rules"][1]["action"] == "FailJob"  # 1-127 still fail at once
    objects, _ = render(job("ExitCode", "{backoffLimit: 4}"), "--target", target, "--kube-version", "1.26")
    assert worker_job_spec(objects, target)["backoffLimit"] == 4
    # Before 1.26 the pods run as Never without a failure policy: no unlimited retries then.
    objects, stderr = render(job("ExitCode"), "--target", target, "--kube-version", "1.25")
    assert "backoffLimit" not in worker_job_spec(objects, target)
    assert "restartPolicy: ExitCode needs Kubernetes 1.26 or newer" in stderr


def test_deadline_and_ttl_per_target() -> None:
    text = job(run_policy="{activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 60}")
    objects, _ = render(text, "--target", "jobset")
    jobset = one(objects, "JobSet")["spec"]
    assert jobset["ttlSecondsAfterFinished"] == 60
    assert all(r["template"]["spec"]["activeDeadlineSeconds"] == 600 for r in jobset["replicatedJobs"])
    objects, _ = render(text, "--target", "volcano")
    assert one(objects, "Job", "batch.volcano.sh/v1alpha1")["spec"]["ttlSecondsAfterFinished"] == 60
    assert all(t["spec"]["activeDeadlineSeconds"] == 600 for _, t, _ in pod_templates(objects))


@pytest.mark.parametrize("target", ["indexed-job", "jobset"])
def test_dynamic_workers_fail_only_their_own_index(target: str) -> None:
    text = job("ExitCode", "{backoffLimit: 2}", extra="  enableDynamicWorker: true\n")
    spec = worker_job_spec(render(text, "--target", target)[0], target)
    assert spec["backoffLimitPerIndex"] == 2 and "backoffLimit" not in spec
    assert spec["podFailurePolicy"]["rules"][1]["action"] == "FailIndex"
    objects, stderr = render(text, "--target", target, "--kube-version", "1.28")
    assert "backoffLimitPerIndex" not in worker_job_spec(objects, target)
    assert "spec.enableDynamicWorker: needs Kubernetes 1.29 or newer" in stderr
    _, stderr = render(job("OnFailure", extra="  enableDynamicWorker: true\n"), "--target", target)
    assert "enableDynamicWorker needs the Worker restartPolicy Never or ExitCode" in stderr


def test_dynamic_workers_on_volcano_do_not_end_the_job() -> None:
    objects, _ = render(job(extra="  enableDynamicWorker: true\n"), "--target", "volcano")
    assert all(p["event"] != "PodFailed" for p in volcano_task(objects, "worker")["policies"])
    assert {"action": "TerminateJob", "event": "PodFailed"} in volcano_task(objects, "scheduler")["policies"]


# ---- gang scheduling, priority, Kueue ------------------------------------------------------------


@pytest.mark.parametrize("target", ["indexed-job", "pod", "statefulset", "jobset"])
def test_volcano_pod_group_is_sized_from_the_pods(target: str) -> None:
    objects, _ = render(job(), "--target", target, "--gang-scheduler", "volcano")
    group = one(objects, "PodGroup")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["metadata"]["name"] == "pol"
    # Every pod: 1 scheduler + 3 workers. A worker reserves its larger init container's CPU
    # (16 > 2 + 0.25) and its containers' memory; requests default to limits (the GPU).
    assert group["spec"] == {
        "minMember": 4,
        "minResources": {"cpu": "48500m", "memory": "14848Mi", "nvidia.com/gpu": "3"},
    }
    for _, template, _ in pod_templates(objects):
        assert template["spec"]["schedulerName"] == "volcano"
        assert template["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "pol"


def test_scheduling_policy_sets_min_member_queue_priority_and_resources() -> None:
    policy = "{schedulingPolicy: {minAvailable: 2, queue: q1, priorityClass: urgent, minResources: {cpu: '10'}}}"
    objects, _ = render(job(run_policy=policy), "--gang-scheduler", "volcano")
    assert one(objects, "PodGroup")["spec"] == {
        "minMember": 2, "minResources": {"cpu": "10"}, "queue": "q1", "priorityClassName": "urgent",
    }
    for target in TARGETS:
        objects, _ = render(job(run_policy=policy), "--target", target)
        assert {t["spec"]["priorityClassName"] for _, t, _ in pod_templates(objects)} == {"urgent"}, target


def test_scheduler_plugins_pod_group() -> None:
    policy = "{schedulingPolicy: {queue: q1}}"
    objects, stderr = render(job(run_policy=policy), "--gang-scheduler", "scheduler-plugins")
    group = one(objects, "PodGroup")
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert group["spec"]["minMember"] == 4 and "queue" not in group["spec"]
    assert "a scheduler-plugins PodGroup has no queue" in stderr
    for _, template, _ in pod_templates(objects):
        assert template["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "pol"
        assert template["spec"]["schedulerName"] == "scheduler-plugins-scheduler"


def test_scheduling_policy_without_a_gang_scheduler_is_reported() -> None:
    objects, stderr = render(job(run_policy="{schedulingPolicy: {minAvailable: 2}}"))
    assert not [o for o in objects if o["kind"] == "PodGroup"]
    assert "pass --gang-scheduler volcano, scheduler-plugins or kubernetes" in stderr


def test_volcano_job_is_its_own_gang() -> None:
    policy = "{schedulingPolicy: {minAvailable: 2, queue: q1, priorityClass: urgent}}"
    objects, _ = render(job(run_policy=policy), "--target", "volcano", "--gang-scheduler", "volcano")
    assert not [o for o in objects if o["kind"] == "PodGroup"]
    spec = one(objects, "Job", "batch.volcano.sh/v1alpha1")["spec"]
    assert (spec["minAvailable"], spec["queue"], spec["priorityClassName"], spec["schedulerName"]) == (2, "q1", "urgent", "volcano")
    default, _ = render(job(), "--target", "volcano")
    assert one(default, "Job", "batch.volcano.sh/v1alpha1")["spec"]["minAvailable"] == 4


@pytest.mark.parametrize("target", ["indexed-job", "jobset", "statefulset", "pod"])
def test_kueue_labels_the_workloads_and_leaves_suspending_to_kueue(target: str) -> None:
    """Kueue's webhook suspends a labelled Job or JobSet at creation (jobframework
    ApplyDefaultForSuspend); a rendered `suspend: true` would be put back by every GitOps
    sync after Kueue admitted the job, stopping its pods."""
    objects, _ = render(job(), "--target", target, "--kueue-queue", "team-a")
    workloads = [o for o in objects if o["kind"] not in ("Service", "PodGroup")]
    assert workloads
    for workload in workloads:
        assert workload["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
        assert "suspend" not in workload["spec"]
        if workload["kind"] == "Pod":
            assert workload["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] == "pol"
            assert workload["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] == "4"


def test_kueue_from_a_job_annotation_and_its_limits() -> None:
    text = job().replace("metadata: {name: pol}", "metadata: {name: pol, annotations: {msgen/kueue-queue: q}}")
    objects, stderr = render(text, "--target", "indexed-job")
    assert all(o["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "q" for o in objects if o["kind"] == "Job")
    assert "Kueue admits each role's Job on its own" in stderr
    _, stderr = render(text, "--target", "volcano")
    assert "--kueue-queue is not supported by target volcano" in stderr
    bad = msgen("render", "-", "--kueue-queue", "Not_A_Name", input=job())
    assert bad.exit_code == 2 and bad.stdout == ""


# ---- the documentation's table (docs/targets.md, Policies per target) --------------------


def test_the_documented_table_is_the_one_the_code_follows() -> None:
    assert support.markdown_table() in (ROOT / "docs" / "targets.md").read_text()


def test_every_target_has_a_cell_for_every_policy() -> None:
    for row, cells in support.table().items():
        assert set(cells) == set(TARGETS), row
