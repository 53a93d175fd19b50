"""The run policies on `jobset` and `volcano`, watched on real controllers: what
`docs/targets.md` says each becomes, observed on the cluster MSGEN_TEST_KUBECONFIG names.

Needs JobSet and Volcano there (`tests/live/cluster up --with jobset,volcano`; each test skips,
saying so, without its controller). The jobs need no training: the Scheduler sleeps and the
Workers exit with a chosen code, so each case takes seconds, and `msgen apply --wait` judges
the end, as a user would see it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import live_addons
from .conftest import ROOT
from .live_cluster import IMAGE, KUBECONFIG, KUBECTL, kubectl, report, server_version

pytestmark = [
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to run jobs on"),
    pytest.mark.skipif(not KUBECTL, reason="the live tests need kubectl on the PATH"),
]
TARGETS = ["jobset", "volcano"]


@pytest.fixture
def namespace() -> Any:
    name = f"{os.environ.get('MSGEN_TEST_NAMESPACE_PREFIX', 'msgen-test')}-policy-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def job(name: str, worker: str, run_policy: dict[str, Any], restart: str = "Never", scheduler: str = "sleep 600") -> dict[str, Any]:
    def role(command: str, replicas: int, restart_policy: str | None) -> dict[str, Any]:
        spec: dict[str, Any] = {"replicas": replicas, "template": {"spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "mindspore", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                            "command": ["sh", "-c", command]}]}}}
        if restart_policy:
            spec["restartPolicy"] = restart_policy
        return spec

    return {"apiVersion": "mindspore.gitee.com/v1", "kind": "MSJob", "metadata": {"name": name},
            "spec": {"runPolicy": run_policy,
                     "msReplicaSpecs": {"Scheduler": role(scheduler, 1, None), "Worker": role(worker, 2, restart)}}}


def apply_wait(namespace: str, obj: dict[str, Any], tmp_path: Path, target: str, timeout: int = 300) -> tuple[int, str, float]:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(obj))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "msgen", "apply", str(path), "-n", namespace, "--kube-version",
                           server_version(), "--target", target, "--wait", "--timeout", f"{timeout}s"],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "KUBECONFIG": str(KUBECONFIG)},
                          timeout=timeout + 120)
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


def worker_runs(namespace: str, name: str) -> int:
    """How many Worker containers ran: pods that exist, plus their containers' restarts."""
    found = live_addons.pods(namespace, f"training.kubeflow.org/job-name={name},training.kubeflow.org/replica-type=worker")
    return sum(1 + sum(s.get("restartCount", 0) for s in p.get("status", {}).get("containerStatuses") or []) for p in found)


def row(case: str, target: str, result: str, seconds: float) -> None:
    report({"job": case, "target": target, "mode": "cluster-ip", "outcome": result, "seconds": round(seconds)})


@pytest.mark.parametrize("target", TARGETS)
def test_success_by_worker_0_ends_the_job_and_stops_the_scheduler(target: str, namespace: str, tmp_path: Path) -> None:
    live_addons.require(target)
    code, out, seconds = apply_wait(namespace, job("ok", "exit 0", {"cleanPodPolicy": "Running"}), tmp_path, target)
    assert code == 0 and "ok: Succeeded after" in out, out
    # cleanPodPolicy Running: the Scheduler, still sleeping, is stopped when the job ends.
    live_addons.wait_until("the Scheduler pod is stopped", lambda: not live_addons.running_pods(namespace, "ok"), 120)
    row("workers exit 0, Scheduler sleeps (cleanPodPolicy Running)", target, "Succeeded, Scheduler stopped", seconds)


@pytest.mark.parametrize("target", TARGETS)
def test_backoff_limit_fails_the_job_after_its_retries(target: str, namespace: str, tmp_path: Path) -> None:
    live_addons.require(target)
    # Volcano deletes a run's pods as it restarts the job: the pods are watched while it runs.
    seen = live_addons.PodTimes(namespace)
    try:
        code, out, seconds = apply_wait(namespace, job("retries", "exit 3", {"backoffLimit": 1}), tmp_path, target)
    finally:
        seen.stop()
    assert code != 0 and "retries: Failed after" in out, out
    # backoffLimit 1: a Job retries a failed pod once (two Worker runs at least, as many per
    # index as the Job's counting allows); Volcano restarts the whole job once, making each
    # Worker pod again under its name: some Worker ran twice.
    if target == "volcano":
        per_worker = Counter(key.split("#")[0] for key in seen.created if key.startswith("retries-worker-"))
        runs = max(per_worker.values(), default=0)
        assert runs >= 2, f"the Volcano Job restarted once before it failed: Worker pods seen {dict(per_worker)}"
    else:
        runs = worker_runs(namespace, "retries")
        assert runs >= 2, f"the Workers ran again before the job failed: {runs} runs seen"
    row("workers exit 3, backoffLimit 1", target, f"Failed after retrying ({runs} Worker runs seen)", seconds)


@pytest.mark.parametrize("target", TARGETS)
def test_active_deadline_fails_a_job_that_runs_too_long(target: str, namespace: str, tmp_path: Path) -> None:
    live_addons.require(target)
    code, out, seconds = apply_wait(namespace, job("late", "sleep 600", {"activeDeadlineSeconds": 20}), tmp_path, target)
    assert code != 0 and "late: Failed after" in out, out
    assert seconds < 200, f"the deadline (20 s) ended the job, not the sleep (600 s): {seconds:.0f}s"
    row("workers sleep 600, activeDeadlineSeconds 20", target, "Failed at the deadline", seconds)


def test_volcano_clean_pod_policy_none_leaves_the_scheduler_running(namespace: str, tmp_path: Path) -> None:
    # docs/targets.md: on `volcano` the job succeeding stops no pod under cleanPodPolicy None.
    live_addons.require("volcano")
    code, out, seconds = apply_wait(namespace, job("keeps", "exit 0", {"cleanPodPolicy": "None"}), tmp_path, "volcano")
    assert code == 0 and "keeps: Succeeded after" in out, out
    assert live_addons.running_pods(namespace, "keeps") == ["keeps-scheduler-0"], "the Scheduler keeps running"
    row("workers exit 0, Scheduler sleeps (cleanPodPolicy None)", "volcano", "Succeeded, Scheduler left running", seconds)
