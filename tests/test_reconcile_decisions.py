"""The reconciler's pure decisions, with plain data: status, due actions, ApplySets, order."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from typing import Any

import pytest

from msgen.model import run_policy
from msgen.reconcile import actions, applyset, status
from msgen.model.run_policy import RoleRule, JobPolicy

from .conftest import SAMPLES, msgen

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def policy(target: str, **kwargs: Any) -> JobPolicy:
    roles = kwargs.pop("roles", {"Scheduler": RoleRule(1, "Never"), "Worker": RoleRule(2, "Never")})
    return JobPolicy(job="j", target=target, roles=roles, **kwargs)


def pod(role: str, index: int, phase: str, *, name: str | None = None, **extra: Any) -> dict[str, Any]:
    status_: dict[str, Any] = {"phase": phase, "startTime": "2026-01-01T10:00:00Z", **extra}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name or f"j-{role.lower()}-{index}",
            "labels": {
                "training.kubeflow.org/replica-type": role.lower(),
                "training.kubeflow.org/replica-index": str(index),
            },
        },
        "status": status_,
    }


def terminated(code: int, reason: str, at: str = "2026-01-01T11:00:00Z") -> dict[str, Any]:
    return {"containerStatuses": [{"name": "mindspore", "restartCount": 0,
                                   "state": {"terminated": {"exitCode": code, "reason": reason,
                                                            "finishedAt": at}}}]}


def job(role: str, *conditions: str, suspend: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"j-{role.lower()}", "creationTimestamp": "2026-01-01T09:59:00Z"},
        "spec": {"suspend": suspend, "template": {"metadata": {"labels": {
            "training.kubeflow.org/replica-type": role.lower()}}}},
        "status": {"conditions": [
            {"type": c.split(":")[0], "status": "True", "reason": c.split(":")[-1],
             "lastTransitionTime": "2026-01-01T11:00:00Z"} for c in conditions]},
    }  # fmt: skip


# --- the annotation the compiler writes and the reconciler reads -------------------------


def test_every_workload_carries_the_run_policy_and_it_parses_back() -> None:
    run = msgen("render", "--target", "pod", str(SAMPLES / "mindspore" / "widedeep-ps.yaml"))
    assert run.exit_code == 0, run.stderr
    objects = run.objects()
    workloads = [o for o in objects if o["kind"] == "Pod"]
    others = [o for o in objects if o["kind"] != "Pod"]
    assert workloads and all(run_policy.ANNOTATION in o["metadata"]["annotations"] for o in workloads)
    assert not any(run_policy.ANNOTATION in (o["metadata"].get("annotations") or {}) for o in others)
    parsed = run_policy.parse(workloads[0]["metadata"]["annotations"][run_policy.ANNOTATION])
    assert parsed.job == "ms-widedeep-ps" and parsed.target == "pod"
    assert set(parsed.roles) == {"Scheduler", "PS", "Worker"}
    assert parsed.backoff_limit == 2 and parsed.ttl_seconds_after_finished == 3600


@pytest.mark.parametrize("text", ["{", "[]", '{"job": "j"}', '{"job":"j","target":"pod","roles":{"W":{}}}'])
def test_a_foreign_run_policy_is_one_clear_error(text: str) -> None:
    with pytest.raises(run_policy.PolicyError, match="msgen/run-policy"):
        run_policy.parse(text)


def test_render_does_not_import_the_kubernetes_client() -> None:
    code = (
        "import sys, runpy; sys.argv=['msgen','render','--target','pod',"
        f"{str(SAMPLES / 'mindspore' / 'widedeep-ps.yaml')!r}]\n"
        "from msgen.hosts.command_line import cli\n"
        "try:\n    cli.main(standalone_mode=False)\nfinally:\n"
        "    bad=[m for m in sys.modules if m.split('.')[0] in ('lightkube','httpx','httpx2')]\n"
        "    sys.stderr.write('IMPORTED:'+json.dumps(bad) if bad else '')\n"
    )
    done = subprocess.run([sys.executable, "-c", "import json\n" + code],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "IMPORTED" not in done.stderr
    assert "kind: Pod" in done.stdout


# --- aggregated status, every target --------------------------------------------------


def test_pod_target_succeeds_when_worker_0_does() -> None:
    pods = [pod("Scheduler", 0, "Running"), pod("Worker", 0, "Succeeded", **terminated(0, "Completed")),
            pod("Worker", 1, "Running")]
    found = status.aggregate(policy("pod"), [], pods)
    assert found.phase == "Succeeded"
    assert found.replicas["Worker"].succeeded == 1 and found.replicas["Worker"].running == 1
    assert found.completion_time == "2026-01-01T11:00:00Z"
    assert [c.type for c in found.conditions] == ["Created", "Running", "Succeeded"]


def test_all_workers_waits_for_every_worker() -> None:
    pods = [pod("Worker", 0, "Succeeded"), pod("Worker", 1, "Running")]
    rule = policy("pod", success_policy="AllWorkers")
    assert status.aggregate(rule, [], pods).phase == "Running"
    pods[1] = pod("Worker", 1, "Succeeded")
    assert status.aggregate(rule, [], pods).phase == "Succeeded"


def test_worker_1_alone_does_not_succeed_the_default_policy() -> None:
    found = status.aggregate(policy("pod"), [], [pod("Worker", 1, "Succeeded")])
    assert found.phase == "Created"


def test_pod_target_failure_names_pod_container_exit_code() -> None:
    pods = [pod("Worker", 1, "Failed", **terminated(137, "OOMKilled"))]
    found = status.aggregate(policy("pod"), [], pods)
    assert found.phase == "Failed"
    assert found.failures == [status.PodFailure("j-worker-1", "mindspore", 137, "OOMKilled")]
    assert found.conditions[-1].reason == "PodFailed"


def test_dynamic_worker_failure_does_not_fail_the_job() -> None:
    pods = [pod("Worker", 1, "Failed", **terminated(1, "Error")), pod("Worker", 0, "Running")]
    found = status.aggregate(policy("pod", enable_dynamic_worker=True), [], pods)
    assert found.phase == "Running"
    found = status.aggregate(policy("pod"), [], pods)
    assert found.phase == "Failed"


def test_restarting_pods_fail_past_backoff_limit() -> None:
    roles = {"Worker": RoleRule(1, "OnFailure")}
    busy = pod("Worker", 0, "Running", containerStatuses=[{"name": "mindspore", "restartCount": 3}])
    assert status.aggregate(policy("pod", roles=roles, backoff_limit=3), [], [busy]).phase == "Running"
    found = status.aggregate(policy("pod", roles=roles, backoff_limit=2), [], [busy])
    assert (found.phase, found.conditions[-1].reason) == ("Failed", "BackoffLimitExceeded")


def test_indexed_job_failure_is_the_jobs_own_reason() -> None:
    jobs = [job("Scheduler"), job("Worker", "Failed:BackoffLimitExceeded")]
    found = status.aggregate(policy("indexed-job"), jobs, [pod("Scheduler", 0, "Running")])
    assert (found.phase, found.conditions[-1].reason) == ("Failed", "BackoffLimitExceeded")
    # A failed pod of a Job that still retries does not fail the job.
    retrying = status.aggregate(policy("indexed-job"), [job("Worker")], [pod("Worker", 0, "Failed")])
    assert retrying.phase == "Created"


def test_indexed_job_success_survives_pods_being_cleaned() -> None:
    jobs = [job("Scheduler"), job("Worker", "Complete:CompletionsReached")]
    assert status.aggregate(policy("indexed-job"), jobs, []).phase == "Succeeded"
    # The Scheduler's Job completing says nothing about the workers.
    jobs = [job("Scheduler", "Complete:CompletionsReached"), job("Worker")]
    assert status.aggregate(policy("indexed-job"), jobs, []).phase == "Created"


def test_indexed_job_pods_are_indexed_by_completion_index() -> None:
    worker0 = pod("Worker", 0, "Succeeded")
    labels = worker0["metadata"]["labels"]
    del labels["training.kubeflow.org/replica-index"]
    worker0["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": "0"}
    assert status.aggregate(policy("indexed-job"), [job("Worker")], [worker0]).phase == "Succeeded"


def test_jobset_and_volcano_verdicts() -> None:
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "j"},
              "status": {"conditions": [{"type": "Failed", "status": "True", "reason": "FailurePolicy"}]}}
    assert status.aggregate(policy("jobset"), [jobset], []).conditions[-1].reason == "FailurePolicy"
    vc = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
          "status": {"state": {"phase": "Completed"}}}
    assert status.aggregate(policy("volcano"), [vc], []).phase == "Succeeded"
    vc["status"] = {"state": {"phase": "Aborted"}}
    assert status.aggregate(policy("volcano"), [vc], []).phase == "Failed"


def test_a_terminating_volcano_job_has_failed() -> None:
    """Seen on the live harness (tests/test_live_nodes_loss.py): the Scheduler failed after its
    Worker's node was lost, Volcano's TerminateJob set the phase Terminating, and the Volcano Job
    stayed so while the lost node held a pod: `apply --wait` gave no verdict until the node was
    taken out of service. Terminating is Volcano's decision, as a Job's FailureTarget is."""
    vc = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
          "status": {"state": {"phase": "Terminating", "reason": "PodFailed"}}}
    found = status.aggregate(policy("volcano"), [vc], [pod("Worker", 0, "Running")])
    assert (found.phase, found.conditions[-1].reason) == ("Failed", "Terminating")
    vc["status"] = {"state": {"phase": "Restarting"}}  # RestartJob: another run follows, no verdict
    assert status.aggregate(policy("volcano"), [vc], [pod("Worker", 0, "Running")]).phase == "Running"


def test_statefulset_pods_index_by_pod_index_label_and_never_fail_by_pods() -> None:
    worker = pod("Worker", 0, "Running", containerStatuses=[{"name": "m", "restartCount": 9}])
    found = status.aggregate(policy("statefulset", backoff_limit=1), [], [worker])
    assert found.phase == "Running"


def test_job_without_workers_succeeds_when_every_pod_does() -> None:
    roles = {"Scheduler": RoleRule(1, "Never"), "Server": RoleRule(2, "Never")}
    pods = [pod("Scheduler", 0, "Succeeded"), pod("Server", 0, "Succeeded")]
    assert status.aggregate(policy("pod", roles=roles), [], pods).phase == "Created"
    pods.append(pod("Server", 1, "Succeeded"))
    assert status.aggregate(policy("pod", roles=roles), [], pods).phase == "Succeeded"


def test_mxnet_job_follows_its_scheduler() -> None:
    """training-operator's MXJob UpdateJobStatus: the Scheduler's success is the job's."""
    roles = {"Scheduler": RoleRule(1, "Never"), "Server": RoleRule(1, "Never"), "Worker": RoleRule(2, "Never")}
    rule = policy("pod", roles=roles, success_policy="Scheduler")
    workers_done = [pod("Scheduler", 0, "Running"), pod("Worker", 0, "Succeeded"), pod("Worker", 1, "Succeeded")]
    assert status.aggregate(rule, [], workers_done).phase == "Running"
    done = status.aggregate(rule, [], [*workers_done[1:], pod("Scheduler", 0, "Succeeded")])
    assert (done.phase, done.conditions[-1].message) == ("Succeeded", "scheduler 0 succeeded")
    # Jobs whose pods were cleaned: the Scheduler's Job completing decides, the Workers' does not
    rule = policy("indexed-job", roles=roles, success_policy="Scheduler")
    assert status.aggregate(rule, [job("Scheduler"), job("Worker", "Complete:CompletionsReached")], []).phase == "Created"
    assert status.aggregate(rule, [job("Scheduler", "Complete:CompletionsReached"), job("Worker")], []).phase == "Succeeded"


