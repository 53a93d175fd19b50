"""What msgen says a job did, against what Kubernetes and ms-operator said, with plain data
shaped as a real cluster reported it (Job conditions, pods being deleted, restarted
containers, a kubelet's deadline), and the actions that let a job run again."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from msgen.reconcile import actions, applyset, published, status
from msgen.reconcile.pods import PodFailure
from msgen.reconcile.witness import Witness
from msgen.model.run_policy import RoleRule

from .conftest import msgen
from .test_reconcile_decisions import NOW, job, pod, policy, terminated


def indexed_worker_job(*conditions: str, success_policy: bool = True, completions: int = 2) -> dict[str, Any]:
    found = job("Worker", *conditions)
    found["spec"].update(completionMode="Indexed", completions=completions)
    if success_policy:
        found["spec"]["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}
    return found


def deleted(found: dict[str, Any], at: str = "2026-01-01T11:00:30Z", grace: int = 30) -> dict[str, Any]:
    found["metadata"].update(deletionTimestamp=at, deletionGracePeriodSeconds=grace)
    return found


# --- agreeing with the Job -------------------------------------------------------------------


def test_dynamic_worker_on_indexed_job_fails_as_the_worker_job_does() -> None:
    """Worker 1 exits 1, worker 0 succeeds: Kubernetes fails the Worker Job (FailedIndexes);
    msgen says the same, where it used to say Succeeded."""
    rule = policy("indexed-job", enable_dynamic_worker=True)
    pods = [pod("Worker", 0, "Succeeded", **terminated(0, "Completed")),
            pod("Worker", 1, "Failed", **terminated(1, "Error"))]
    found = status.aggregate(rule, [indexed_worker_job("FailureTarget:FailedIndexes")], pods)
    assert (found.phase, found.conditions[-1].reason) == ("Failed", "FailedIndexes")


def test_worker_0_succeeding_waits_for_the_worker_jobs_own_verdict() -> None:
    """Between worker 0's success and the Job's condition, msgen says nothing final: the Job
    may yet fail (FailedIndexes), and what msgen says must not differ."""
    rule = policy("indexed-job", enable_dynamic_worker=True)
    pods = [pod("Worker", 0, "Succeeded", **terminated(0, "Completed")),
            pod("Worker", 1, "Failed", **terminated(1, "Error"))]
    assert status.aggregate(rule, [indexed_worker_job()], pods).phase != "Succeeded"
    met = status.aggregate(rule, [indexed_worker_job("SuccessCriteriaMet:SuccessPolicy")], pods)
    assert met.phase == "Succeeded"
    # Without a successPolicy (Kubernetes before 1.31) the Job cannot say it: worker 0 does.
    old = status.aggregate(policy("indexed-job"), [indexed_worker_job(success_policy=False)], pods[:1])
    assert old.phase == "Succeeded"


def test_worker_0_succeeding_after_a_failed_index_waits_for_the_worker_job_without_success_policy() -> None:
    """Rendered for 1.29 or 1.30 (no successPolicy): worker 1 past its per-index limit, then
    worker 0 succeeds. Kubernetes 1.30 failed the Worker Job (FailedIndexes) once worker 0
    ended; msgen said Succeeded at worker 0. It now waits for the Job, and says what it says."""
    rule = policy("indexed-job", enable_dynamic_worker=True)
    pods = [pod("Worker", 0, "Succeeded", **terminated(0, "Completed")),
            pod("Worker", 1, "Failed", **terminated(1, "Error"))]
    failing = indexed_worker_job(success_policy=False)
    failing["status"] = {"failedIndexes": "1"}
    assert status.aggregate(rule, [failing], pods).phase != "Succeeded"
    ended = indexed_worker_job("Failed:FailedIndexes", success_policy=False)
    ended["status"]["failedIndexes"] = "1"
    found = status.aggregate(rule, [ended], pods)
    assert (found.phase, found.conditions[-1].reason) == ("Failed", "FailedIndexes")
    # Worker 0 succeeding while worker 1 still runs, no index failed: worker 0 decides.
    running = [pods[0], pod("Worker", 1, "Running")]
    assert status.aggregate(rule, [indexed_worker_job(success_policy=False)], running).phase == "Succeeded"


def test_failure_target_is_the_failure_as_soon_as_kubernetes_decides() -> None:
    found = status.aggregate(policy("indexed-job"), [indexed_worker_job("FailureTarget:BackoffLimitExceeded")],
                             [pod("Worker", 1, "Running")])
    assert (found.phase, found.conditions[-1].reason) == ("Failed", "BackoffLimitExceeded")
    assert found.completion_time == "2026-01-01T11:00:00Z"


# --- pods a policy killed ----------------------------------------------------------------------


def test_a_late_controller_does_not_count_pods_clean_pod_policy_killed() -> None:
    """cleanPodPolicy All deleted every pod once worker 0 succeeded; a controller starting
    within their grace period sees worker 1 Failed (killed, exit 143): the job succeeded."""
    rule = policy("pod", clean_pod_policy="All")
    pods = [deleted(pod("Worker", 0, "Succeeded", **terminated(0, "Completed", "2026-01-01T11:00:00Z"))),
            deleted(pod("Worker", 1, "Failed", **terminated(143, "Error", "2026-01-01T11:00:02Z"))),
            deleted(pod("Scheduler", 0, "Failed", **terminated(137, "Error", "2026-01-01T11:00:29Z")))]
    found = status.aggregate(rule, pods, pods)
    assert found.phase == "Succeeded" and found.failures == []
    assert found.replicas["Worker"].failed == 0


def test_a_pod_that_failed_on_its_own_before_its_deletion_still_fails_the_job() -> None:
    rule = policy("pod")
    failed = deleted(pod("Worker", 1, "Failed", **terminated(1, "Error", "2026-01-01T10:30:00Z")))
    found = status.aggregate(rule, [failed], [failed, pod("Worker", 0, "Running")])
    assert found.phase == "Failed" and found.failures[0].exit_code == 1


def test_a_bare_pod_deleted_while_the_job_runs_fails_it() -> None:
    """Nothing re-creates a bare Pod (ms-operator did): the job cannot finish; say so."""
    rule = policy("pod")
    killed = deleted(pod("Worker", 1, "Failed", **terminated(137, "Error", "2026-01-01T11:00:01Z")))
    found = status.aggregate(rule, [killed], [killed, pod("Worker", 0, "Running")])
    assert (found.phase, found.conditions[-1].reason) == ("Failed", "PodDeleted")
    assert found.failures[0].pod == "j-worker-1" and found.failures[0].exit_code == 137


# --- what a failure shows ----------------------------------------------------------------------


def test_over_the_limit_on_failure_shows_the_restarted_containers_exit_code() -> None:
    """OnFailure: the kubelet restarts containers in place and the Job fails with no failed
    pod; the restarted container's exit code (and its previous log) are what to show."""
    rule = policy("indexed-job", roles={"Worker": RoleRule(1, "OnFailure")}, backoff_limit=1)
    restarting = pod("Worker", 0, "Running", containerStatuses=[{
        "name": "mindspore", "restartCount": 2, "state": {"running": {"startedAt": "2026-01-01T10:00:09Z"}},
        "lastState": {"terminated": {"exitCode": 3, "reason": "Error", "finishedAt": "2026-01-01T10:00:08Z"}}}])
    found = status.aggregate(rule, [job("Worker", "FailureTarget:BackoffLimitExceeded")], [restarting])
    assert found.phase == "Failed"
    assert [(f.pod, f.exit_code, f.previous) for f in found.failures] == [("j-worker-0", 3, True)]


