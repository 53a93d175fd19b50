"""`runPolicy.backoffLimit` across the roles of a job: msgen writes it on each role's Job,
each Job counts only its own failures, and the reconciler counts them over the whole job, as
ms-operator did (pure decisions, plain data)."""

from __future__ import annotations

from typing import Any

import pytest

from msgen.reconcile import retries, status
from msgen.model.run_policy import RoleRule

from .conftest import SAMPLES, msgen
from .test_reconcile_decisions import _decide, job, pod, policy

ROLES = {"Scheduler": RoleRule(1, "OnFailure"), "Worker": RoleRule(2, "OnFailure")}


def restarting(role: str, index: int, restarts: int) -> dict[str, Any]:
    return pod(role, index, "Running", containerStatuses=[{"name": "mindspore", "restartCount": restarts}])


def failed_job(role: str, failed: int) -> dict[str, Any]:
    found = job(role)
    found["status"]["failed"] = failed
    return found


def test_failures_of_several_roles_past_the_limit_fail_the_job() -> None:
    # Each Job is within backoffLimit 2 (2 restarts, 2 failed pods): ms-operator's count, 4, is not.
    pods = [restarting("Scheduler", 0, 2), restarting("Worker", 0, 0), restarting("Worker", 1, 0)]
    jobs = [job("Scheduler"), failed_job("Worker", 2)]
    rule = policy("indexed-job", roles=ROLES, backoff_limit=2)
    found = status.aggregate(rule, jobs, pods)
    assert (found.phase, found.conditions[-1].reason) == ("Failed", "BackoffLimitExceeded")
    assert found.conditions[-1].message.startswith("4 failures across the job's roles (Scheduler 2, Worker 2), more than backoffLimit 2")
    # ... and the clean-up stops the Jobs still running (cleanPodPolicy Running, the default)
    assert _decide(rule, jobs, pods) == ["suspend Job j-scheduler", "suspend Job j-worker"]


def test_within_the_limit_or_in_one_role_the_jobs_judge_themselves() -> None:
    pods = [restarting("Scheduler", 0, 1), restarting("Worker", 0, 1)]
    assert status.aggregate(policy("indexed-job", roles=ROLES, backoff_limit=2), [job("Scheduler"), job("Worker")], pods).phase == "Running"
    one_role = [restarting("Scheduler", 0, 0), restarting("Worker", 0, 3)]
    assert status.aggregate(policy("indexed-job", roles=ROLES, backoff_limit=2), [job("Scheduler"), job("Worker")], one_role).phase == "Running"
    assert status.aggregate(policy("indexed-job", roles=ROLES), [job("Scheduler"), job("Worker")], pods).phase == "Running"


def test_failed_pods_count_once_whether_the_job_or_its_pods_show_them() -> None:
    pods = [pod("Scheduler", 0, "Failed"), pod("Worker", 0, "Failed"), pod("Worker", 1, "Running")]
    rule = policy("indexed-job", roles={"Scheduler": RoleRule(1, "Never"), "Worker": RoleRule(2, "Never")}, backoff_limit=2)
    assert retries.failures_by_role(rule, [failed_job("Scheduler", 1), failed_job("Worker", 1)], pods) == {"Scheduler": 1, "Worker": 1}
    assert retries.failures_by_role(rule, [job("Scheduler"), failed_job("Worker", 3)], pods) == {"Scheduler": 1, "Worker": 3}
    assert status.aggregate(rule, [job("Scheduler"), failed_job("Worker", 3)], pods).phase == "Failed"


def test_pods_stopped_by_a_deletion_and_dynamic_workers_are_not_counted() -> None:
    deleted = pod("Scheduler", 0, "Failed")
    deleted["metadata"]["deletionTimestamp"] = "2026-01-01T11:00:00Z"
    rule = policy("indexed-job", roles=ROLES, backoff_limit=0)
    assert retries.failures_by_role(rule, [], [deleted, restarting("Worker", 0, 1)]) == {"Worker": 1}
    dynamic = policy("indexed-job", roles=ROLES, backoff_limit=0, enable_dynamic_worker=True)
    assert retries.failures_by_role(dynamic, [], [restarting("Scheduler", 0, 1), restarting("Worker", 0, 5)]) == {"Scheduler": 1}


@pytest.mark.parametrize("target", ["pod", "volcano", "statefulset"])
def test_only_targets_whose_roles_count_apart_are_counted_here(target: str) -> None:
    pods = [restarting("Scheduler", 0, 2), restarting("Worker", 0, 2)]
    found = status.aggregate(policy(target, roles=ROLES, backoff_limit=3), [], pods)
    assert found.conditions[-1].message == "" or "across the job's roles" not in found.conditions[-1].message


def test_a_job_of_several_roles_with_backoff_limit_says_where_it_is_counted() -> None:
    sample = str(SAMPLES / "mindspore" / "widedeep-ps.yaml")  # Scheduler, PS and Workers, backoffLimit 2
    run = msgen("render", sample)
    assert "runPolicy.backoffLimit: a limit shared by several roles needs `msgen apply --wait` or `msgen controller` with target indexed-job" in run.stderr
    assert "each role's Job counts only its own failures against backoffLimit" in run.stderr
    assert "several roles is only partly expressed by target jobset" in msgen("render", "-t", "jobset", sample).stderr
    assert "several roles" not in msgen("render", "-t", "volcano", sample).stderr
