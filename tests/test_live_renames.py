"""A job renamed by kustomize's namePrefix trains on a real cluster, in both address modes.

The overlay renames the job where msgen reads it (`namePrefix` beside the `msgen-krm`
transformer, as docs/gitops.md says), kustomize 4.5.4 builds it, `kubectl apply` applies it
and the pods' logs must show a job that formed its cluster and trained (the checks of
`tests/test_live_training.py`). Runs when MSGEN_TEST_KUBECONFIG names a cluster that trains
(see that module), with kubectl and kustomize; otherwise it skips, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import live_cluster
from .conftest import ROOT, kustomize_binary
from .live_cluster import KUBECONFIG, KUBECTL, Outcome, PodLogs, kubectl, prepare
from .test_live_training import assert_trained

pytestmark = [
    pytest.mark.live_training,
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to train on"),
    pytest.mark.skipif(not KUBECTL, reason="the live training tests need kubectl on the PATH"),
]
TIMEOUT = int(os.environ.get("MSGEN_LIVE_TIMEOUT", "900"))
BIN = str(Path(sys.executable).parent)


@pytest.fixture
def namespace() -> Any:
    name = f"{os.environ.get('MSGEN_TEST_NAMESPACE_PREFIX', 'msgen-live')}-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    live_cluster.create_script_config_map(name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def wait_for_jobs(namespace: str, job: str, timeout: float) -> bool:
    """Whether every Job of `job` (by msgen's label) completed within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = kubectl("get", "jobs", "-n", namespace, "-l", f"training.kubeflow.org/job-name={job}", "-o",
                        "yaml", check=False)
        items = (yaml.safe_load(found.stdout) or {}).get("items") or [] if found.returncode == 0 else []
        conditions = [{c["type"] for c in (j.get("status") or {}).get("conditions") or [] if c["status"] == "True"}
                      for j in items]
        if any("Failed" in c for c in conditions):
            return False
        if items and all("Complete" in c for c in conditions):
            return True
        time.sleep(3)
    return False


@pytest.mark.parametrize("mode", ["cluster-ip", "dns"])
def test_a_job_under_name_prefix_trains(mode: str, namespace: str, tmp_path: Path) -> None:
    kustomize = kustomize_binary()
    if kustomize is None:
        pytest.skip("kustomize not installed (.ci/fetch-kustomize installs it)")
    job = prepare((ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text())
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "job.yaml").write_text(yaml.safe_dump(job.job))
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [job.yaml]\n")
    overlay = tmp_path / "prod"
    shutil.copytree(ROOT / "overlays" / "gpu", overlay)
    (overlay / "msgen.yaml").write_text((overlay / "msgen.yaml").read_text().replace(
        "target: indexed-job", f"target: indexed-job\n  scheduler-address: {mode}\n"
        f"  kube-version: \"{live_cluster.server_version()}\""))
    (overlay / "kustomization.yaml").write_text(
        "resources: [../base]\nnamePrefix: prod-\ntransformers: [msgen.yaml, msgen-ran.yaml]\n"
        "configurations: [msgen-kustomize.yaml]\n")
    built = subprocess.run([kustomize, "build", "--enable-alpha-plugins", "--enable-exec", str(overlay)],
                           capture_output=True, text=True,
                           env={**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", "")})
    assert built.returncode == 0, built.stderr
    renamed = f"prod-{job.name}"
    assert f"name: {renamed}-scheduler" in built.stdout
    logs = PodLogs(namespace)
    started = time.monotonic()
    applied = subprocess.run([str(KUBECTL), "--kubeconfig", str(KUBECONFIG), "apply", "-n", namespace, "-f", "-"],
                             input=built.stdout, capture_output=True, text=True, timeout=120)
    assert applied.returncode == 0, applied.stderr
    completed = wait_for_jobs(namespace, renamed, TIMEOUT)
    logs.stop()
    outcome = Outcome(0 if completed else 1, applied.stdout, applied.stderr, time.monotonic() - started, logs)
    assert completed, f"the Jobs of {renamed} did not complete"
    job.job["metadata"]["name"] = renamed
    assert_trained(outcome, job, mode)