def test_a_pod_deadline_reads_deadline_exceeded() -> None:
    rule = policy("pod", active_deadline_seconds=5)
    late = pod("Worker", 0, "Failed", reason="DeadlineExceeded", **terminated(137, "Error"))
    found = status.aggregate(rule, [late], [late])
    assert found.conditions[-1].reason == "DeadlineExceeded"
    assert found.failures[0].reason == "DeadlineExceeded" and found.failures[0].exit_code == 137


# --- times ---------------------------------------------------------------------------------------


def test_conditions_have_their_times_in_order_without_a_controller() -> None:
    rule = policy("pod")
    running = pod("Worker", 1, "Running", containerStatuses=[
        {"name": "mindspore", "state": {"running": {"startedAt": "2026-01-01T10:00:05Z"}}}])
    done = pod("Worker", 0, "Succeeded", **terminated(0, "Completed", "2026-01-01T10:30:00Z"))
    done["status"]["containerStatuses"][0]["state"]["terminated"]["startedAt"] = "2026-01-01T10:00:04Z"
    found = status.aggregate(rule, [running, done], [running, done])
    shown = published.merged(None, found, "2026-01-01T12:00:00Z")  # a late controller's pass
    times = [(c["type"], c["lastTransitionTime"]) for c in shown["conditions"]]
    assert times == [("Created", "2026-01-01T10:00:00Z"), ("Running", "2026-01-01T10:00:04Z"),
                     ("Succeeded", "2026-01-01T10:30:00Z")]


