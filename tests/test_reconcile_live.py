"""`msgen apply`, `diff`, `status`, `delete` against a real API server.

Runs when MSGEN_TEST_KUBECONFIG names a kubeconfig for a disposable cluster whose
kube-controller-manager runs (the Job and garbage-collector controllers act); no scheduler
or kubelet is needed: the tests set pod statuses through the API as a kubelet would. On a
cluster with nodes, the pods select a node that does not exist, so no kubelet runs (and
re-reports) them. Each test works in a namespace of its own (prefixed
MSGEN_TEST_NAMESPACE_PREFIX, `msgen-test` by default) and deletes it afterwards. Pods
running for real, failing on purpose, are in test_live_failures.py; the controller in the
cluster in test_live_controller.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile.applyset import applyset_id

from .conftest import ROOT, Run
from .upstream_crds import crd_file, refused_for_its_release

KUBECONFIG = os.environ.get("MSGEN_TEST_KUBECONFIG")
pytestmark = pytest.mark.skipif(
    not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no API server to test against"
)
KUBECTL = shutil.which("kubectl")

JOB = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: {name}
spec:
  runPolicy:
    cleanPodPolicy: Running
  msReplicaSpecs:
    Scheduler:
      replicas: 1
      template:
        spec:
          nodeSelector: {{msgen.test/no-such-node: "true"}}
          containers:
            - name: mindspore
              image: {image}
    Worker:
      replicas: 2
      template:
        spec:
          nodeSelector: {{msgen.test/no-such-node: "true"}}
          containers:
            - name: mindspore
              image: {image}
"""


def msgen(*args: str, timeout: float = 120) -> Run:
    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG)}
    done = subprocess.run([sys.executable, "-m", "msgen", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr)


def kubectl(*args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    assert KUBECTL, "kubectl is needed for the live tests"
    return subprocess.run([KUBECTL, "--kubeconfig", str(KUBECONFIG), *args], capture_output=True,
                          text=True, check=check, env={**os.environ, **(env or {})}, timeout=60)


@pytest.fixture
def namespace() -> Any:
    name = f"{os.environ.get('MSGEN_TEST_NAMESPACE_PREFIX', 'msgen-test')}-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def job_file(tmp_path: Path, name: str = "lenet", image: str = "mindspore/mindspore:2.2.14",
             extra: str = "") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(JOB.format(name=name, image=image) + extra)
    return path


def names(kind: str, namespace: str, selector: str = "") -> list[str]:
    args = ["get", kind, "-n", namespace, "-o", "json"] + (["-l", selector] if selector else [])
    return sorted(o["metadata"]["name"] for o in json.loads(kubectl(*args).stdout)["items"])


def test_apply_is_idempotent_and_diff_exit_codes(tmp_path: Path, namespace: str) -> None:
    job = job_file(tmp_path)
    first = msgen("apply", str(job), "-n", namespace)
    assert first.exit_code == 0, first.stderr
    served = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]
    assert f"msgen: rendering for Kubernetes 1.{served['minor'].rstrip('+')}, the cluster's" in first.stdout \
        or int(served["minor"].rstrip("+")) > 37
    assert "service/lenet-scheduler-0 created" in first.stdout
    assert "job.batch/lenet-worker created" in first.stdout
    assert f"applyset msgen-lenet (Secret {namespace}/msgen-lenet" in first.stdout
    minor = min(int(served["minor"].rstrip("+")), 37)
    again = msgen("apply", str(job), "-n", namespace, "--kube-version", f"1.{minor}")
    assert again.exit_code == 0, again.stderr
    assert "rendering for Kubernetes" not in again.stdout  # named: the server is not asked
    lines = [line for line in again.stdout.splitlines() if not line.startswith("msgen:")]
    assert lines and all(line.endswith(" unchanged") for line in lines), again.stdout
    assert msgen("diff", str(job), "-n", namespace).exit_code == 0
    changed = msgen("diff", str(job), "-n", namespace, "--argocd-sync-waves")
    assert changed.exit_code == 1, changed.stderr
    assert "argocd.argoproj.io/sync-wave" in changed.stdout and changed.stdout.startswith("---")
    broken = msgen("diff", str(tmp_path / "missing.yaml"), "-n", namespace)
    assert broken.exit_code == 2


def test_members_are_those_kubectl_sees_and_prune_deletes_only_them(tmp_path: Path, namespace: str) -> None:
    extra = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: '1'\n"
    assert msgen("apply", str(job_file(tmp_path, extra=extra)), "-n", namespace).exit_code == 0
    set_id = applyset_id("msgen-lenet", namespace)
    # kubectl finds the parent and exactly the members by the KEP-3659 labels.
    assert names("secret", namespace, f"applyset.kubernetes.io/id={set_id}") == ["msgen-lenet"]
    assert names("configmap,service,job", namespace, f"applyset.kubernetes.io/part-of={set_id}") == [
        "lenet", "lenet-scheduler", "lenet-scheduler-0", "lenet-worker", "settings"]
    parent = json.loads(kubectl("get", "secret", "msgen-lenet", "-n", namespace, "-o", "json").stdout)
    assert parent["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"] == (
        "ConfigMap,Job.batch,Service")
    kubectl("create", "configmap", "bystander", "-n", namespace)
    pruned = msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--prune")
    assert pruned.exit_code == 0, pruned.stderr
    assert pruned.stdout.count("configmap/settings pruned") == 1, pruned.stdout
    left = names("configmap", namespace)
    assert "bystander" in left and "settings" not in left
    parent = json.loads(kubectl("get", "secret", "msgen-lenet", "-n", namespace, "-o", "json").stdout)
    assert parent["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"] == "Job.batch,Service"


