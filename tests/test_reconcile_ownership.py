"""The reconciler acts only on a job's own pods, whatever labels another tenant's pods carry.

In a namespace several teams share, anyone who may create a pod can give it the three
`training.kubeflow.org/*` labels of another job's worker 0 and a Succeeded phase. Such a pod
must not change that job's verdict, nor make the controller delete the job's running pods.
Plain data, shaped as the API server returns it; the same forgery against a real cluster and
the controller is at the end (it needs MSGEN_TEST_KUBECONFIG).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from msgen.model import run_policy
from msgen.reconcile import actions, ownership, status, watch

from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen
from .test_reconcile_decisions import NOW

JOB = "j"
LABELS = "training.kubeflow.org"


def policy_text(target: str, clean: str = "Running") -> str:
    return json.dumps({"cleanPodPolicy": clean, "job": JOB, "target": target, "successPolicy": "Worker0",
                       "roles": {"Scheduler": {"replicas": 1, "restartPolicy": "Never"},
                                 "Worker": {"replicas": 2, "restartPolicy": "Never"}}},
                      sort_keys=True, separators=(",", ":"))  # fmt: skip


def pod(name: str, role: str, index: int, phase: str, *, owner: dict[str, Any] | None = None,
        annotation: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name, "namespace": "shared", "uid": f"uid-{name}",
        "labels": {f"{LABELS}/job-name": JOB, f"{LABELS}/replica-type": role.lower(),
                   f"{LABELS}/replica-index": str(index)},
    }  # fmt: skip
    if owner is not None and owner["kind"] == "Job":  # the Job's selector, which the Job controller adds
        metadata["labels"]["batch.kubernetes.io/controller-uid"] = owner["uid"]
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    if annotation is not None:
        metadata["annotations"] = {run_policy.ANNOTATION: annotation}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "status": {"phase": phase, "startTime": "2026-01-01T10:00:00Z"}}


def forged_worker_0() -> dict[str, Any]:
    """Another tenant's pod: the labels of the job's worker 0, Succeeded, nothing else."""
    return pod("not-yours", "Worker", 0, "Succeeded")


def bare_pod_job() -> list[dict[str, Any]]:
    text = policy_text("pod")
    return [pod(f"{JOB}-scheduler-0", "Scheduler", 0, "Running", annotation=text),
            pod(f"{JOB}-worker-0", "Worker", 0, "Running", annotation=text),
            pod(f"{JOB}-worker-1", "Worker", 1, "Running", annotation=text)]


def controlled_by(obj: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True}


def indexed_job() -> list[dict[str, Any]]:
    text = policy_text("indexed-job")
    jobs = [{"apiVersion": "batch/v1", "kind": "Job",
             "metadata": {"name": f"{JOB}-{role}", "uid": f"uid-{role}", "namespace": "shared",
                          "annotations": {run_policy.ANNOTATION: text}},
             "spec": {"completionMode": "Indexed"}, "status": {}} for role in ("scheduler", "worker")]
    pods = [pod(f"{JOB}-scheduler-0-abcde", "Scheduler", 0, "Running", owner=controlled_by(jobs[0])),
            pod(f"{JOB}-worker-0-bcdfg", "Worker", 0, "Running", owner=controlled_by(jobs[1])),
            pod(f"{JOB}-worker-1-cdfgh", "Worker", 1, "Running", owner=controlled_by(jobs[1]))]
    return jobs + pods


def verdict(objects: list[dict[str, Any]]) -> tuple[str, list[str]]:
    policy, workloads, pods = watch.select(JOB, "shared", objects)
    found = status.aggregate(policy, workloads, pods)
    due = actions.due(policy, found, workloads, pods, NOW, [])
    return found.phase, [f"{a.verb} {a.kind} {a.name}" for a in due]


def test_a_forged_worker_0_does_not_end_a_bare_pod_job() -> None:
    assert verdict(bare_pod_job()) == ("Running", [])
    assert verdict([*bare_pod_job(), forged_worker_0()]) == ("Running", [])


def test_the_job_own_worker_0_still_ends_it() -> None:
    """The forgery is ignored, not the rule: the job's own worker 0 succeeding ends it, and
    cleanPodPolicy Running deletes the job's own running pods, none other."""
    objects = bare_pod_job()
    objects[1]["status"]["phase"] = "Succeeded"
    bystander = pod("other-team", "Worker", 1, "Running")
    phase, due = verdict([*objects, forged_worker_0(), bystander])
    assert phase == "Succeeded"
    assert due == [f"delete Pod {JOB}-scheduler-0", f"delete Pod {JOB}-worker-1"]


@pytest.mark.parametrize(
    "forgery",
    [
        pytest.param(lambda: pod("not-yours", "Worker", 0, "Succeeded", annotation=policy_text("pod")),
                     id="the-annotation-copied-under-another-name"),
        pytest.param(lambda: pod(f"{JOB}-worker-7", "Worker", 0, "Succeeded", annotation=policy_text("pod")),
                     id="the-annotation-copied-under-a-name-not-rendered"),
    ],
)  # fmt: skip
def test_a_copied_annotation_is_not_enough(forgery: Any) -> None:
    objects = bare_pod_job()
    del objects[1]  # the job's worker 0 is gone (cleaned up, or not made yet)
    assert verdict([*objects, forgery()])[0] != "Succeeded"