def test_mxnet_tuning_job_follows_its_tuner() -> None:
    """kubeflow mxnet-operator: a tuning job ends with its Tuner; the TVM RPC tracker and
    server still serve."""
    roles = {"TunerTracker": RoleRule(1, "Never"), "TunerServer": RoleRule(1, "Never"), "Tuner": RoleRule(1, "Never")}
    rule = policy("pod", roles=roles, success_policy="Tuner")
    serving = [pod("TunerTracker", 0, "Running"), pod("TunerServer", 0, "Running")]
    assert status.aggregate(rule, [], [*serving, pod("Tuner", 0, "Running")]).phase == "Running"
    done = status.aggregate(rule, [], [*serving, pod("Tuner", 0, "Succeeded")])
    assert (done.phase, done.conditions[-1].message) == ("Succeeded", "tuner 0 succeeded")


def test_status_dict_has_the_msjob_status_shape() -> None:
    found = status.aggregate(policy("pod"), [], [pod("Worker", 0, "Succeeded", **terminated(0, "Completed"))])
    shown = found.to_dict()
    assert shown["replicaStatuses"] == {"Scheduler": {}, "Worker": {"succeeded": 1}}
    assert shown["conditions"][-1]["type"] == "Succeeded"
    assert shown["completionTime"] == "2026-01-01T11:00:00Z"
    json.dumps(shown)