def test_kubectl_and_msgen_each_refuse_the_others_applyset(tmp_path: Path, namespace: str) -> None:
    assert msgen("apply", str(job_file(tmp_path)), "-n", namespace).exit_code == 0
    env = {"KUBECTL_APPLYSET": "true"}
    job_objects = msgen("render", str(job_file(tmp_path)), "-n", namespace).stdout
    (tmp_path / "out.yaml").write_text(job_objects)
    theirs = kubectl("apply", "--server-side", "--validate=false", "--prune", "--applyset", "msgen-lenet", "-n", namespace,
                     "-f", str(tmp_path / "out.yaml"), check=False, env=env)
    assert theirs.returncode != 0 and "managed by tooling \"msgen\"" in theirs.stderr
    cm = tmp_path / "cm.yaml"
    cm.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k\ndata: {}\n")
    made = kubectl("apply", "--server-side", "--validate=false", "--prune", "--applyset", "kubectl-set", "-n", namespace,
                   "-f", str(cm), env=env, check=False)
    assert made.returncode == 0, made.stderr
    ours = msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--applyset", "kubectl-set")
    assert ours.exit_code == 1 and "managed by 'kubectl/" in ours.stderr
    # kubectl's set id is the one msgen computes for that parent.
    assert names("configmap", namespace, f"applyset.kubernetes.io/part-of={applyset_id('kubectl-set', namespace)}") == ["k"]


def test_changed_pod_template_names_recreate_and_recreate_works(tmp_path: Path, namespace: str) -> None:
    assert msgen("apply", str(job_file(tmp_path)), "-n", namespace).exit_code == 0
    changed = job_file(tmp_path, image="mindspore/mindspore:2.3.0")
    refused = msgen("apply", str(changed), "-n", namespace)
    assert refused.exit_code == 1
    assert "Job training" not in refused.stderr and "Job " + namespace + "/lenet-scheduler" in refused.stderr
    assert "immutable" in refused.stderr and "--recreate" in refused.stderr
    # The field and why, not the server's dump of the whole rejected pod template.
    assert "spec.template: field is immutable" in refused.stderr and "Volumes" not in refused.stderr
    changes = msgen("diff", str(changed), "-n", namespace)
    assert changes.exit_code == 2 and "--recreate" in changes.stderr and "Volumes" not in changes.stderr
    rehearsed = msgen("apply", str(changed), "-n", namespace, "--recreate", "--dry-run=server")
    assert rehearsed.exit_code == 0, rehearsed.stderr
    assert "job.batch/lenet-worker would be recreated (server dry run)" in rehearsed.stdout
    live = json.loads(kubectl("get", "job", "lenet-worker", "-n", namespace, "-o", "json").stdout)
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "mindspore/mindspore:2.2.14"
    redone = msgen("apply", str(changed), "-n", namespace, "--recreate", timeout=300)
    assert redone.exit_code == 0, redone.stderr
    live = json.loads(kubectl("get", "job", "lenet-worker", "-n", namespace, "-o", "json").stdout)
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "mindspore/mindspore:2.3.0"


def test_missing_crd_or_namespace_applies_nothing(tmp_path: Path, namespace: str) -> None:
    served = kubectl("get", "crd", "jobsets.jobset.x-k8s.io", check=False).returncode == 0
    if served:
        pytest.skip("this cluster serves JobSet; the missing-CRD case needs one that does not")
    # The render asks the server what it serves: a JobSet is an error naming what to install.
    run = msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--target", "jobset")
    assert run.exit_code == 1, run.stderr
    assert "renders JobSet (jobset.x-k8s.io/v1alpha2), which the cluster does not serve" in run.stderr
    assert "install JobSet" in run.stderr and "Traceback" not in run.stderr
    assert names("service", namespace) == [] and "msgen-lenet" not in names("secret", namespace)
    diffed = msgen("diff", str(job_file(tmp_path)), "-n", namespace, "--target", "jobset")
    assert diffed.exit_code == 2 and "which the cluster does not serve" in diffed.stderr
    gone = msgen("apply", str(job_file(tmp_path)), "-n", "no-such-namespace-msgen")
    assert gone.exit_code == 1 and "namespace 'no-such-namespace-msgen' does not exist" in gone.stderr