def test_a_forged_pod_does_not_end_an_indexed_job() -> None:
    assert verdict(indexed_job()) == ("Running", [])
    stray_owner = {"apiVersion": "batch/v1", "kind": "Job", "name": f"{JOB}-worker", "uid": "a-forged-uid",
                   "controller": True}
    for forged in (forged_worker_0(), pod("x", "Worker", 0, "Succeeded", owner=stray_owner)):
        assert verdict([*indexed_job(), forged]) == ("Running", [])


def test_pods_a_jobsets_jobs_made_are_the_jobs() -> None:
    """Through the JobSet's Job (`<jobset>-<replicated job>-0`, which carries no msgen label:
    known by its JobSet's label and its controller), not a Job of another JobSet's name."""
    text = policy_text("jobset")
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": JOB, "uid": "uid-js", "annotations": {run_policy.ANNOTATION: text}},
              "spec": {}, "status": {}}
    child = {"apiVersion": "batch/v1", "kind": "Job", "status": {},
             "metadata": {"name": f"{JOB}-worker-0", "uid": "uid-child", "labels": {ownership.JOBSET_NAME_LABEL: JOB},
                          "ownerReferences": [controlled_by(jobset)]}}
    made = pod(f"{JOB}-worker-0-0-bcdfg", "Worker", 0, "Running", owner=controlled_by(child))
    made["metadata"]["labels"][ownership.JOBSET_NAME_LABEL] = JOB
    foreign = pod("y", "Worker", 0, "Running", owner={**controlled_by(child), "name": "other-worker-0"})
    foreign["metadata"]["labels"][ownership.JOBSET_NAME_LABEL] = "other"
    _policy, _workloads, pods = watch.select(JOB, "shared", [jobset, child, made, foreign])
    assert [p["metadata"]["name"] for p in pods] == [made["metadata"]["name"]]
    _policy, _workloads, pods = watch.select(JOB, "shared", [jobset, made, foreign])
    assert pods == [], "a pod of a Job not seen"


def test_workloads_that_disagree_on_the_policy_are_left_alone() -> None:
    """A second workload of a name msgen renders for the job carrying another policy: one of
    them is not the job's, and which is unknown, so nothing is decided."""
    objects = [o for o in indexed_job() if o["metadata"]["name"] != f"{JOB}-worker"]
    forged = copy.deepcopy(indexed_job()[1])
    forged["metadata"]["annotations"][run_policy.ANNOTATION] = policy_text("indexed-job", clean="All")
    with pytest.raises(run_policy.PolicyError, match="different msgen/run-policy"):
        watch.select(JOB, "shared", [*objects, forged])


def failed_job(name: str, text: str) -> dict[str, Any]:
    """A tenant's Job carrying `text` as its run-policy, failed, and its failed worker-0 pod."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "uid": f"uid-{name}", "namespace": "shared",
                         "labels": {f"{LABELS}/job-name": JOB}, "annotations": {run_policy.ANNOTATION: text}},
            "spec": {"completionMode": "Indexed", "completions": 1,
                     "template": {"metadata": {"labels": {f"{LABELS}/replica-type": "worker"}}}},
            "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}}


def test_a_run_policy_copied_onto_a_tenants_job_changes_nothing() -> None:
    """Anyone who may create a Job can copy the job's run-policy onto one of their own, under
    a name msgen never renders for it, or under a kind its target does not render (a
    StatefulSet `j-worker` next to the Job `j-worker`): its failure, and its pods' success,
    are not the job's."""
    text = policy_text("indexed-job")
    tenant = failed_job(f"{JOB}-tenant", text)
    statefulset = {**failed_job(f"{JOB}-worker", text), "apiVersion": "apps/v1", "kind": "StatefulSet"}
    statefulset["metadata"] = {**statefulset["metadata"], "uid": "uid-sts"}
    for forged in (tenant, statefulset):
        made = pod("x-0", "Worker", 0, "Succeeded", owner=controlled_by(forged))
        assert verdict([*indexed_job(), forged, made]) == ("Running", []), forged["kind"]


def test_workload_names_of_both_renderings_leave_the_job_alone() -> None:
    """`<job>-worker` (one Job per role) and `<job>-worker-0` (one per pod, static indexes)
    are both names msgen renders, never together: one is not the job's."""
    forged = failed_job(f"{JOB}-worker-0", policy_text("indexed-job"))
    with pytest.raises(run_policy.PolicyError, match="names of both"):
        watch.select(JOB, "shared", [*indexed_job(), forged])


def test_a_run_policy_naming_another_job_is_not_that_jobs() -> None:
    """A tenant's bare Pod labelled as its own job whose run-policy names another: it is
    neither job's workload (msgen writes the same name in both)."""
    text = policy_text("pod").replace(f'"job":"{JOB}"', '"job":"other"')
    forged = pod("other-worker-0", "Worker", 0, "Succeeded", annotation=text)
    with pytest.raises(watch.NotFound, match="as msgen renders it"):
        watch.select(JOB, "shared", [forged])