# --- a job can run again -------------------------------------------------------------------------


def test_a_suspended_job_records_the_end_and_is_deleted_with_its_ttl() -> None:
    rule = policy("indexed-job", ttl_seconds_after_finished=60)
    worker = job("Worker", "Complete:Completed")
    scheduler = job("Scheduler")
    found = status.aggregate(rule, [worker, scheduler], [])
    due = actions.due(rule, found, [worker, scheduler], [], NOW)
    assert [(a.verb, a.name, a.at) for a in due] == [("suspend", "j-scheduler", "2026-01-01T11:00:00Z")]
    patch = actions.suspend_patch(due[0], NOW)
    assert patch == {"metadata": {"annotations": {"msgen/stopped": "job succeeded; cleanPodPolicy Running",
                                                  "msgen/stopped-at": "2026-01-01T11:00:00Z"}},
                     "spec": {"suspend": True}}
    # Kubernetes' TTL deleted the Worker Job; the suspended Scheduler Job goes once due.
    stopped = job("Scheduler", suspend=True)
    stopped["metadata"]["annotations"] = patch["metadata"]["annotations"]
    left = status.aggregate(rule, [stopped], [])
    at = datetime(2026, 1, 1, 11, 0, tzinfo=timezone.utc)
    assert actions.due(rule, left, [stopped], [], at + timedelta(seconds=59)) == []
    assert [(a.verb, a.name) for a in actions.due(rule, left, [stopped], [], at + timedelta(seconds=60))] == [
        ("delete", "j-scheduler")]
    # A Job suspended for Kueue is not one the policy stopped.
    assert not actions.stopped_by_policy(job("Scheduler", suspend=True))
    assert actions.resume_patch() == {"metadata": {"annotations": {"msgen/stopped": None, "msgen/stopped-at": None,
                                                                   "msgen/stopped-generation": None,
                                                                   "msgen/status": None}},
                                      "spec": {"suspend": False}}
    # Rendered for a GitOps tool, which would create the Job again: its TTL deletes nothing.
    assert actions.due(rule._replace(gitops=True), left, [stopped], [], at + timedelta(seconds=60)) == []