# --- due policy actions ----------------------------------------------------------------


def _decide(rule: JobPolicy, workloads: list[dict[str, Any]], pods: list[dict[str, Any]],
            now: datetime = NOW) -> list[str]:
    found = status.aggregate(rule, workloads, pods)
    return [f"{a.verb} {a.kind} {a.name}" for a in actions.due(rule, found, workloads, pods, now)]


def test_nothing_is_due_while_the_job_runs() -> None:
    assert _decide(policy("pod"), [], [pod("Worker", 0, "Running")]) == []


def test_clean_running_on_bare_pods_deletes_only_running_pods() -> None:
    pods = [pod("Scheduler", 0, "Running"), pod("Worker", 0, "Succeeded"), pod("Worker", 1, "Running")]
    assert _decide(policy("pod"), [], pods) == ["delete Pod j-scheduler-0", "delete Pod j-worker-1"]
    assert _decide(policy("pod", clean_pod_policy="None"), [], pods) == []
    assert _decide(policy("pod", clean_pod_policy="All"), [], pods) == [
        "delete Pod j-scheduler-0", "delete Pod j-worker-0", "delete Pod j-worker-1"]


def test_clean_on_indexed_job_suspends_active_jobs_instead_of_deleting_their_pods() -> None:
    jobs = [job("Scheduler"), job("Worker", "Complete:CompletionsReached")]
    pods = [pod("Scheduler", 0, "Running"), pod("Worker", 0, "Succeeded")]
    assert _decide(policy("indexed-job"), jobs, pods) == ["suspend Job j-scheduler"]
    assert _decide(policy("indexed-job", clean_pod_policy="All"), jobs, pods) == [
        "suspend Job j-scheduler", "delete Pod j-worker-0"]
    jobs[0] = job("Scheduler", suspend=True)
    assert _decide(policy("indexed-job"), jobs, pods) == []


