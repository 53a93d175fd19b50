"""A chart whose job trains, installed, upgraded, rolled back and uninstalled by the real Helm 3
and Helm 4 with msgen as their post-renderer, on a real cluster.

`tests/helm/training` (a Scheduler and Workers running tests/live/train.py from the
ConfigMap `live-train`) is installed with `--run-name=content`, so that the upgrade, which
changes the job, is a new run under new names instead of an update the API server refuses.
Each run must form its MindSpore cluster and train (the checks of
`tests/test_live_training.py`); a bad job must fail `helm install` with msgen's message and
leave nothing behind; uninstall must remove every object. Helm 3 runs `msgen
helm-post-renderer` itself (`--post-renderer msgen-k8s --post-renderer-args helm-post-renderer`);
Helm 4 runs the plug-in `msgen install-helm-plugin` writes (`--post-renderer msgen`), from a
plugins directory of the test's own. Runs when MSGEN_TEST_KUBECONFIG names a cluster that
trains, for each Helm that is built (`python tests/live/harness/components/helm.py build`, or
MSGEN_TEST_HELM / MSGEN_TEST_HELM4); otherwise it skips, saying so.
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
from .test_helm import BUILD, CHART, find_helm
from .test_live_renames import wait_for_jobs
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


class Helm:
    """One Helm major version, with msgen as its post-renderer, and the environment it runs in."""

    def __init__(self, major: int, binary: str, plugins: Path):
        self.major, self.binary = major, binary
        base = {k: v for k, v in os.environ.items() if not k.startswith("HELM_")}
        self.env = {**base, "PATH": BIN + os.pathsep + os.environ["PATH"], "HELM_PLUGINS": str(plugins)}

    def __call__(self, namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.binary, "--kubeconfig", str(KUBECONFIG), "-n", namespace, *args],
                              capture_output=True, text=True, timeout=300, env=self.env)

    def post_renderer(self, *options: str) -> list[str]:
        """Helm 3: the command (`msgen-k8s`, which no other tool has) and its first argument;
        Helm 4: the plug-in, by name."""
        args = ["--post-renderer", "msgen-k8s" if self.major == 3 else "msgen"]
        if self.major == 3:
            args += ["--post-renderer-args", "helm-post-renderer"]
        options = (f"--kube-version={live_cluster.server_version()}", *options)
        return args + [f"--post-renderer-args={option}" for option in options]


@pytest.fixture(params=[3, 4], ids=["helm3", "helm4"])
def helm(request: pytest.FixtureRequest, tmp_path: Path) -> Helm:
    major: int = request.param
    binary = find_helm(major)
    if binary is None:
        variable = "MSGEN_TEST_HELM" if major == 3 else "MSGEN_TEST_HELM4"
        pytest.skip(f"helm {major} is not here: " + BUILD.format(dir="helm" if major == 3 else "helm4",
                                                                 variable=variable))
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    if major == 4:
        installed = subprocess.run([f"{BIN}/msgen", "install-helm-plugin", "--plugins-dir", str(plugins)],
                                   capture_output=True, text=True)
        assert installed.returncode == 0, installed.stderr
    return Helm(major, binary, plugins)


def run_name(helm: Helm, namespace: str, release: str) -> str:
    """The job's name as the installed manifest has it (`<release>-lenet-<8 hex>`)."""
    manifest = helm(namespace, "get", "manifest", release).stdout
    names = {d["metadata"]["labels"]["training.kubeflow.org/job-name"] for d in yaml.safe_load_all(manifest)
             if d and "training.kubeflow.org/job-name" in (d["metadata"].get("labels") or {})}
    assert len(names) == 1, names
    return str(names.pop())


def trained(namespace: str, job: str, workers: int, logs: PodLogs, started: float) -> None:
    """`job`'s Jobs completed and its pods' logs show it trained. Only its own pods count: the
    finished pods of the run before an upgrade are still there while the new run starts."""
    completed = wait_for_jobs(namespace, job, TIMEOUT)
    logs.stop()
    own = [key for key in logs.logs if key.startswith(f"{job}-")]
    outcome = Outcome(0 if completed else 1, "", "", time.monotonic() - started, logs, own)
    assert completed, f"the Jobs of {job} did not complete"
    assert_trained(outcome, Prepared({"metadata": {"name": job}}, [], workers, 0, True), "cluster-ip")


def test_a_chart_installs_upgrades_rolls_back_and_uninstalls(helm: Helm, namespace: str) -> None:
    values = ["--set", f"job.image={live_cluster.IMAGE}"]
    took: dict[str, float] = {}

    def timed(step: str, *args: str) -> subprocess.CompletedProcess[str]:
        began = time.monotonic()
        done = helm(namespace, *args)
        took[step] = time.monotonic() - began
        assert done.returncode == 0, f"helm {step}: {done.stderr}"
        return done

    logs, started = PodLogs(namespace), time.monotonic()
    timed("install", "install", "train", str(CHART), *values, *helm.post_renderer("--run-name=content"))
    first = run_name(helm, namespace, "train")
    trained(namespace, first, 2, logs, started)
    took["install trained"] = time.monotonic() - started

    logs, started = PodLogs(namespace), time.monotonic()
    timed("upgrade", "upgrade", "train", str(CHART), *values, "--set", "job.workers=1",
          *helm.post_renderer("--run-name=content"))
    second = run_name(helm, namespace, "train")
    assert second != first, "a changed job is a new run"
    trained(namespace, second, 1, logs, started)
    took["upgrade trained"] = time.monotonic() - started
    assert gone(namespace, f"training.kubeflow.org/job-name={first}"), "the upgrade removed the first run"

    logs, started = PodLogs(namespace), time.monotonic()
    timed("rollback", "rollback", "train", "1")
    assert run_name(helm, namespace, "train") == first
    trained(namespace, first, 2, logs, started)  # the stored, compiled revision 1: it runs again
    took["rollback trained"] = time.monotonic() - started

    timed("uninstall", "uninstall", "train", "--wait")
    assert gone(namespace, "app.kubernetes.io/managed-by=Helm"), "uninstall removed every object"
    # what bench/README.md records
    print(f"helm {helm.major}: " + ", ".join(f"{step} {seconds:.1f}s" for step, seconds in took.items()))


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


def test_a_bad_job_fails_the_install_and_applies_nothing(helm: Helm, namespace: str) -> None:
    done = helm(namespace, "install", "bad", str(CHART), "--set", "job.workers=-2", *helm.post_renderer())
    assert done.returncode != 0
    assert "spec.msReplicaSpecs.Worker.replicas: -2 is not accepted" in done.stderr
    assert helm(namespace, "list", "-q").stdout.strip() == ""
    objects: Any = kubectl("get", "all,configmaps,serviceaccounts", "-n", namespace, "-o", "name").stdout.split()
    assert [o for o in objects if "bad-" in o] == []