def test_a_jobs_end_goes_on_each_of_its_workloads_but_bare_pods(monkeypatch: Any) -> None:
    """The publisher writes a job's end on every workload that is not a bare Pod, as well as
    on its holder: Kubernetes' TTL deletes the finished holder (a Worker Job) without a pass
    seeing it go, and a Job left running (cleanPodPolicy None), stopped (Running, All) or
    about to be must not make the job read as running again. A bare-Pod job's end stays on its
    holder, which its TTL deletes last (`actions.due`). Before the end, the holder alone."""
    from msgen.reconcile import kube, publisher

    written: list[str] = []
    no_client: Any = None  # every request goes to the stand-ins below
    monkeypatch.setattr(kube, "merge_patch", lambda client, obj, body: written.append(obj["metadata"]["name"]))
    monkeypatch.setattr(kube, "create", lambda client, body: body)

    def placed(obj: dict[str, Any]) -> dict[str, Any]:
        obj["metadata"]["namespace"] = "ns"
        return obj

    rule = policy("indexed-job")
    worker, scheduler = placed(job("Worker", "Failed:BackoffLimitExceeded")), placed(job("Scheduler"))
    found = status.aggregate(rule, [worker, scheduler], [])
    assert found.phase == "Failed"
    for clean in ("Running", "All", "None"):
        written.clear()
        publisher.publish(no_client, rule._replace(clean_pod_policy=clean), found, [worker, scheduler], lambda line: None)
        assert sorted(written) == ["j-scheduler", "j-worker"], clean
    written.clear()
    active = placed(job("Worker"))
    running = status.aggregate(rule, [active, scheduler], [pod("Worker", 0, "Running")])
    publisher.publish(no_client, rule, running, [active, scheduler], lambda line: None)
    assert written == ["j-worker"]
    bare = policy("pod")
    pods = [placed(pod("Worker", 0, "Succeeded", **terminated(0, "Completed"))), placed(pod("Worker", 1, "Succeeded"))]
    written.clear()
    publisher.publish(no_client, bare, status.aggregate(bare, pods, pods), pods, lambda line: None)
    assert written == ["j-worker-0"]


def test_an_object_listed_twice_is_pruned_once() -> None:
    member = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "settings", "namespace": "ns", "labels": {applyset.PART_OF: "id"}}}
    assert applyset.prune_set([member, dict(member)], [], "id") == [member]


def test_the_bare_pod_ttl_warning_names_the_controller_alone(tmp_path: Any) -> None:
    """apply --wait ends with the job, before a TTL is due: only the controller keeps it."""
    path = tmp_path / "ttl.yaml"
    path.write_text("apiVersion: mindspore.gitee.com/v1\nkind: MSJob\nmetadata:\n  name: t\nspec:\n"
                    "  runPolicy:\n    ttlSecondsAfterFinished: 60\n  msReplicaSpecs:\n    Worker:\n"
                    "      replicas: 1\n      template:\n        spec:\n          containers:\n"
                    "            - name: mindspore\n              image: mindspore/mindspore:2.2.14\n")
    run = msgen("render", str(path), "--target", "pod")
    assert run.exit_code == 0
    assert ("runPolicy.ttlSecondsAfterFinished: needs `msgen controller` with target pod (`msgen apply --wait` "
            "ends with the job, before it is due)") in run.stderr
    assert "apply --wait` or `msgen controller`" not in run.stderr


# --- what is left when pods are gone -----------------------------------------------------------


def test_worker_0s_success_is_read_from_its_jobs_completed_indexes_once_its_pod_is_gone() -> None:
    """Worker 0 succeeded while workers 1-2 still run; its pod was deleted (by a person, or by
    the pod garbage collector) while the controller could not see it. The Worker Job counts
    index 0 in `status.completedIndexes`: the job succeeded, and cleanPodPolicy stops the rest."""
    rule = policy("indexed-job", roles={"Scheduler": RoleRule(1, "Never"), "Worker": RoleRule(3, "Never")})
    worker_job = indexed_worker_job(success_policy=False, completions=3)
    worker_job["status"].update(completedIndexes="0", succeeded=1, active=2)
    pods = [pod("Scheduler", 0, "Running"), pod("Worker", 1, "Running"), pod("Worker", 2, "Running")]
    found = status.aggregate(rule, [job("Scheduler"), worker_job], pods)
    assert (found.phase, found.conditions[-1].message) == ("Succeeded", "worker 0 succeeded")
    due = actions.due(rule, found, [job("Scheduler"), worker_job], pods, NOW)
    assert sorted((a.verb, a.name) for a in due) == [("suspend", "j-scheduler"), ("suspend", "j-worker")]
    # Another index, an index beyond the role, or what no Job writes, says nothing of worker 0.
    for text in ("1-2", "7", "0x", "-0", "٠", "0-", ""):
        worker_job["status"]["completedIndexes"] = text
        assert status.aggregate(rule, [job("Scheduler"), worker_job], pods).phase == "Running", text
    assert status.completed_indexes({"spec": {"completionMode": "Indexed"},
                                     "status": {"completedIndexes": "0,2-4,9-999999999999"}}, 6) == {0, 2, 3, 4}
    assert status.completed_indexes({"spec": {}, "status": {"completedIndexes": "0"}}, 6) == set()


