"""An indexed-job's Job fails on its pods' failures as its controller will say, without
waiting for it (`retries.past_own_backoff_limit`).

The eleventh controller round (bench/README.md): a failed indexed-job's verdict and
cleanPodPolicy waited for Kubernetes' Job controller to write FailureTarget on the Worker Job,
2.3 s at the median on a loaded machine and a minute while the Job controller was behind
after an API server restart; every other verdict came within 1.4 s. A Job with backoffLimit 0,
no podFailurePolicy and restartPolicy Never fails on its first counted failure whatever else
happens (its controller judges the limit before its success policy); so does msgen now, in
the Job controller's words. Where anything else could decide the Job, msgen still waits.
"""

from __future__ import annotations

from typing import Any

import pytest

from msgen.reconcile import retries, status, watch

from .made_by_controllers import made, pod_status, pods_by_replica, rendered, workload_status


def _job(**change: Any) -> tuple[list[dict[str, Any]], dict[tuple[str, int], dict[str, Any]]]:
    """An indexed-job (a Scheduler and 3 Workers) running, its Jobs as their controller left
    them before it counted anything; `change` merged into the Worker Job's spec."""
    objects = rendered("indexed-job", clean="Running")
    children = made("indexed-job", objects)
    everything = [*objects, *children]
    for pod in pods_by_replica(everything).values():
        pod_status(pod, "running")
    for obj in everything:
        workload_status(obj, None)
    worker = next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "j-worker")
    worker["spec"].update(change)
    return everything, pods_by_replica(everything)


def _judged(everything: list[dict[str, Any]]) -> status.JobStatus:
    policy, workloads, pods = watch.select("j", "ns", everything)
    return status.aggregate(policy, workloads, pods)


def test_a_failed_worker_fails_the_job_before_its_job_says_so() -> None:
    everything, pods = _job()
    assert _judged(everything).phase == "Running"
    pod_status(pods[("worker", 1)], "failed")
    found = _judged(everything)
    assert found.phase == "Failed"
    assert (found.conditions[-1].reason, found.conditions[-1].message) == (
        retries.OWN_LIMIT_REASON, retries.OWN_LIMIT_MESSAGE)
    # Then its Job says the same: the verdict reads the same, from the Job's own condition.
    worker = next(o for o in everything if o["kind"] == "Job" and o["metadata"]["name"] == "j-worker")
    workload_status(worker, "failed")
    for condition in worker["status"]["conditions"]:  # in Kubernetes' words (job_controller.go)
        condition["message"] = "Job has reached the specified backoff limit"
    later = _judged(everything)
    assert later.phase == "Failed"
    assert (later.conditions[-1].reason, later.conditions[-1].message) == (
        (found.conditions[-1].reason, found.conditions[-1].message))
    assert [f.pod for f in later.failures] == [f.pod for f in found.failures]


@pytest.mark.parametrize(("why", "change", "how"), [
    ("a podFailurePolicy may ignore the failure", {"podFailurePolicy": {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}, "failed"),
    ("a per-index limit fails an index, not the Job", {"backoffLimitPerIndex": 0}, "failed"),
    ("one failure within backoffLimit 1", {"backoffLimit": 1}, "failed"),
    ("restartPolicy OnFailure restarts in place", {"template": "OnFailure"}, "failed"),
    ("suspended: its pods are removed, not counted", {"suspend": True}, "failed"),
    ("another controller runs it", {"managedBy": "kueue.x-k8s.io/multikueue"}, "failed"),
    ("a pod killed by a deletion is no failure", {}, "killed"),
])
def test_where_anything_else_could_decide_the_job_its_job_is_waited_for(
        why: str, change: dict[str, Any], how: str) -> None:
    restart = change.pop("template", None)
    everything, pods = _job(**change)
    if restart is not None:
        worker = next(o for o in everything if o["kind"] == "Job" and o["metadata"]["name"] == "j-worker")
        worker["spec"]["template"]["spec"]["restartPolicy"] = restart
    pod_status(pods[("worker", 1)], how)
    assert _judged(everything).phase == "Running", why


def test_a_success_the_pods_show_is_left_to_the_job() -> None:
    """Worker 0 succeeded and worker 1 failed: which came first is the Job controller's call
    (a SuccessCriteriaMet it wrote first stands), so its verdict is waited for."""
    everything, pods = _job()
    pod_status(pods[("worker", 0)], "succeeded")
    pod_status(pods[("worker", 1)], "failed")
    assert _judged(everything).phase == "Running"


def test_the_jobs_own_count_and_only_its_own_pods() -> None:
    everything, pods = _job(backoffLimit=1)
    worker = next(o for o in everything if o["kind"] == "Job" and o["metadata"]["name"] == "j-worker")
    pod_status(pods[("worker", 1)], "failed")
    assert _judged(everything).phase == "Running"
    worker["status"]["failed"] = 2  # a pod it replaced, counted and gone
    assert _judged(everything).phase == "Failed"
    worker["status"]["failed"] = 0
    # A failed pod this Job does not control (another Job's, a copy with a forged label) counts nothing.
    stranger = pods[("worker", 2)]
    stranger["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    pod_status(stranger, "failed")
    assert _judged(everything).phase == "Running"
    # Nor one that names the Job its controller without its selector's label: the Job
    # controller releases it uncounted.
    claimed = pods[("worker", 0)]
    for key in ("batch.kubernetes.io/controller-uid", "controller-uid"):
        claimed["metadata"]["labels"][key] = "someone-else"
    pod_status(claimed, "failed")
    assert retries.past_own_backoff_limit([worker], [claimed]) is None
    claimed["metadata"]["labels"].update({k: worker["metadata"]["uid"] for k in (
        "batch.kubernetes.io/controller-uid", "controller-uid")})
    worker["spec"]["backoffLimit"] = 0
    assert retries.past_own_backoff_limit([worker], [claimed]) is not None  # the same pod, selected
    worker["spec"]["backoffLimit"] = 1
    # A Job whose controller reached its end already is judged by that end.
    workload_status(worker, "succeeded")
    assert _judged(everything).phase == "Succeeded"
