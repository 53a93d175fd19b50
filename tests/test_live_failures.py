"""Failure semantics on a real cluster: workers fail on purpose (exit 1, exit 137, a deleted
pod, an eviction) under each MSJob policy, on `indexed-job`, `pod` and `statefulset`, and
the job must do what ms-operator did (or what the README's policy table says instead), with
`msgen apply --wait` and `msgen status` saying so: phase, reason, failed pod, exit code,
log lines.

Pods really run (kubelet, Job controller, StatefulSet controller). MSGEN_TEST_KUBECONFIG
names the cluster; without it, every test skips. See tests/live.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msgen.model import versions

from .live import (get, kubectl, msgen, msgen_started, msjob, namespace, needs_cluster, pods, release,
                   running_pod, script, wait_for, write)

pytestmark = needs_cluster
__all__ = ["namespace"]

WORKER = "training.kubeflow.org/replica-type=worker"
SCHEDULER = "training.kubeflow.org/replica-type=scheduler"


def apply_wait(path: Path, ns: str, *options: str, timeout: str = "240s") -> tuple[int, str]:
    run = msgen("apply", str(path), "-n", ns, *options, "--wait", "--timeout", timeout)
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.stdout


def status(job: str, ns: str) -> str:
    run = msgen("status", job, "-n", ns)
    assert run.exit_code == 0, run.stderr
    return run.stdout


def conditions(job: str, ns: str) -> list[dict[str, str]]:
    run = msgen("status", job, "-n", ns, "-o", "json")
    assert run.exit_code == 0, run.stderr
    return list(json.loads(run.stdout)[job]["conditions"])


def live_names(ns: str, selector: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods(ns, selector) if not p["metadata"].get("deletionTimestamp"))


# --- indexed-job -------------------------------------------------------------------------------


def test_indexed_never_exit_1_fails_at_once_and_stops_the_scheduler(tmp_path: Path, namespace: str) -> None:
    """ms-operator: a Never worker that fails fails the job; cleanPodPolicy Running (its
    default) removes the pods still running."""
    job = write(tmp_path, "nev", msjob("nev", script({1: (1, 1)}, default=(60, 0))))
    code, out = apply_wait(job, namespace)
    assert code == 1, out
    assert "nev: Failed after" in out and "(BackoffLimitExceeded" in out
    assert "failed: pod nev-worker-1-" in out and "container mindspore exit code 1 (Error)" in out
    assert "    | worker 1 exits 1" in out
    assert "policy: suspend Job nev-scheduler: job failed; cleanPodPolicy Running" in out
    wait_for("the scheduler's pod to go", lambda: not live_names(namespace, SCHEDULER))
    shown = status("nev", namespace)
    assert "nev: Failed" in shown and "failed: BackoffLimitExceeded" in shown
    assert "exit code 1 (Error)" in shown and "| worker 1 exits 1" in shown


def test_indexed_on_failure_over_the_backoff_limit_shows_the_restarted_container(
        tmp_path: Path, namespace: str) -> None:
    """OnFailure: the kubelet restarts the container in place; past backoffLimit the Job
    fails. The report names the container's exit code and its failed instance's log."""
    job = write(tmp_path, "onf", msjob("onf", script({1: (0, 3)}, default=(120, 0)), restart="OnFailure",
                                        run_policy={"backoffLimit": 1}))
    code, out = apply_wait(job, namespace)
    assert code == 1, out
    assert "onf: Failed after" in out and "(BackoffLimitExceeded" in out
    assert "container mindspore exit code 3 (Error, restarted in place)" in out, out
    assert "    | worker 1 exits 3" in out


def test_indexed_exit_code_retries_a_killed_worker_and_fails_on_its_own_error(
        tmp_path: Path, namespace: str) -> None:
    """ExitCode: 137 (kill -9) is retried in a new pod and the job goes on; 1-127 fail it."""
    worker = 'i=${HOSTNAME##*-}; echo "worker $i starts"; sleep 25 & wait $!; code=$?; echo "worker $i: $code"; exit $code'
    job = write(tmp_path, "exc", msjob("exc", worker, restart="ExitCode"))
    waiting = msgen_started("apply", str(job), "-n", namespace, "--wait", "--timeout", "240s")
    first = running_pod(namespace, f"{WORKER},batch.kubernetes.io/job-completion-index=1")
    kubectl("exec", "-n", namespace, first["metadata"]["name"], "--", "sh", "-c", "kill -9 $(pgrep -x sleep)")
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, (out, err)
    assert "exc: Succeeded after" in out
    killed = get("pod", namespace, first["metadata"]["name"])
    assert killed["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137
    assert get("job", namespace, "exc-worker")["status"].get("failed") == 1  # counted, and replaced
    # Exit code 1 under ExitCode: the podFailurePolicy fails the job at once.
    job = write(tmp_path, "exd", msjob("exd", script({1: (1, 1)}, default=(60, 0)), restart="ExitCode"))
    code, out = apply_wait(job, namespace)
    assert code == 1 and "exd: Failed after" in out and "(PodFailurePolicy" in out, out
    assert "exit code 1 (Error)" in out


def test_indexed_dynamic_worker_agrees_with_the_worker_job(tmp_path: Path, namespace: str) -> None:
    """enableDynamicWorker: worker 1 fails and worker 0 succeeds after it: Kubernetes fails
    the Worker Job (FailedIndexes) and msgen says Failed too; worker 0 succeeding while
    worker 1 still runs: Succeeded."""
    if not versions.enabled("JobBackoffLimitPerIndex", release()):
        pytest.skip(f"enableDynamicWorker is not expressed on Kubernetes {'.'.join(map(str, release()))}: a Job's "
                    f"per-index retries (JobBackoffLimitPerIndex) are on from {versions.since('JobBackoffLimitPerIndex')}, "
                    "and msgen warns instead")
    job = write(tmp_path, "dyn", msjob("dyn", script({1: (1, 1)}, default=(15, 0)), extra={"enableDynamicWorker": True}))
    code, out = apply_wait(job, namespace)
    failed = [c for c in get("job", namespace, "dyn-worker")["status"]["conditions"] if c["type"] == "Failed"]
    assert failed and failed[0]["reason"] == "FailedIndexes"
    assert code == 1 and "dyn: Failed after" in out and "(FailedIndexes" in out, out
    job = write(tmp_path, "dyo", msjob("dyo", script({0: (1, 0)}, default=(60, 1)), extra={"enableDynamicWorker": True}))
    code, out = apply_wait(job, namespace)
    assert code == 0 and "dyo: Succeeded after" in out, out
    met = {c["type"] for c in get("job", namespace, "dyo-worker")["status"]["conditions"]}
    # From 1.31 the Worker Job's successPolicy ends it; before, msgen suspends it (worker 1 runs).
    assert ("SuccessCriteriaMet" if versions.enabled("JobSuccessPolicy", release()) else "Suspended") in met, met


def test_indexed_active_deadline_fails_with_deadline_exceeded(tmp_path: Path, namespace: str) -> None:
    job = write(tmp_path, "ddl", msjob("ddl", script({}, default=(300, 0)), run_policy={"activeDeadlineSeconds": 15}))
    code, out = apply_wait(job, namespace)
    assert code == 1 and "ddl: Failed after" in out and "(DeadlineExceeded" in out, out


def test_indexed_success_policies(tmp_path: Path, namespace: str) -> None:
    """Default: the job succeeds when worker 0 does, and worker 1 is stopped; AllWorkers:
    only once every worker has."""
    job = write(tmp_path, "wz", msjob("wz", script({0: (1, 0)}, default=(300, 0))))
    code, out = apply_wait(job, namespace)
    assert code == 0 and "wz: Succeeded after" in out, out
    wait_for("worker 1 to be stopped", lambda: [p["status"].get("phase") for p in
                                                pods(namespace, f"{WORKER},training.kubeflow.org/job-name=wz")]
             == ["Succeeded"])
    job = write(tmp_path, "aw", msjob("aw", script({0: (1, 0), 1: (12, 0)}), extra={"successPolicy": "AllWorkers"}))
    code, out = apply_wait(job, namespace)
    assert code == 0 and "aw: Succeeded after" in out, out
    lines = [line for line in out.splitlines() if line.startswith("aw: Running")]
    assert any("Worker: 0 pending, 1 running, 1 succeeded" in line for line in lines), out


def test_indexed_clean_pod_policy_all_and_none(tmp_path: Path, namespace: str) -> None:
    job = write(tmp_path, "cpa", msjob("cpa", script({}, default=(1, 0)), run_policy={"cleanPodPolicy": "All"}))
    code, out = apply_wait(job, namespace)
    assert code == 0 and "policy: delete Pod cpa-worker-0-" in out, out
    wait_for("every pod of cpa to go", lambda: not live_names(namespace, "training.kubeflow.org/job-name=cpa"))
    assert "cpa: Succeeded" in status("cpa", namespace)
    job = write(tmp_path, "cpn", msjob("cpn", script({}, default=(1, 0)), run_policy={"cleanPodPolicy": "None"}))
    code, out = apply_wait(job, namespace)
    assert code == 0 and "policy:" not in out, out
    assert live_names(namespace, f"{SCHEDULER},training.kubeflow.org/job-name=cpn")  # still running


def test_indexed_job_runs_again_after_its_ttl(tmp_path: Path, namespace: str) -> None:
    """ttlSecondsAfterFinished deletes the finished Worker Job; the Scheduler Job
    cleanPodPolicy suspended is resumed when the job is applied again, which runs it all."""
    job = write(tmp_path, "ttl", msjob("ttl", script({}, default=(1, 0)), run_policy={"ttlSecondsAfterFinished": 5}))
    code, out = apply_wait(job, namespace)
    assert code == 0 and "policy: suspend Job ttl-scheduler" in out, out
    wait_for("the TTL to delete the Worker Job", lambda: "ttl-worker" not in
             [j["metadata"]["name"] for j in get("jobs", namespace)])
    stopped = get("job", namespace, "ttl-scheduler")
    assert stopped["spec"]["suspend"] is True and "msgen/stopped-at" in stopped["metadata"]["annotations"]
    code, out = apply_wait(job, namespace)
    assert "job.batch/ttl-worker created" in out
    assert "job.batch/ttl-scheduler resumed (cleanPodPolicy suspended it when the job's last run ended)" in out
    assert code == 0 and "ttl: Succeeded after" in out, out
    # The resumed Scheduler ran again (it was active), and was stopped again at the end.
    assert "policy: suspend Job ttl-scheduler" in out


def test_indexed_deleted_and_evicted_workers(tmp_path: Path, namespace: str) -> None:
    """A worker pod deleted (kubectl delete) or evicted (the Eviction API) while it runs.
    ms-operator re-created a missing pod. A Job counts a deleted Never pod against
    backoffLimit 0 (the job fails); with ExitCode, an eviction is a disruption the Job's
    podFailurePolicy ignores: the pod is replaced and the job goes on."""
    job = write(tmp_path, "del", msjob("del", script({}, default=(40, 0))))
    waiting = msgen_started("apply", str(job), "-n", namespace, "--wait", "--timeout", "240s")
    victim = running_pod(namespace, f"{WORKER},training.kubeflow.org/job-name=del,"
                                    "batch.kubernetes.io/job-completion-index=1")["metadata"]["name"]
    kubectl("delete", "pod", "-n", namespace, victim, "--wait=false")
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 1 and "del: Failed after" in out and "(BackoffLimitExceeded" in out, (out, err)
    assert f"failed: pod {victim}" in out
    job = write(tmp_path, "evi", msjob("evi", script({}, default=(40, 0)), restart="ExitCode"))
    waiting = msgen_started("apply", str(job), "-n", namespace, "--wait", "--timeout", "240s")
    victim = running_pod(namespace, f"{WORKER},training.kubeflow.org/job-name=evi,"
                                    "batch.kubernetes.io/job-completion-index=1")["metadata"]["name"]
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": victim, "namespace": namespace}}
    kubectl("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/{victim}/eviction", "-f", "-",
            input=json.dumps(eviction))
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0 and "evi: Succeeded after" in out, (out, err)


# --- pod --------------------------------------------------------------------------------------


def test_pod_never_exit_1_fails_and_cleans_running_pods(tmp_path: Path, namespace: str) -> None:
    job = write(tmp_path, "pnv", msjob("pnv", script({1: (1, 1)}, default=(60, 0))))
    code, out = apply_wait(job, namespace, "--target", "pod")
    assert code == 1 and "pnv: Failed after" in out and "(PodFailed: pod pnv-worker-1 failed (Error))" in out, out
    assert "failed: pod pnv-worker-1 container mindspore exit code 1 (Error)" in out
    assert "    | worker 1 exits 1" in out
    assert "policy: delete Pod pnv-scheduler-0" in out and "policy: delete Pod pnv-worker-0" in out
    wait_for("the running pods to go", lambda: live_names(namespace, "training.kubeflow.org/job-name=pnv")
             == ["pnv-worker-1"])
    shown = status("pnv", namespace)
    assert "pnv: Failed" in shown and "exit code 1 (Error)" in shown and "| worker 1 exits 1" in shown


def test_pod_on_failure_past_the_backoff_limit(tmp_path: Path, namespace: str) -> None:
    """Bare Pods restart OnFailure containers in place; msgen counts the restarts against
    backoffLimit (kubeflow's rule) and fails the job, naming the container's exit code."""
    job = write(tmp_path, "pof", msjob("pof", script({1: (0, 3)}, default=(300, 0)), restart="OnFailure",
                                        run_policy={"backoffLimit": 1}))
    code, out = apply_wait(job, namespace, "--target", "pod")
    assert code == 1 and "pof: Failed after" in out and "(BackoffLimitExceeded" in out, out
    assert "failed: pod pof-worker-1 container mindspore exit code 3 (Error, restarted in place)" in out
    assert "    | worker 1 exits 3" in out


def test_pod_exit_code_runs_as_never_and_deadline_reads_deadline_exceeded(tmp_path: Path, namespace: str) -> None:
    job = write(tmp_path, "pex", msjob("pex", script({1: (1, 137)}, default=(60, 0)), restart="ExitCode"))
    code, out = apply_wait(job, namespace, "--target", "pod")
    assert code == 1 and "exit code 137" in out, out
    job = write(tmp_path, "pdl", msjob("pdl", script({}, default=(300, 0)), run_policy={"activeDeadlineSeconds": 10}))
    code, out = apply_wait(job, namespace, "--target", "pod")
    assert code == 1 and "pdl: Failed after" in out and "(DeadlineExceeded" in out, out
    assert "(DeadlineExceeded)" in out.split("failed: pod", 1)[1]


def test_pod_dynamic_worker_and_all_workers_with_clean_pod_policy_all(tmp_path: Path, namespace: str) -> None:
    job = write(tmp_path, "pdy", msjob("pdy", script({0: (8, 0), 1: (1, 1)}), extra={"enableDynamicWorker": True}))
    code, out = apply_wait(job, namespace, "--target", "pod")
    assert code == 0 and "pdy: Succeeded after" in out, out
    job = write(tmp_path, "pal", msjob("pal", script({0: (1, 0), 1: (8, 0)}), extra={"successPolicy": "AllWorkers"},
                                        run_policy={"cleanPodPolicy": "All"}))
    code, out = apply_wait(job, namespace, "--target", "pod")
    assert code == 0 and "pal: Succeeded after" in out and "all 2 workers succeeded" in out, out
    wait_for("every pod of pal to go", lambda: not pods(namespace, "training.kubeflow.org/job-name=pal"))
    # Every workload is gone; the end --wait recorded on a Service is what status shows.
    assert "pal: Succeeded (published by msgen controller" in status("pal", namespace)


def test_pod_deleted_while_the_job_runs_fails_it(tmp_path: Path, namespace: str) -> None:
    """ms-operator re-created a deleted pod; with bare Pods nothing does, so the job cannot
    finish: msgen says it failed, naming the pod, instead of following it for ever."""
    job = write(tmp_path, "pde", msjob("pde", script({}, default=(60, 0))))
    waiting = msgen_started("apply", str(job), "-n", namespace, "--target", "pod", "--wait", "--timeout", "240s")
    running_pod(namespace, "training.kubeflow.org/job-name=pde,training.kubeflow.org/replica-index=1,"
                           "training.kubeflow.org/replica-type=worker")
    kubectl("delete", "pod", "-n", namespace, "pde-worker-1", "--wait=false")
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 1 and "pde: Failed after" in out, (out, err)
    assert "(PodDeleted: pod pde-worker-1 was deleted before the job ended)" in out


# --- statefulset -------------------------------------------------------------------------------


def test_statefulset_restarts_failed_and_deleted_workers(tmp_path: Path, namespace: str) -> None:
    """A StatefulSet restarts its pods whatever their exit code and re-creates a deleted
    one (as ms-operator re-created pods): the job never fails and never completes."""
    job = write(tmp_path, "sts", msjob("sts", script({1: (1, 1)}, default=(300, 0)), restart="Always"))
    applied = msgen("apply", str(job), "-n", namespace, "--target", "statefulset")
    assert applied.exit_code == 0, applied.stderr

    def restarted() -> bool:
        found = [p for p in pods(namespace, "training.kubeflow.org/job-name=sts")
                 if p["metadata"]["name"] == "sts-worker-1"]
        return bool(found) and any(int(s.get("restartCount") or 0) >= 1
                                   for s in found[0]["status"].get("containerStatuses") or [])
    wait_for("worker 1 to be restarted", restarted)
    old = running_pod(namespace, "training.kubeflow.org/job-name=sts,apps.kubernetes.io/pod-index=0,"
                                 "training.kubeflow.org/replica-type=worker")["metadata"]["uid"]
    kubectl("delete", "pod", "-n", namespace, "sts-worker-0", "--wait=false")
    wait_for("worker 0 to be re-created", lambda: [p for p in pods(namespace, "training.kubeflow.org/job-name=sts")
                                                    if p["metadata"]["name"] == "sts-worker-0"
                                                    and p["metadata"]["uid"] != old])
    run = msgen("status", "sts", "-n", namespace, "--watch", "--timeout", "5s")
    assert run.exit_code == 3 and "sts: Running" in run.stdout and "failed:" not in run.stdout, run.stdout


@pytest.mark.parametrize("target", ["indexed-job", "pod"])
def test_conditions_have_times_in_order_without_a_controller(tmp_path: Path, namespace: str, target: str) -> None:
    job = write(tmp_path, "tim", msjob("tim", script({}, default=(3, 0)), run_policy={"cleanPodPolicy": "None"}))
    code, out = apply_wait(job, namespace, "--target", target)
    assert code == 0, out
    found = conditions("tim", namespace)
    assert [c["type"] for c in found] == ["Created", "Running", "Succeeded"]
    times = [c["lastTransitionTime"] for c in found]
    assert all(times) and times == sorted(times), found
