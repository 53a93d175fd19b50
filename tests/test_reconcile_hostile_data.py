"""One tenant's data never stops the controller for every tenant.

The controller serves every msgen job of the namespaces it watches with one process: an
exception out of one job's reconcile would end it (and its restarts would end the same way),
so no job's policies would be carried out. Whatever a job's owner writes on their own
objects (a `msgen/stopped-at` that is no time) is read as nothing, and whatever else one job
raises skips that job alone, saying so.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from msgen.model import run_policy
from msgen.reconcile import actions, controller, status, watch
from msgen.reconcile.metrics import NOTHING
from msgen.reconcile.workqueue import WorkQueue
from msgen.reconcile.writes import Writes

from .test_reconcile_decisions import NOW


def suspended_job(stopped_at: str) -> dict[str, Any]:
    text = json.dumps({"job": "j", "target": "indexed-job", "ttlSecondsAfterFinished": 0,
                       "roles": {"Worker": {"replicas": 1, "restartPolicy": "Never"}}},
                      sort_keys=True, separators=(",", ":"))  # fmt: skip
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j-worker", "uid": "u", "namespace": "ns",
                         "labels": {"training.kubeflow.org/job-name": "j"},
                         "annotations": {run_policy.ANNOTATION: text, actions.STOPPED_AT: stopped_at,
                                         actions.STOPPED_ANNOTATION: "job ended"}},
            "spec": {"suspend": True, "template": {"metadata": {"labels": {
                "training.kubeflow.org/replica-type": "worker"}}}}, "status": {}}  # fmt: skip


@pytest.mark.parametrize("stopped_at", ["not a time", "2026-13-45T99:00:00Z", "2026-01-01T00:00:00", "\x00"])
def test_a_stopped_at_that_is_no_time_is_no_ttl(stopped_at: str) -> None:
    policy, workloads, pods = watch.select("j", "ns", [suspended_job(stopped_at)])
    found = status.aggregate(policy, workloads, pods)
    due = actions.due(policy, found, workloads, pods, NOW, [])
    expiries = actions.ttl_expiries(policy, found, workloads)
    if stopped_at == "2026-01-01T00:00:00":  # a time without its zone is UTC, as Kubernetes writes
        assert [a.describe() for a in due] == [
            "delete Job j-worker: ttlSecondsAfterFinished 0 passed (suspended by cleanPodPolicy)"]
        assert len(expiries) == 1
    else:
        assert (due, expiries) == ([], [])


class _View:
    """What reconcile_queued reads of the cluster view: the queue and each job's objects."""

    def __init__(self, jobs: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
        self.queue = WorkQueue()
        self._jobs = jobs
        self.queue.add_all(sorted(jobs))

    def jobs(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
        return {k: self._jobs[k] for k in keys if k in self._jobs}


def test_an_unforeseen_error_in_one_job_skips_that_job_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def reconcile(client: Any, namespace: str, job: str, objects: list[dict[str, Any]], *args: Any,
                  **kwargs: Any) -> tuple[status.JobStatus, float | None]:
        if job == "bad":
            raise ZeroDivisionError("\x1b[2J" + "x" * 1000)
        return status.JobStatus(job=job, phase="Running"), None

    monkeypatch.setattr(controller, "reconcile_job", reconcile)
    said: list[str] = []
    phases: dict[tuple[str, str], str] = {}
    view = _View({("ns", "bad"): [], ("ns", "good"): []})
    controller.reconcile_queued(None, view, said.append, lambda: True,  # type: ignore[arg-type]
                                writes=Writes(), recorder=NOTHING, phases=phases)
    assert phases == {("ns", "good"): "Running"}
    assert len(said) == 1 and said[0].startswith("ns/bad: skipped: internal error: ZeroDivisionError: '\\x1b[2J")
    assert "\x1b" not in said[0] and len(said[0]) < 300
    assert view.queue.next_in() is not None  # tried again later, with backoff