def _set_pod_status(namespace: str, pod: str, phase: str, exit_code: int | None = None) -> None:
    status: dict[str, Any] = {"phase": phase}
    if exit_code is not None:
        status["containerStatuses"] = [{
            "name": "mindspore", "image": "x", "imageID": "", "ready": False, "restartCount": 0,
            "state": {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                                     "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:01:00Z"}},
        }]  # fmt: skip
    kubectl("patch", "pod", pod, "-n", namespace, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": status}))


def test_wait_follows_bare_pods_and_carries_out_clean_pod_policy(tmp_path: Path, namespace: str) -> None:
    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG)}
    waiting = subprocess.Popen(
        [sys.executable, "-m", "msgen", "apply", str(job_file(tmp_path)), "-n", namespace,
         "--target", "pod", "--wait", "--timeout", "120s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    deadline = time.monotonic() + 60
    while names("pod", namespace) != ["lenet-scheduler-0", "lenet-worker-0", "lenet-worker-1"]:
        assert time.monotonic() < deadline, "pods did not appear"
        time.sleep(0.5)
    _set_pod_status(namespace, "lenet-scheduler-0", "Running")
    _set_pod_status(namespace, "lenet-worker-1", "Running")
    time.sleep(3)
    _set_pod_status(namespace, "lenet-worker-0", "Succeeded", exit_code=0)
    out, err = waiting.communicate(timeout=90)
    assert waiting.returncode == 0, err
    assert "lenet: Running" in out
    assert "lenet: Succeeded after" in out and "worker 0 succeeded" in out
    # cleanPodPolicy Running: the pods still running were deleted; worker 0 stays.
    assert "policy: delete Pod lenet-scheduler-0" in out and "policy: delete Pod lenet-worker-1" in out
    assert names("pod", namespace) == ["lenet-worker-0"]
    shown = msgen("status", "lenet", "-n", namespace, "-o", "json")
    assert json.loads(shown.stdout)["lenet"]["conditions"][-1]["type"] == "Succeeded"
    by_path = msgen("status", str(job_file(tmp_path)), "-n", namespace, "-o", "json")
    assert json.loads(by_path.stdout) == json.loads(shown.stdout)


def test_wait_reports_a_failed_pod_with_its_exit_code(tmp_path: Path, namespace: str) -> None:
    assert msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--target", "pod").exit_code == 0
    _set_pod_status(namespace, "lenet-worker-1", "Failed", exit_code=137)
    run = msgen("status", "lenet", "-n", namespace, "--watch", "--timeout", "30s")
    assert run.exit_code == 1
    assert "failed: pod lenet-worker-1 container mindspore exit code 137 (Error)" in run.stdout
    # No kubelet serves this pod's logs: the summary says so instead of hanging or failing.
    assert "last log lines of pod lenet-worker-1:\n    (no log lines" in run.stdout


def test_delete_removes_members_then_parent(tmp_path: Path, namespace: str) -> None:
    job = job_file(tmp_path)
    assert msgen("apply", str(job), "-n", namespace).exit_code == 0
    run = msgen("delete", str(job), "-n", namespace, timeout=300)
    assert run.exit_code == 0, run.stderr
    assert names("job,service", namespace) == []
    assert names("pod", namespace, "training.kubeflow.org/job-name=lenet") == []
    assert "msgen-lenet" not in names("secret", namespace)


def test_controller_carries_out_policies_of_a_job_applied_by_kubectl(tmp_path: Path, namespace: str) -> None:
    rendered = msgen("render", str(job_file(tmp_path)), "-n", namespace, "--target", "pod")
    (tmp_path / "out.yaml").write_text(rendered.stdout)
    kubectl("apply", "--server-side", "--validate=false", "-f", str(tmp_path / "out.yaml"))
    _set_pod_status(namespace, "lenet-scheduler-0", "Running")
    _set_pod_status(namespace, "lenet-worker-1", "Running")
    first = msgen("controller", "-n", namespace, "--once")
    assert first.exit_code == 0, first.stderr
    published = json.loads(kubectl("get", "pod", "lenet-worker-0", "-n", namespace, "-o", "json").stdout)
    running = json.loads(published["metadata"]["annotations"]["msgen/status"])
    assert running["phase"] == "Running"
    # msgen status reads what the controller published: the time it saw the job running.
    shown = json.loads(msgen("status", "lenet", "-n", namespace, "-o", "json").stdout)["lenet"]
    assert shown["conditions"] == running["conditions"] and shown["conditions"][-1]["lastTransitionTime"]
    # Only one pod carries the job's status.
    others = json.loads(kubectl("get", "pod", "lenet-worker-1", "-n", namespace, "-o", "json").stdout)
    assert "msgen/status" not in (others["metadata"].get("annotations") or {})
    _set_pod_status(namespace, "lenet-worker-0", "Succeeded", exit_code=0)
    second = msgen("controller", "-n", namespace, "--once")
    assert second.exit_code == 0, second.stderr
    assert f"{namespace}/lenet: policy: delete Pod lenet-scheduler-0" in second.stdout
    assert names("pod", namespace) == ["lenet-worker-0"]
    published = json.loads(kubectl("get", "pod", "lenet-worker-0", "-n", namespace, "-o", "json").stdout)
    assert json.loads(published["metadata"]["annotations"]["msgen/status"])["phase"] == "Succeeded"
    events = json.loads(kubectl("get", "events", "-n", namespace, "-o", "json").stdout)["items"]
    assert {e["reason"] for e in events if e.get("source", {}).get("component") == "msgen-controller"} >= {
        "JobRunning", "JobSucceeded"}
    # A restart loses nothing: a third pass finds the job finished and does nothing more,
    # announces nothing again, and keeps the times published before.
    before = kubectl("get", "pod", "lenet-worker-0", "-n", namespace, "-o", "json").stdout
    third = msgen("controller", "-n", namespace, "--once")
    assert third.exit_code == 0 and "policy:" not in third.stdout and "Succeeded" not in third.stdout
    assert kubectl("get", "pod", "lenet-worker-0", "-n", namespace, "-o", "json").stdout == before
    again = json.loads(kubectl("get", "events", "-n", namespace, "-o", "json").stdout)["items"]
    assert len(again) == len(events)


def test_controller_needs_no_more_than_its_overlay_rbac(tmp_path: Path, namespace: str) -> None:
    """The overlay's ServiceAccount and ClusterRole suffice for a pass that acts."""
    built = subprocess.run([KUBECTL or "kubectl", "kustomize", str(ROOT / "overlays" / "controller")],
                           capture_output=True, text=True, check=True).stdout
    rbac = [d for d in built.split("\n---\n") if "kind: Deployment" not in d]
    if _server_version() < (1, 30):  # as docs/reconciler.md says: without admission.yaml's policies
        rbac = [d for d in rbac if "kind: ValidatingAdmissionPolic" not in d]
    (tmp_path / "rbac.yaml").write_text("\n---\n".join(rbac))
    kubectl("apply", "--server-side", "--validate=false", "-f", str(tmp_path / "rbac.yaml"))
    try:
        _acts_with_the_overlays_rbac(tmp_path, namespace)
    finally:  # the overlay's namespace and cluster-wide RBAC are not this test's to leave behind
        kubectl("delete", "-f", str(tmp_path / "rbac.yaml"), "--ignore-not-found", "--timeout=50s", check=False)


def _acts_with_the_overlays_rbac(tmp_path: Path, namespace: str) -> None:
    token = kubectl("create", "token", "msgen-controller", "-n", "msgen-system").stdout.strip()
    config = json.loads(kubectl("config", "view", "--raw", "-o", "json").stdout)
    server = config["clusters"][0]["cluster"]
    limited = tmp_path / "controller.kubeconfig"
    limited.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": server}],
        "users": [{"name": "sa", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "sa"}}],
    }))  # fmt: skip
    assert msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--target", "pod").exit_code == 0
    _set_pod_status(namespace, "lenet-scheduler-0", "Running")
    _set_pod_status(namespace, "lenet-worker-0", "Succeeded", exit_code=0)
    # In this namespace only: on a shared cluster, other jobs are not this test's to touch
    # (every namespace, with this RBAC, is what test_live_controller.py's Deployment watches).
    run = msgen("controller", "--kubeconfig", str(limited), "--lease-namespace", "msgen-system", "--once",
                "-n", namespace)
    assert run.exit_code == 0, run.stderr
    assert "skipped" not in run.stdout and "watching:" not in run.stdout, run.stdout
    assert f"{namespace}/lenet: policy: delete Pod lenet-scheduler-0" in run.stdout
    assert f"{namespace}/lenet: Succeeded" in run.stdout
    assert names("pod", namespace) == ["lenet-worker-0"]