def test_volcano_success_by_worker_0_completes_the_volcano_job() -> None:
    vc = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
          "metadata": {"name": "j", "namespace": "ns", "uid": "u1"}, "status": {"state": {"phase": "Running"}}}
    pods = [pod("Worker", 0, "Succeeded"), pod("Worker", 1, "Running")]
    assert _decide(policy("volcano"), [vc], pods) == ["complete Job j"]
    command = actions.volcano_command(vc)
    assert command["action"] == "CompleteJob"
    # Volcano's Command CRD types `target` as an OwnerReference: apiVersion, kind, name and uid
    # are all required (the API server refused a Command without the uid).
    assert command["target"] == {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "u1"}
    assert command["metadata"]["ownerReferences"][0]["uid"] == "u1"


def test_ttl_deletes_a_bare_pod_job_only_once_it_is_due() -> None:
    pods = [pod("Worker", 0, "Succeeded", **terminated(0, "Completed", "2026-01-01T11:59:00Z"))]
    rule = policy("pod", roles={"Worker": RoleRule(1, "Never")}, ttl_seconds_after_finished=120)
    assert _decide(rule, [], pods) == []
    later = datetime(2026, 1, 1, 12, 1, tzinfo=timezone.utc)
    assert _decide(rule, [], pods, later) == ["delete Pod j-worker-0"]
    # The job's Services go with its pods, as the MSJob's garbage collector took them; the pod
    # that keeps the job's end goes last, once nothing else of the job is left.
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "j"}}
    found = status.aggregate(rule, pods, pods)
    assert [f"{a.verb} {a.kind} {a.name}" for a in actions.due(rule, found, pods, pods, later, [service])] == [
        "delete Service j"]
    assert [f"{a.verb} {a.kind} {a.name}" for a in actions.due(rule, found, pods, pods, later, [])] == [
        "delete Pod j-worker-0"]


