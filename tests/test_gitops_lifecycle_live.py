"""The lifecycle decisions for Argo CD, on a real cluster: what Argo CD would see after a sync.

The plugin renders as the cmp-server runs it; the output is applied as Argo CD's default sync
applies it (`kubectl apply`, client-side, with the last-applied annotation Argo CD's diff
reads) and compared as its diff compares (`kubectl diff` against that annotation). Runs when
MSGEN_TEST_KUBECONFIG names a cluster whose pods run (kubelet, controllers, the TTL
controller) and the image localhost/mindspore-cpu:2.10.0 is present; each test works in a
namespace of its own and deletes it afterwards. Each decision is shown beside the output
without it, on the same cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import live_addons
from .conftest import msgen
from .test_gitops_argocd import PLUGIN, argocd_env, run_command

KUBECONFIG = os.environ.get("MSGEN_TEST_KUBECONFIG")
pytestmark = pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to test against")
KUBECTL = shutil.which("kubectl")
IMAGE = "localhost/mindspore-cpu:2.10.0"

JOB = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: {name}
spec:
  runPolicy: {{ttlSecondsAfterFinished: 3}}
  msReplicaSpecs:
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers:
            - name: mindspore
              image: {image}
              imagePullPolicy: IfNotPresent
              command: [sh, -c, "{command}"]
"""