def test_server_dry_run_applies_nothing_and_shows_what_changes(tmp_path: Path, namespace: str) -> None:
    dry = msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--dry-run", "server")
    assert dry.exit_code == 0, dry.stderr
    assert "job.batch/lenet-worker created (server dry run)" in dry.stdout
    assert names("job,service", namespace) == [] and "msgen-lenet" not in names("secret", namespace)
    assert msgen("apply", str(job_file(tmp_path)), "-n", namespace).exit_code == 0
    waves = msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--argocd-sync-waves", "--dry-run", "server")
    assert "service/lenet-scheduler-0 configured (server dry run)" in waves.stdout, waves.stdout
    live = json.loads(kubectl("get", "service", "lenet-scheduler-0", "-n", namespace, "-o", "json").stdout)
    assert "argocd.argoproj.io/sync-wave" not in (live["metadata"].get("annotations") or {})


def test_watch_says_why_pods_wait_and_times_out_with_its_own_status(tmp_path: Path, namespace: str) -> None:
    assert msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--target", "pod").exit_code == 0
    message = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "lenet-worker-0.scheduling", "namespace": namespace},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "lenet-worker-0", "namespace": namespace},
        "reason": "FailedScheduling", "message": message, "type": "Warning",
        "source": {"component": "default-scheduler"},
    }  # fmt: skip
    (tmp_path / "event.yaml").write_text(json.dumps(event))
    kubectl("create", "--validate=false", "-f", str(tmp_path / "event.yaml"))
    run = msgen("status", "lenet", "-n", namespace, "--watch", "--timeout", "3s")
    assert run.exit_code == 3, run.stderr
    assert f"waiting: pod lenet-worker-0: FailedScheduling: {message}" in run.stdout
    assert "timed out; the job keeps running" in run.stderr