# --- ApplySets and order ------------------------------------------------------------------


def test_applyset_id_is_kubectls() -> None:
    # The vectors of kubectl's own tests (k8s.io/kubectl pkg/cmd/apply/apply_test.go).
    assert applyset.applyset_id("my-set", "test") == "applyset-0eFHV8ySqp7XoShsGvyWFQD3s96yqwHmzc4e0HR1dsY-v1"
    assert applyset.applyset_id("my-set", "", "ApplySet", "company.com") == (
        "applyset-rhp1a-HVAVT_dFgyEygyA1BEB82HPp2o10UiFTpqtAs-v1")


def _obj(kind: str, name: str, api: str = "v1", **labels: str) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "ns", "labels": labels}}


def test_parent_lists_group_kinds_as_kubectl_writes_them() -> None:
    objects = [_obj("Service", "s"), _obj("Job", "a", "batch/v1"), _obj("JobSet", "b", "jobset.x-k8s.io/v1alpha2"),
               _obj("ConfigMap", "c")]
    parent = applyset.parent("msgen-j", "ns", objects)
    assert parent["metadata"]["annotations"][applyset.GROUP_KINDS] == "ConfigMap,Job.batch,JobSet.jobset.x-k8s.io,Service"
    assert parent["metadata"]["labels"][applyset.ID_LABEL] == applyset.applyset_id("msgen-j", "ns")
    kept = applyset.parent("msgen-j", "ns", [_obj("Service", "s")], previous_kinds="Job.batch")
    assert kept["metadata"]["annotations"][applyset.GROUP_KINDS] == "Job.batch,Service"


def test_prune_set_is_only_labelled_members_no_longer_rendered() -> None:
    set_id = applyset.applyset_id("msgen-j", "ns")
    live = [
        _obj("Service", "kept", **{applyset.PART_OF: set_id}),
        _obj("Job", "gone", "batch/v1", **{applyset.PART_OF: set_id}),
        _obj("Service", "gone-svc", **{applyset.PART_OF: set_id}),
        _obj("Job", "foreign", "batch/v1", **{applyset.PART_OF: "applyset-other-v1"}),
        _obj("Job", "unlabelled", "batch/v1"),
    ]
    rendered = [_obj("Service", "kept")]
    assert [o["metadata"]["name"] for o in applyset.prune_set(live, rendered, set_id)] == ["gone", "gone-svc"]