def kubectl(*args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    assert KUBECTL, "kubectl is needed for the live tests"
    return subprocess.run([KUBECTL, "--kubeconfig", str(KUBECONFIG), *args], capture_output=True, text=True,
                          check=check, input=input, timeout=120)


@pytest.fixture
def namespace() -> Any:
    name = f"{os.environ.get('MSGEN_TEST_NAMESPACE_PREFIX', 'msgen-test')}-gitops-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def plugin_render(tmp_path: Path, namespace: str, job: str, **params: str) -> str:
    """What the Argo CD plugin prints for an application holding `job`."""
    app = tmp_path / f"app-{uuid.uuid4().hex[:6]}"
    app.mkdir()
    (app / "job.yaml").write_text(job)
    version = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]["gitVersion"]
    served = "v1,v1/Pod,v1/Service,batch/v1,batch/v1/Job,kueue.x-k8s.io/v1beta1,kueue.x-k8s.io/v1beta1/LocalQueue"
    parameters = json.dumps([{"name": k.replace("_", "-"), "string": v} for k, v in params.items()])
    env = argocd_env(app, ARGOCD_APP_NAMESPACE=namespace, KUBE_VERSION=version.lstrip("v"),
                     KUBE_API_VERSIONS=served, ARGOCD_APP_PARAMETERS=parameters)
    done = run_command(PLUGIN["spec"]["generate"], app, env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def sync(manifests: str) -> subprocess.CompletedProcess[str]:
    """Argo CD's default sync: kubectl apply (client-side, last-applied annotation)."""
    return kubectl("apply", "-f", "-", input=manifests, check=False)


def out_of_sync(manifests: str) -> str:
    """Argo CD's diff of the desired manifests against the live objects ('' when in sync)."""
    done = kubectl("diff", "-f", "-", input=manifests, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def wait_for(what: str, test: Any, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(2)


def job_exists(namespace: str, name: str) -> bool:
    return kubectl("-n", namespace, "get", "job", name, check=False).returncode == 0


def job_complete(namespace: str, name: str) -> bool:
    done = kubectl("-n", namespace, "get", "job", name, "-o", "json", check=False)
    if done.returncode != 0:
        return False
    conditions = json.loads(done.stdout).get("status", {}).get("conditions") or []
    return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)


def test_a_finished_job_stays_so_self_heal_has_nothing_to_recreate(tmp_path: Path, namespace: str) -> None:
    """Rendered for kubectl, the Job is deleted by the TTL controller once it finished:
    Argo CD would see it Missing, self-heal would create it and it would run again. The
    plugin's Job stays: it is in sync, and nothing runs again."""
    gitops = plugin_render(tmp_path, namespace, JOB.format(name="kept", image=IMAGE, command="exit 0"))
    plain = msgen("render", "-", "-n", namespace, "--kube-version", "1.36",
                  input=JOB.format(name="ttl", image=IMAGE, command="exit 0"))
    assert plain.exit_code == 0, plain.stderr
    assert sync(gitops).returncode == 0 and sync(plain.stdout).returncode == 0
    wait_for("both Jobs to complete", lambda: job_complete(namespace, "kept-worker") and job_complete(namespace, "ttl-worker"))
    wait_for("the TTL controller to delete the kubectl Job", lambda: not job_exists(namespace, "ttl-worker"))
    assert "+  name: ttl-worker" in out_of_sync(plain.stdout)  # Missing: a sync would create it again
    assert job_exists(namespace, "kept-worker")
    assert out_of_sync(gitops) == ""


def admit(namespace: str, name: str, kueue: bool) -> None:
    """Kueue's admission of a labelled Job: with Kueue on the cluster, wait until it resumed
    the Job; without, make its two patches (its webhook suspends the Job at creation, admission
    resumes it), both as Kueue's own field manager."""
    if kueue:
        wait_for(f"Kueue to admit {name}", lambda: json.loads(kubectl(
            "-n", namespace, "get", "job", name, "-o", "json").stdout)["spec"].get("suspend") is False)
        return
    for suspend in (True, False):
        kubectl("-n", namespace, "patch", "job", name, "--type", "merge", "--field-manager", "kueue",
                "-p", json.dumps({"spec": {"suspend": suspend}}))


def test_a_job_kueue_admitted_is_in_sync(tmp_path: Path, namespace: str) -> None:
    """The plugin's Job sets no spec.suspend, so Kueue's admission is no difference. The
    output msgen wrote before (suspend: true) is OutOfSync once admitted: self-heal would
    suspend the running training. Kueue itself admits where it runs (a ClusterQueue and a
    LocalQueue of the test's own); elsewhere its admission is made as it makes it."""
    kueue = live_addons.missing("kueue") is None
    queue = f"q-{namespace.rsplit('-', 1)[-1]}" if kueue else "team-a"
    if kueue:
        live_addons.kueue_queues(namespace, queue, pods_quota=10)
    try:
        job = JOB.format(name="queued", image=IMAGE, command="sleep 120")
        desired = plugin_render(tmp_path, namespace, job, kueue_queue=queue)
        assert "suspend" not in desired
        assert sync(desired).returncode == 0
        admit(namespace, "queued-worker", kueue)
        assert out_of_sync(desired) == ""
        # before: the same Job with suspend: true in the manifest
        before = [d for d in yaml.safe_load_all(desired.replace("queued", "before")) if d]
        for obj in before:
            if obj["kind"] == "Job":
                obj["spec"]["suspend"] = True
        old = yaml.safe_dump_all(before)
        assert sync(old).returncode == 0
        admit(namespace, "before-worker", kueue)
        assert "suspend: true" in out_of_sync(old)
    finally:
        if kueue:
            kubectl("delete", "clusterqueue", queue, "--wait=false", check=False)


def test_a_changed_job_is_a_new_run_with_a_content_run_name(tmp_path: Path, namespace: str) -> None:
    """A Job's pod template is immutable: syncing a changed job onto the running one fails.
    With run-name content the changed job is a new run under new names; the unchanged job
    re-renders to exactly what runs (in sync)."""
    first = JOB.format(name="train", image=IMAGE, command="sleep 120")
    second = JOB.format(name="train", image=IMAGE, command="sleep 121")
    assert sync(plugin_render(tmp_path, namespace, first)).returncode == 0
    refused = sync(plugin_render(tmp_path, namespace, second))
    assert refused.returncode != 0 and "field is immutable" in refused.stderr
    one = plugin_render(tmp_path, namespace, first, run_name="content")
    two = plugin_render(tmp_path, namespace, second, run_name="content")
    assert sync(one).returncode == 0
    assert out_of_sync(plugin_render(tmp_path, namespace, first, run_name="content")) == ""
    done = sync(two)
    assert done.returncode == 0, done.stderr
    runs = {o["metadata"]["name"] for o in yaml.safe_load_all(one + "---\n" + two) if o and o["kind"] == "Job"}
    assert len(runs) == 2 and all(job_exists(namespace, name) for name in runs)