def test_watch_says_when_an_image_cannot_be_pulled_as_a_kubelet_reports_it(tmp_path: Path, namespace: str) -> None:
    assert msgen("apply", str(job_file(tmp_path, image="mindspore/mindspore:9.9")), "-n", namespace,
                 "--target", "pod").exit_code == 0
    pulled = 'Failed to pull image "mindspore/mindspore:9.9": manifest unknown'
    event = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "lenet-worker-1.pull", "namespace": namespace},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "lenet-worker-1", "namespace": namespace},
        "reason": "Failed", "message": pulled, "type": "Warning", "source": {"component": "kubelet"},
    }  # fmt: skip
    (tmp_path / "event.yaml").write_text(json.dumps(event))
    kubectl("create", "--validate=false", "-f", str(tmp_path / "event.yaml"))
    waiting = {"phase": "Pending", "containerStatuses": [{
        "name": "mindspore", "image": "mindspore/mindspore:9.9", "imageID": "", "ready": False, "restartCount": 0,
        "state": {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "mindspore/mindspore:9.9"'}},
    }]}  # fmt: skip
    kubectl("patch", "pod", "lenet-worker-1", "-n", namespace, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": waiting}))
    run = msgen("status", "lenet", "-n", namespace, "--watch", "--timeout", "3s")
    assert run.exit_code == 3, run.stderr
    assert f"waiting: pod lenet-worker-1: Failed: {pulled}" in run.stdout
    assert ('waiting: pod lenet-worker-1 container mindspore: ImagePullBackOff: Back-off pulling image '
            '"mindspore/mindspore:9.9"') in run.stdout

def _pods_of(namespace: str, selector: str, count: int) -> list[str]:
    deadline = time.monotonic() + 60
    while len(found := names("pod", namespace, selector)) < count:
        assert time.monotonic() < deadline, f"the Job controller made no pods for {selector}"
        time.sleep(0.5)
    return found


def test_wait_on_indexed_jobs_suspends_the_scheduler_job_when_worker_0_succeeds(tmp_path: Path, namespace: str) -> None:
    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG)}
    waiting = subprocess.Popen(
        [sys.executable, "-m", "msgen", "apply", str(job_file(tmp_path)), "-n", namespace, "--wait", "--timeout", "120s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    workers = _pods_of(namespace, "training.kubeflow.org/replica-type=worker", 2)
    for pod in _pods_of(namespace, "training.kubeflow.org/replica-type=scheduler", 1) + workers:
        _set_pod_status(namespace, pod, "Running")
    time.sleep(3)
    worker0 = names("pod", namespace, "training.kubeflow.org/replica-type=worker,batch.kubernetes.io/job-completion-index=0")
    _set_pod_status(namespace, worker0[0], "Succeeded", exit_code=0)
    out, err = waiting.communicate(timeout=90)
    assert waiting.returncode == 0, err
    assert "policy: suspend Job lenet-scheduler: job succeeded; cleanPodPolicy Running" in out
    live = json.loads(kubectl("get", "job", "lenet-scheduler", "-n", namespace, "-o", "json").stdout)
    assert live["spec"]["suspend"] is True


#: target -> (the upstream CRD file of its workload, the CRD's name)
CUSTOM_RESOURCES = {"jobset": ("jobset.x-k8s.io_jobsets.yaml", "jobsets.jobset.x-k8s.io"),
                    "volcano": ("batch.volcano.sh_jobs.yaml", "jobs.batch.volcano.sh")}
#: Field managers of the tests' own installs (this module's `kubectl apply`, the differential
#: test's): a CRD only they wrote has no controller behind it.
TESTS_MANAGERS = {"kubectl", "msgen-tests", "kube-apiserver"}


def _server_version() -> tuple[int, int]:
    found = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]
    return int(found["major"]), int(found["minor"].rstrip("+"))


def _custom_resource(target: str) -> Any:
    """The CRD of `target`'s workload from ../shared/crds, installed for one test and removed.

    A cluster that serves it from an add-on's install (the live harness with `--with
    jobset,volcano`) runs its controller, which owns the status this test sets by hand: the
    test skips there, and never removes a CRD it did not install. A release whose API server
    refuses the CRD, as the add-on says it must (`upstream_crds.SERVED_FROM`), skips with why."""
    file, name = CUSTOM_RESOURCES[target]
    present = kubectl("get", "crd", name, "-o", "json", check=False)
    if present.returncode == 0:
        managers = {m.get("manager") for m in json.loads(present.stdout)["metadata"].get("managedFields") or []}
        if managers - TESTS_MANAGERS:
            pytest.skip(f"this cluster serves {name} (installed by {', '.join(sorted(managers - TESTS_MANAGERS))}):"
                        " its controller owns the status this test sets")
        yield
        return
    applied = kubectl("apply", "--server-side", "--validate=false", "-f", str(crd_file(file)), check=False)
    if applied.returncode != 0:
        why = refused_for_its_release(file, _server_version(), applied.stderr)
        assert why is not None, applied.stderr
        pytest.skip(why)
    waited = kubectl("wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s", check=False)
    try:
        assert waited.returncode == 0, waited.stderr
        yield
    finally:
        kubectl("delete", "crd", name, "--wait=false", check=False)


@pytest.fixture
def jobset_crd() -> Any:
    yield from _custom_resource("jobset")


@pytest.fixture
def volcano_crd() -> Any:
    yield from _custom_resource("volcano")


def _patch_status(namespace: str, resource: str, status: dict[str, Any]) -> None:
    kubectl("patch", resource, "-n", namespace, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": status}))


def test_a_jobset_applies_and_reports_its_own_status(tmp_path: Path, namespace: str, jobset_crd: None) -> None:
    job = job_file(tmp_path)
    applied = msgen("apply", str(job), "-n", namespace, "--target", "jobset")
    assert applied.exit_code == 0, applied.stderr
    assert "jobset.jobset.x-k8s.io/lenet created" in applied.stdout
    _patch_status(namespace, "jobset.jobset.x-k8s.io/lenet", {"conditions": [{
        "type": "Failed", "status": "True", "reason": "FailedJobs", "message": "jobset failed: job lenet-worker-0 failed",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]})  # fmt: skip
    shown = json.loads(msgen("status", "lenet", "-n", namespace, "-o", "json").stdout)["lenet"]
    assert shown["conditions"][-1]["type"] == "Failed" and shown["conditions"][-1]["reason"] == "FailedJobs"
    assert msgen("delete", str(job), "-n", namespace, timeout=300).exit_code == 0


def test_a_volcano_job_applies_and_reports_its_own_status(tmp_path: Path, namespace: str, volcano_crd: None) -> None:
    job = job_file(tmp_path)
    applied = msgen("apply", str(job), "-n", namespace, "--target", "volcano")
    assert applied.exit_code == 0, applied.stderr
    assert "job.batch.volcano.sh/lenet created" in applied.stdout
    _patch_status(namespace, "jobs.batch.volcano.sh/lenet", {"state": {"phase": "Completed"}})
    shown = json.loads(msgen("status", "lenet", "-n", namespace, "-o", "json").stdout)["lenet"]
    assert shown["conditions"][-1]["type"] == "Succeeded"


def test_a_field_of_another_manager_is_a_named_conflict_unless_forced(tmp_path: Path, namespace: str) -> None:
    extra = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: '1'\n"
    job = job_file(tmp_path, extra=extra)
    assert msgen("apply", str(job), "-n", namespace).exit_code == 0
    theirs = tmp_path / "theirs.yaml"
    theirs.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {namespace}\ndata:\n  a: '2'\n")
    kubectl("apply", "--server-side", "--validate=false", "--field-manager", "someone-else", "--force-conflicts",
            "-f", str(theirs))
    run = msgen("apply", str(job), "-n", namespace)
    assert run.exit_code == 1
    assert f"ConfigMap {namespace}/settings" in run.stderr and 'conflict with "someone-else"' in run.stderr
    assert ".data.a" in run.stderr and "--force-conflicts" in run.stderr
    forced = msgen("apply", str(job), "-n", namespace, "--force-conflicts")
    assert forced.exit_code == 0, forced.stderr
    live = json.loads(kubectl("get", "configmap", "settings", "-n", namespace, "-o", "json").stdout)
    assert live["data"]["a"] == "1"


def test_a_watch_from_a_version_too_old_relists_then_follows_changes(namespace: str) -> None:
    """A real 410 Gone (a resourceVersion compacted away) makes the informer list again."""
    import threading

    from msgen.reconcile import informer, kube

    client = kube.connect(str(KUBECONFIG), None)
    calls: list[str] = []

    def lister() -> tuple[list[dict[str, Any]], str | None]:
        items, version = kube.listing_with_version(client, "v1", "ConfigMap", namespace, {})
        calls.append("list")
        return items, ("1" if len(calls) == 1 else version)  # the first list claims a stale version

    def watcher(version: str | None) -> Any:
        calls.append(f"watch from {version}")
        return kube.watch_events(client, "v1", "ConfigMap", namespace, {}, version)

    changed = threading.Event()
    watching = informer.Informer(client, "v1", "ConfigMap", namespace, {}, changed,
                                 lister=lister, watcher=watcher).start()
    try:
        deadline = time.monotonic() + 30
        while calls[:3] != ["list", "watch from 1", "list"]:
            assert time.monotonic() < deadline, calls
            if calls == ["list", "watch from 1"] and time.monotonic() > deadline - 20:
                # Revision 1 is "too old" only once etcd has compacted past it: a freshly
                # started server keeps it until its first compaction (every 5 minutes).
                pytest.skip("the server has not compacted revision 1 yet (a fresh etcd); no 410 to test")
            time.sleep(0.1)
        kubectl("create", "configmap", "seen", "-n", namespace)
        while "seen" not in [o["metadata"]["name"] for o in watching.items()]:
            assert time.monotonic() < deadline, calls
            time.sleep(0.1)
    finally:
        watching.stop()


def test_of_two_controller_replicas_only_the_lease_holder_acts(tmp_path: Path, namespace: str) -> None:
    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG)}
    lease = f"msgen-test-{namespace[-8:]}"
    outputs: list[str] = []
    replicas = [subprocess.Popen(
        [sys.executable, "-m", "msgen", "controller", "-n", namespace, "--lease-namespace", namespace,
         "--lease-name", lease, "--interval", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=env) for _ in range(2)]
    try:
        assert msgen("apply", str(job_file(tmp_path)), "-n", namespace, "--target", "pod").exit_code == 0
        _set_pod_status(namespace, "lenet-scheduler-0", "Running")
        _set_pod_status(namespace, "lenet-worker-1", "Running")
        _set_pod_status(namespace, "lenet-worker-0", "Succeeded", exit_code=0)
        deadline = time.monotonic() + 60
        while names("pod", namespace) != ["lenet-worker-0"]:
            assert time.monotonic() < deadline, "no replica carried out cleanPodPolicy"
            time.sleep(0.5)
        time.sleep(3)
        holder = json.loads(kubectl("get", "lease", lease, "-n", namespace, "-o", "json").stdout)["spec"]
        # The leader stops on SIGTERM and gives the Lease up; the other replica takes over.
        leader = next(p for p in replicas if f"_{p.pid}_" in holder["holderIdentity"])
        leader.terminate()
        outputs = [leader.communicate(timeout=30)[0]]
        taken = json.loads(kubectl("get", "lease", lease, "-n", namespace, "-o", "json").stdout)["spec"]
        while taken.get("holderIdentity") in (None, holder["holderIdentity"]):
            assert time.monotonic() < deadline, taken
            time.sleep(0.5)
            taken = json.loads(kubectl("get", "lease", lease, "-n", namespace, "-o", "json").stdout)["spec"]
        assert taken["leaseTransitions"] >= 1
        time.sleep(3)  # the new leader's first pass: it finds nothing left to do
    finally:
        for p in replicas:
            if p.poll() is None:
                p.terminate()
                outputs.append(p.communicate(timeout=30)[0])
    actions = [line for out in outputs for line in out.splitlines() if "policy: delete Pod" in line]
    # Each pod was deleted once, by the one replica that led.
    assert sorted(actions) == sorted(set(actions)) and len(actions) == 2, outputs
    assert sum("leading (Lease" in out for out in outputs) == 2, outputs
    assert any("policy: delete Pod" in out and "leading (Lease" in out for out in outputs)



def test_ctrl_c_stops_watching_leaves_the_job_and_prints_how_to_resume(tmp_path: Path, namespace: str) -> None:
    import signal

    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG)}
    waiting = subprocess.Popen(
        [sys.executable, "-m", "msgen", "apply", str(job_file(tmp_path)), "-n", namespace, "--target", "pod", "--wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
        # A suite started in the background of a script (`pytest &`, nohup) inherits SIGINT
        # ignored, and Python keeps an ignored SIGINT ignored: give msgen the disposition a
        # terminal's Ctrl-C meets.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while len(names("pod", namespace)) < 3:
        assert time.monotonic() < deadline, "pods did not appear"
        time.sleep(0.5)
    time.sleep(2)
    waiting.send_signal(signal.SIGINT)
    out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 130, err
    assert "stopped watching; the job keeps running" in err
    assert f"msgen status lenet -n {namespace} --watch" in err
    assert "Traceback" not in err
    assert names("pod", namespace) == ["lenet-scheduler-0", "lenet-worker-0", "lenet-worker-1"]


def test_wait_on_a_terminal_redraws_one_line_in_place(tmp_path: Path, namespace: str) -> None:
    import pty

    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG)}
    main, child = pty.openpty()
    waiting = subprocess.Popen(
        [sys.executable, "-m", "msgen", "apply", str(job_file(tmp_path)), "-n", namespace, "--target", "pod",
         "--wait", "--timeout", "60s"],
        stdout=child, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    os.close(child)
    deadline = time.monotonic() + 60
    while len(names("pod", namespace)) < 3:
        assert time.monotonic() < deadline, "pods did not appear"
        time.sleep(0.5)
    for pod in ("lenet-scheduler-0", "lenet-worker-0", "lenet-worker-1"):
        _set_pod_status(namespace, pod, "Running")
        time.sleep(1)
    _set_pod_status(namespace, "lenet-worker-0", "Succeeded", exit_code=0)
    waiting.wait(timeout=60)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert waiting.returncode == 0
    text = shown.decode()
    # Each change rewrites the same line (carriage return, erase line); no line per change.
    redraws = text.count("\r\x1b[K")
    assert redraws >= 3, text
    assert "Worker: 0 pending, 2 running" in text and "lenet: Succeeded after" in text


def test_delete_with_wait_false_returns_without_waiting_as_kubectl(tmp_path: Path, namespace: str) -> None:
    job = job_file(tmp_path)
    assert msgen("apply", str(job), "-n", namespace).exit_code == 0
    run = msgen("delete", str(job), "-n", namespace, "--wait=false")
    assert run.exit_code == 0, run.stderr
    assert "job/lenet-worker deleted" in run.stdout and "secret/msgen-lenet deleted (ApplySet parent)" in run.stdout
    assert "msgen-lenet" not in names("secret", namespace)


def test_controller_keeps_the_end_of_a_job_whose_pods_clean_pod_policy_all_deleted(
        tmp_path: Path, namespace: str) -> None:
    job = tmp_path / "allw.yaml"
    job.write_text(JOB.format(name="allw", image="mindspore/mindspore:2.2.14").replace(
        "spec:\n  runPolicy:\n    cleanPodPolicy: Running",
        "spec:\n  successPolicy: AllWorkers\n  runPolicy:\n    cleanPodPolicy: All", 1))
    assert msgen("apply", str(job), "-n", namespace, "--target", "pod").exit_code == 0
    _set_pod_status(namespace, "allw-scheduler-0", "Running")
    _set_pod_status(namespace, "allw-worker-0", "Succeeded", exit_code=0)
    first = msgen("controller", "-n", namespace, "--lease-namespace", namespace, "--once")
    assert first.exit_code == 0 and "policy:" not in first.stdout  # AllWorkers: worker 1 still runs
    _set_pod_status(namespace, "allw-worker-1", "Succeeded", exit_code=0)
    second = msgen("controller", "-n", namespace, "--lease-namespace", namespace, "--once")
    assert second.exit_code == 0, second.stderr
    assert "policy: delete Pod allw-worker-0: job succeeded; cleanPodPolicy All" in second.stdout
    deadline = time.monotonic() + 60
    while names("pod", namespace):
        assert time.monotonic() < deadline, "cleanPodPolicy All left pods"
        time.sleep(0.5)
    # Every workload is gone; the job's end is still what msgen status and kubectl show.
    shown = msgen("status", "allw", "-n", namespace, "-o", "json")
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["allw"]["phase"] == "Succeeded"
    assert "allw: Succeeded (published by msgen controller" in msgen("status", "allw", "-n", namespace).stdout
    events = json.loads(kubectl("get", "events", "-n", namespace, "-o", "json").stdout)["items"]
    assert any(e["reason"] == "JobSucceeded" and e["involvedObject"]["kind"] == "Service" for e in events)
    third = msgen("controller", "-n", namespace, "--lease-namespace", namespace, "--once")
    assert third.exit_code == 0 and "allw" not in third.stdout


def test_controller_deletes_a_bare_pod_job_with_its_services_once_its_ttl_passed(
        tmp_path: Path, namespace: str) -> None:
    job = tmp_path / "ttl.yaml"
    job.write_text(JOB.format(name="ttl", image="mindspore/mindspore:2.2.14").replace(
        "cleanPodPolicy: Running", "cleanPodPolicy: None\n    ttlSecondsAfterFinished: 5", 1))
    assert msgen("apply", str(job), "-n", namespace, "--target", "pod").exit_code == 0
    assert names("service", namespace) == ["ttl", "ttl-scheduler-0"]
    _set_pod_status(namespace, "ttl-scheduler-0", "Running")
    _set_pod_status(namespace, "ttl-worker-0", "Succeeded", exit_code=0)  # finished long ago
    run = msgen("controller", "-n", namespace, "--lease-namespace", namespace, "--once")
    assert run.exit_code == 0, run.stderr
    assert "policy: delete Service ttl: ttlSecondsAfterFinished 5 passed" in run.stdout
    # Worker 0's pod keeps the job's end: it goes last, once nothing else of the job is left
    # (not only being deleted), so the pass that deleted the rest leaves it, still Succeeded.
    assert "delete Pod ttl-worker-0" not in run.stdout
    deadline = time.monotonic() + 60
    while names("pod,service", namespace) != ["ttl-worker-0"]:
        assert time.monotonic() < deadline, names("pod,service", namespace)
        time.sleep(0.5)
    kept = json.loads(kubectl("get", "pod", "ttl-worker-0", "-n", namespace, "-o", "json").stdout)
    assert json.loads(kept["metadata"]["annotations"]["msgen/status"])["phase"] == "Succeeded"
    assert msgen("status", "ttl", "-n", namespace).stdout.startswith("ttl: Succeeded")
    last = msgen("controller", "-n", namespace, "--lease-namespace", namespace, "--once")
    assert last.exit_code == 0, last.stderr
    assert "policy: delete Pod ttl-worker-0: ttlSecondsAfterFinished 5 passed" in last.stdout
    while names("pod,service", namespace):
        assert time.monotonic() < deadline, names("pod,service", namespace)
        time.sleep(0.5)