# --- what a follower keeps -------------------------------------------------------------------


def test_a_follower_keeps_the_log_of_a_restarted_container_whose_pod_is_being_deleted() -> None:
    """The first status a follower saw of a restarting pod already had its deletion (Kubernetes
    1.30's Job controller deleted it on the status that showed the restart): its failed
    instance's log is read while the pod is still there; a container the deletion killed is
    no failure to keep."""
    asked: list[PodFailure] = []

    def read_log(failure: PodFailure) -> list[str]:
        asked.append(failure)
        return [f"log of {failure.pod}"]

    witness = Witness(read_log)
    crashed = deleted(pod("Worker", 1, "Running", containerStatuses=[{
        "name": "mindspore", "restartCount": 1, "state": {"running": {"startedAt": "2026-01-01T11:00:20Z"}},
        "lastState": {"terminated": {"exitCode": 3, "reason": "Error", "finishedAt": "2026-01-01T11:00:19Z"}}}]))
    killed = deleted(pod("Worker", 0, "Failed", **terminated(143, "Error", "2026-01-01T11:00:05Z")))
    witness.saw([crashed, killed])
    assert [(f.pod, f.container, f.exit_code, f.previous) for f in asked] == [("j-worker-1", "mindspore", 3, True)]
    assert witness.log_of(asked[0]) == ["log of j-worker-1"]
    assert set(witness.deleted) == {"j-worker-1", "j-worker-0"}


def test_a_follower_keeps_a_log_it_read_and_names_the_containers_it_saw_fail() -> None:
    """A pod whose container restarted (log read), then gone with the job failed: the summary
    names that container's exit code and keeps its log, though a later read found nothing (the
    kubelet had removed it); a pod deleted while it ran is named as such."""
    answers = iter([["worker 1 exits 3"], ["    (no log lines: the kubelet no longer has it)"]])
    witness = Witness(lambda failure: next(answers))
    restarting = pod("Worker", 1, "Running", containerStatuses=[{
        "name": "mindspore", "restartCount": 1, "lastState": {"terminated": {"exitCode": 3, "reason": "Error"}}}])
    witness.saw([restarting, deleted(pod("Worker", 0, "Running"))])
    restarting["status"]["containerStatuses"][0]["restartCount"] = 2
    witness.saw([restarting])
    failure = PodFailure("j-worker-1", "mindspore", 3, "Error", previous=True)
    assert witness.log_of(failure) == ["worker 1 exits 3"]
    found = status.aggregate(policy("indexed-job"), [job("Worker", "Failed:BackoffLimitExceeded")], [])
    witness.explain(found)
    assert [(f.pod, f.container, f.exit_code, f.previous, f.reason) for f in found.failures] == [
        ("j-worker-1", "mindspore", 3, True, "Error"), ("j-worker-0", None, None, False, "deleted while it ran")]