def test_a_policy_claiming_a_quadrillion_replicas_is_read_not_enumerated() -> None:
    """Run in a process limited to 1 GiB of memory: a pod's name is checked against the
    replicas its policy claims without making the list of every name."""
    code = f"""
import json, resource
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from msgen.reconcile import watch
text = json.dumps({{"job": "j", "target": "pod", "roles": {{"Worker": {{"replicas": 10**15,
                   "restartPolicy": "Never"}}}}}}, sort_keys=True, separators=(",", ":"))
pod = {{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "j-worker-999999999999999",
       "labels": {{"{LABELS}/job-name": "j", "{LABELS}/replica-type": "worker"}},
       "annotations": {{"msgen/run-policy": text}}}}, "status": {{"phase": "Running"}}}}
_policy, workloads, pods = watch.select("j", "ns", [pod])
print(len(workloads), len(pods))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout) == (0, "1 1\n"), done.stderr[-2000:]


@pytest.mark.parametrize("text", [
    '{"job":"j","target":"pod","roles":{"Worker":{"replicas":Infinity,"restartPolicy":"Never"}}}',
    '{"job":"j","target":"pod","roles":{},"ttlSecondsAfterFinished":-Infinity}',
    "[" * 100_000 + "]" * 100_000,
])  # fmt: skip
def test_a_hostile_run_policy_is_a_policy_error(text: str) -> None:
    """What the controller skips with a message: never an exception that ends it (for
    every job of every tenant)."""
    with pytest.raises(run_policy.PolicyError):
        run_policy.parse(text)


@pytest.mark.parametrize("target", TARGETS)
def test_every_workload_msgen_renders_is_one_the_reconciler_owns(target: str) -> None:
    """ownership.WORKLOAD_KINDS and the names it reads, held to every target's output of
    every sample (some need static indexes: one Job per pod)."""
    seen = 0
    for sample in sorted(SAMPLES.rglob("*.yaml")):
        out = msgen("render", str(sample), "--target", target)
        if out.exit_code != 0:
            continue
        for obj in out.objects():
            text = ownership.policy_text(obj)
            if text is not None:
                job = obj["metadata"]["labels"][f"{LABELS}/job-name"]
                assert ownership.rendered_workload(run_policy.parse(text), job, obj), (sample.name, obj["kind"])
                seen += 1
    assert seen


# ---- the same forgery against a real cluster and the controller ----------------------------

KUBECONFIG = os.environ.get("MSGEN_TEST_KUBECONFIG")


@pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no API server to test against")
def test_live_a_forged_worker_0_does_not_end_a_bare_pod_job(tmp_path: Any) -> None:
    """`msgen apply --target pod --wait`, a tenant's pod with worker 0's labels set Succeeded:
    the job keeps running, none of its pods is deleted; then its own worker 0 ends it."""
    import subprocess
    import sys
    import time

    from .test_reconcile_live import _set_pod_status, job_file, kubectl, names

    ns = f"{os.environ.get('MSGEN_TEST_NAMESPACE_PREFIX', 'msgen-test')}-forged-{os.getpid()}"
    kubectl("create", "namespace", ns)
    try:
        env = {**os.environ, "KUBECONFIG": str(KUBECONFIG)}
        waiting = subprocess.Popen(
            [sys.executable, "-m", "msgen", "apply", str(job_file(tmp_path)), "-n", ns, "--target", "pod",
             "--wait", "--timeout", "120s"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
        deadline = time.monotonic() + 60
        while names("pod", ns) != ["lenet-scheduler-0", "lenet-worker-0", "lenet-worker-1"]:
            assert time.monotonic() < deadline, "pods did not appear"
            time.sleep(0.5)
        forged = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "not-yours", "labels": {
            f"{LABELS}/job-name": "lenet", f"{LABELS}/replica-type": "worker", f"{LABELS}/replica-index": "0"}},
            "spec": {"nodeSelector": {"msgen.test/no-such-node": "true"},
                     "containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
        (tmp_path / "forged.yaml").write_text(json.dumps(forged))
        kubectl("apply", "-n", ns, "-f", str(tmp_path / "forged.yaml"))
        for name in ("lenet-scheduler-0", "lenet-worker-0", "lenet-worker-1"):
            _set_pod_status(ns, name, "Running")
        _set_pod_status(ns, "not-yours", "Succeeded", exit_code=0)
        time.sleep(5)
        assert waiting.poll() is None, "the forged pod ended the job"
        assert names("pod", ns) == ["lenet-scheduler-0", "lenet-worker-0", "lenet-worker-1", "not-yours"]
        _set_pod_status(ns, "lenet-worker-0", "Succeeded", exit_code=0)
        out, err = waiting.communicate(timeout=90)
        assert waiting.returncode == 0, err
        assert "policy: delete Pod not-yours" not in out
        assert "not-yours" in names("pod", ns)
    finally:
        kubectl("delete", "namespace", ns, "--wait=false", check=False)