def test_default_set_name_is_derived_from_the_job() -> None:
    label = "training.kubeflow.org/job-name"
    assert applyset.default_name([_obj("Job", "a", **{label: "wd"}), _obj("Service", "b", **{label: "wd"})]) == "msgen-wd"
    assert applyset.default_name([_obj("Job", "a", **{label: "x"}), _obj("Job", "b", **{label: "y"})]) is None


def test_apply_order_puts_configuration_services_and_podgroups_before_workloads() -> None:
    objects = [_obj("Job", "w", "batch/v1"), _obj("PodGroup", "g", "scheduling.volcano.sh/v1beta1"),
               _obj("Service", "s"), _obj("Job", "w2", "batch/v1"), _obj("ConfigMap", "c")]
    assert [o["metadata"]["name"] for o in applyset.apply_order(objects)] == ["c", "s", "g", "w", "w2"]


# --- progress output ------------------------------------------------------------------------


def test_progress_is_redrawn_in_place_on_a_terminal_and_one_line_per_change_otherwise() -> None:
    from msgen.reconcile.watch import Lines

    written: list[str] = []
    lines = Lines(written.append, terminal=True)
    lines.progress("j: Created")
    lines.progress("j: Running")
    lines("policy: delete Pod p")
    lines.close()
    assert "".join(written) == "\r\x1b[Kj: Created\r\x1b[Kj: Running\npolicy: delete Pod p\n"
    written.clear()
    plain = Lines(written.append, terminal=False)
    plain.progress("j: Created")
    plain("policy: delete Pod p")
    plain.close()
    assert "".join(written) == "j: Created\npolicy: delete Pod p\n"


# --- retries ---------------------------------------------------------------------------------


def test_calls_are_retried_on_dropped_connections_and_give_up_with_a_named_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx2

    from msgen.reconcile import kube

    slept: list[float] = []
    monkeypatch.setattr("msgen.reconcile.kube.time.sleep", slept.append)
    attempts: list[int] = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
        return "ok"

    assert kube.call("Job ns/j", flaky) == "ok"
    assert slept == [0.5, 1.0]

    def down() -> str:
        raise httpx2.ReadTimeout("slow")

    with pytest.raises(kube.KubeError, match=r"^Job ns/j: no answer from the API server: slow \(ReadTimeout\)$"):
        kube.call("Job ns/j", down)
    assert slept[2:] == [0.5, 1.0, 2.0, 4.0]


def test_each_attempt_is_timed_for_the_request_histogram(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx2

    from msgen.reconcile import kube

    answers: list[tuple[str, int, float | None]] = []

    class Seen:
        def request(self, method: str, code: int, seconds: float | None = None) -> None:
            answers.append((method, code, seconds))

    clock = iter([10.0, 10.25, 20.0, 21.5])
    monkeypatch.setattr("msgen.reconcile.kube.recorder", Seen())
    monkeypatch.setattr("msgen.reconcile.kube.time.monotonic", lambda: next(clock))
    monkeypatch.setattr("msgen.reconcile.kube.time.sleep", lambda _: None)
    attempts: list[int] = []

    def once_dropped() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
        return "ok"

    assert kube.call("Job ns/j", once_dropped, method="PATCH") == "ok"
    assert answers == [("PATCH", 0, 0.25), ("PATCH", 200, 1.5)]


def test_an_invalid_field_is_named_without_the_whole_rejected_value() -> None:
    from msgen.reconcile.kube import invalid_fields

    template = "Invalid value: " + '{"labels":{"a":"b"},"Spec":{"Volumes":null}}' * 50 + ": field is immutable"
    assert invalid_fields([("spec.template", template)]) == "spec.template: field is immutable"
    # A short value is kept: it tells the user what was refused.
    assert invalid_fields([("spec.parallelism", "Invalid value: -1: must be greater than or equal to 0"),
                           (None, "spec.completions: Required value")]) == (
        "spec.parallelism: Invalid value: -1: must be greater than or equal to 0; spec.completions: Required value")
