"""A chart whose job trains, installed, upgraded, rolled back and uninstalled by the real Helm 3
with msgen as its post-renderer, on a real cluster.

`tests/helm/training` (a Scheduler and Workers running tests/live/train.py from the
ConfigMap `live-train`) is installed with `--run-name=content`, so that the upgrade, which
changes the job, is a new run under new names instead of an update the API server refuses.
Each run must form its MindSpore cluster and train (the checks of
`tests/test_live_training.py`); a bad job must fail `helm install` with msgen's message and
leave nothing behind; uninstall must remove every object. Runs when MSGEN_TEST_KUBECONFIG
names a cluster that trains and Helm 3 is built (`python
tests/live/harness/components/helm.py build`, or MSGEN_TEST_HELM); otherwise it skips.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import live_cluster
from .live_cluster import KUBECONFIG, KUBECTL, Outcome, PodLogs, Prepared, kubectl
from .test_helm import CHART, find_helm
from .test_live_renames import wait_for_jobs
from .test_live_training import assert_trained

HELM = find_helm(3)
pytestmark = [
    pytest.mark.live_training,
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to train on"),
    pytest.mark.skipif(not KUBECTL, reason="the live training tests need kubectl on the PATH"),
    pytest.mark.skipif(HELM is None, reason="helm 3 is not here: python tests/live/harness/components/helm.py build"),
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


def helm(namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    assert HELM is not None
    return subprocess.run([HELM, "--kubeconfig", str(KUBECONFIG), "-n", namespace, *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"]})


def post_renderer(*options: str) -> list[str]:
    args = ["--post-renderer", "msgen", "--post-renderer-args", "helm-post-renderer",
            f"--post-renderer-args=--kube-version={live_cluster.server_version()}"]
    return args + [f"--post-renderer-args={option}" for option in options]


def run_name(namespace: str, release: str) -> str:
    """The job's name as the installed manifest has it (`<release>-lenet-<8 hex>`)."""
    manifest = helm(namespace, "get", "manifest", release).stdout
    names = {d["metadata"]["labels"]["training.kubeflow.org/job-name"] for d in yaml.safe_load_all(manifest)
             if d and "training.kubeflow.org/job-name" in (d["metadata"].get("labels") or {})}
    assert len(names) == 1, names
    return names.pop()


def trained(namespace: str, job: str, workers: int, logs: PodLogs, started: float) -> None:
    completed = wait_for_jobs(namespace, job, TIMEOUT)
    logs.stop()
    outcome = Outcome(0 if completed else 1, "", "", time.monotonic() - started, logs)
    assert completed, f"the Jobs of {job} did not complete"
    assert_trained(outcome, Prepared({"metadata": {"name": job}}, [], workers, 0, True), "cluster-ip")


def test_a_chart_installs_upgrades_rolls_back_and_uninstalls(namespace: str) -> None:
    values = ["--set", f"job.image={live_cluster.IMAGE}"]
    logs, started = PodLogs(namespace), time.monotonic()
    installed = helm(namespace, "install", "train", str(CHART), *values, *post_renderer("--run-name=content"))
    assert installed.returncode == 0, installed.stderr
    first = run_name(namespace, "train")
    trained(namespace, first, 2, logs, started)

    logs, started = PodLogs(namespace), time.monotonic()
    upgraded = helm(namespace, "upgrade", "train", str(CHART), *values, "--set", "job.workers=1",
                    *post_renderer("--run-name=content"))
    assert upgraded.returncode == 0, upgraded.stderr
    second = run_name(namespace, "train")
    assert second != first, "a changed job is a new run"
    trained(namespace, second, 1, logs, started)
    assert gone(namespace, f"training.kubeflow.org/job-name={first}"), "the upgrade removed the first run"

    logs, started = PodLogs(namespace), time.monotonic()
    rolled = helm(namespace, "rollback", "train", "1")
    assert rolled.returncode == 0, rolled.stderr
    assert run_name(namespace, "train") == first
    trained(namespace, first, 2, logs, started)  # the stored, compiled revision 1: it runs again

    removed = helm(namespace, "uninstall", "train", "--wait")
    assert removed.returncode == 0, removed.stderr
    assert gone(namespace, "app.kubernetes.io/managed-by=Helm"), "uninstall removed every object"


def gone(namespace: str, selector: str, timeout: float = 120) -> bool:
    """Whether no Job, Service, ConfigMap or ServiceAccount matches `selector` within `timeout`
    (deletion by the API server and the garbage collector takes a moment)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = kubectl("get", "jobs,services,configmaps,serviceaccounts", "-n", namespace, "-l", selector,
                       "-o", "name").stdout.split()
        if not left:
            return True
        time.sleep(2)
    return False


def test_a_bad_job_fails_the_install_and_applies_nothing(namespace: str) -> None:
    done = helm(namespace, "install", "bad", str(CHART), "--set", "job.workers=-2", *post_renderer())
    assert done.returncode != 0
    assert "spec.msReplicaSpecs.Worker.replicas: -2 is not accepted" in done.stderr
    assert helm(namespace, "list", "-q").stdout.strip() == ""
    objects: Any = kubectl("get", "all,configmaps,serviceaccounts", "-n", namespace, "-o", "name").stdout.split()
    assert [o for o in objects if "bad-" in o] == []
