"""The batch/v1 Job health check on the statuses a live cluster writes now.

testdata/ holds statuses captured once; this runs the same cases against the cluster at hand
(its Job controller's conditions and messages), including a Job msgen's reconciler really
stopped at the end of its training (`msgen apply --wait`). Runs when MSGEN_TEST_KUBECONFIG
names a cluster whose pods run and that has the image localhost/mindspore-cpu:2.10.0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ROOT
from .test_argocd_health import CHECKS, ArgoLua
from .test_gitops_lifecycle_live import kubectl

KUBECONFIG = os.environ.get("MSGEN_TEST_KUBECONFIG")
pytestmark = pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to test against")
SCRIPT = (CHECKS["resource.customizations.health.batch_Job"] / "health.lua").read_text()
IMAGE = "localhost/mindspore-cpu:2.10.0"


def job(name: str, command: str, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": IMAGE, "imagePullPolicy": "IfNotPresent", "command": ["sh", "-c", command]}
    if spec.pop("unschedulable", False):
        container["resources"] = {"requests": {"cpu": "500"}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {
        "backoffLimit": 0, **spec, "template": {"spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                                                          "containers": [container]}}}}


MSJOB = f"""\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {{name: stopped}}
spec:
  runPolicy: {{cleanPodPolicy: Running}}
  msReplicaSpecs:
    Scheduler:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers: [{{name: mindspore, image: {IMAGE}, imagePullPolicy: IfNotPresent, command: [sleep, "600"]}}]
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers: [{{name: mindspore, image: {IMAGE}, imagePullPolicy: IfNotPresent, command: ["true"]}}]
"""


@pytest.fixture
def namespace() -> Any:
    name = f"{os.environ.get('MSGEN_TEST_NAMESPACE_PREFIX', 'msgen-test')}-health-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def health(namespace: str, name: str) -> dict[str, str]:
    return ArgoLua().health(SCRIPT, json.loads(kubectl("-n", namespace, "get", "job", name, "-o", "json").stdout))


def wait_health(namespace: str, name: str, status: str, timeout: float = 240) -> dict[str, str]:
    end = time.monotonic() + timeout
    while (found := health(namespace, name))["status"] != status:
        assert time.monotonic() < end, f"{name}: {found}, not {status}"
        time.sleep(2)
    return found


def test_job_health_on_live_statuses(tmp_path: Path, namespace: str) -> None:
    jobs = [
        job("running", "sleep 600"),
        job("succeeded", "true"),
        job("failed", "false"),
        job("waiting", "true", suspend=True),
        job("pending", "true", unschedulable=True),
        job("admitted", "sleep 600", suspend=True),
    ]
    kubectl("-n", namespace, "apply", "-f", "-", input=yaml.safe_dump_all(jobs))
    kubectl("-n", namespace, "patch", "job", "admitted", "--type", "merge", "-p", '{"spec":{"suspend":false}}')
    assert wait_health(namespace, "succeeded", "Healthy")["message"] == "Reached expected number of succeeded pods"
    assert wait_health(namespace, "failed", "Degraded")["message"] == "Job has reached the specified backoff limit"
    assert wait_health(namespace, "waiting", "Suspended")["message"] == "Job suspended"
    assert health(namespace, "running")["status"] == "Progressing"
    assert health(namespace, "pending")["status"] == "Progressing"
    assert wait_health(namespace, "admitted", "Progressing")["message"] == "Job resumed"
    # a training job whose worker 0 succeeded while its Scheduler still ran: the reconciler
    # suspends the Scheduler Job (cleanPodPolicy Running), which then reads Healthy
    (tmp_path / "job.yaml").write_text(MSJOB)
    done = subprocess.run(
        [sys.executable, "-m", "msgen", "apply", str(tmp_path / "job.yaml"), "-n", namespace, "--kube-version", "1.36",
         "--wait", "--timeout", "4m"],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "KUBECONFIG": str(KUBECONFIG)}, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "policy: suspend Job stopped-scheduler" in done.stdout + done.stderr
    found = wait_health(namespace, "stopped-scheduler", "Healthy")
    assert found["message"] == "stopped by msgen: job succeeded; cleanPodPolicy Running"