def test_a_kubelet_that_no_longer_has_the_container_answers_no_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kubelet begins a log stream (200) before it looks for the container: one it has
    removed is a line of the body, which is no log line of the container."""
    import httpx2

    from msgen.reconcile import kube

    def answering(body: str) -> Any:
        transport = httpx2.MockTransport(lambda request: httpx2.Response(200, text=body))
        return lambda client: httpx2.Client(transport=transport, base_url="https://api")

    monkeypatch.setattr(kube, "_watch_http", answering("unable to retrieve container logs for containerd://acc818afc93b\n"))
    with pytest.raises(kube.KubeError, match="the kubelet no longer has it"):
        kube.pod_log(None, "ns", "j-worker-1", "mindspore", 10, previous=True)  # type: ignore[arg-type]
    monkeypatch.setattr(kube, "_watch_http", answering("worker 1 exits 3\n"))
    assert kube.pod_log(None, "ns", "j-worker-1", "mindspore", 10) == ["worker 1 exits 3"]  # type: ignore[arg-type]


def test_a_follower_reads_the_log_of_the_instance_that_failed_last() -> None:
    """A container that restarts and fails at once: by the time a follower sees it, the
    instance before its restart may be gone (the kubelet keeps the newest ended one), and
    the current one has ended too: that one's log is read (seen on Kubernetes 1.30)."""
    asked: list[PodFailure] = []

    def read_log(failure: PodFailure) -> list[str]:
        asked.append(failure)
        return ["worker 1 exits 3"]

    witness = Witness(read_log)
    ended = {"terminated": {"exitCode": 3, "reason": "Error"}}
    witness.saw([pod("Worker", 1, "Running", containerStatuses=[
        {"name": "mindspore", "restartCount": 1, "state": ended, "lastState": ended}])])
    witness.saw([pod("Worker", 2, "Running", containerStatuses=[{
        "name": "mindspore", "restartCount": 1, "state": {"running": {}}, "lastState": ended}])])
    assert [(f.pod, f.previous) for f in asked] == [("j-worker-1", False), ("j-worker-2", True)]


def test_a_container_restarted_in_place_whose_last_instance_failed_too_says_so() -> None:
    """The Job controller of 1.30 failed the Job (BackoffLimitExceeded) and deleted the pod
    while the container's instance after its restart had ended too: the summary still says
    it was restarted in place, and its log is that instance's own."""
    from msgen.reconcile import pods as pod_states, watch

    ended = {"terminated": {"exitCode": 3, "reason": "Error"}}
    again = pod_states.pod_failure(pod("Worker", 1, "Failed", containerStatuses=[
        {"name": "mindspore", "restartCount": 1, "state": ended, "lastState": ended}]))
    assert (again.previous, again.restarted) == (False, True)
    once = pod_states.pod_failure(pod("Worker", 1, "Failed", containerStatuses=[
        {"name": "mindspore", "restartCount": 0, "state": ended}]))
    found = status.aggregate(policy("indexed-job"), [job("Worker", "Failed:BackoffLimitExceeded")], [])
    found.failures = [again, once]
    assert watch.summary(found, 4)[1:] == [
        "  failed: pod j-worker-1 container mindspore exit code 3 (Error, restarted in place)",
        "  failed: pod j-worker-1 container mindspore exit code 3 (Error)"]


@pytest.mark.parametrize(("success_policy", "workers", "succeeded", "expected"), [
    ("Worker0", 2, {"Worker": {0}}, True),
    ("Worker0", 2, {"Worker": {1}}, False),
    ("AllWorkers", 2, {"Worker": {0}}, False),
    ("AllWorkers", 2, {"Worker": {0, 1}}, True),
    # No Worker to succeed: the job is never succeeded by its pods. The verdict always said so;
    # the backoffLimit check, which reads the same rule since, once took it for a success.
    ("AllWorkers", 0, {"Worker": set()}, False),
])
def test_the_success_the_pods_show_is_one_rule_for_the_verdict_and_the_backoff_check(
        success_policy: str, workers: int, succeeded: dict[str, set[int]], expected: bool) -> None:
    rules = policy("indexed-job", success_policy=success_policy,
                   roles={"Scheduler": RoleRule(1, "Never"), "Worker": RoleRule(workers, "Never")})
    assert status._succeeded_by_pods(rules, {"Scheduler": set(), **succeeded}) is expected
