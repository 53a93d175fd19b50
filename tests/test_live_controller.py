"""`msgen controller` in a real cluster: its image built from this checkout, overlays/controller
deployed as it is, jobs applied with `kubectl apply` of `msgen render`'s output.

It must carry out the policies with the overlay's least-privilege RBAC, publish status and
Events, survive its pod being deleted, hand leadership over between its two replicas, and
report not ready when it cannot watch. A controller for some namespaces needs RoleBindings
there only; without them it fails, saying so.

Needs MSGEN_TEST_KUBECONFIG, and to build the image (overlays/controller/Dockerfile, by the
live harness's buildah): `ctr` and `buildah`, run as root on the harness's node; see
tests/controller_image.py. The Deployment watches every namespace while it runs: it is
deleted when the module ends.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import controller_image
from .conftest import ROOT
from .live import (
    finished,
    get,
    kubectl,
    msgen,
    msgen_started,
    msjob,
    namespace,
    needs_cluster,
    pods,
    script,
    wait_for,
    without_admission_policies,
    write,
)

pytestmark = needs_cluster
__all__ = ["namespace"]

SYSTEM = "msgen-system"


@pytest.fixture(scope="module")
def image() -> str:
    tag = controller_image.source_tag()
    if shutil.which("ctr") is None or os.geteuid() != 0:
        pytest.skip("building the controller image needs ctr, run as root on the cluster's node")
    if controller_image.imported(tag):
        return tag
    if shutil.which("buildah") is None or controller_image.buildable():
        pytest.skip(controller_image.buildable() or "building the controller image needs buildah")
    return controller_image.build()


def controller_pods() -> list[dict[str, Any]]:
    return [p for p in pods(SYSTEM, "app.kubernetes.io/name=msgen-controller")
            if not p["metadata"].get("deletionTimestamp")]


def ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in (pod.get("status") or {}).get("conditions") or [])


def holder() -> str:
    return str(get("lease", SYSTEM, "msgen-controller")["spec"].get("holderIdentity") or "")


def leader_pod() -> str:
    """The pod whose replica holds the Lease (identities begin with the pod's host name)."""
    def find() -> str | None:
        held = holder()
        return next((p["metadata"]["name"] for p in controller_pods() if held.startswith(p["metadata"]["name"] + "_")),
                    None)
    return str(wait_for("a replica to hold the Lease", find, timeout=120))


def logs(pod: str) -> str:
    return kubectl("logs", "-n", SYSTEM, pod, check=False).stdout


@pytest.fixture(scope="module")
def deployed(image: str) -> Iterator[None]:
    overlay = without_admission_policies(kubectl("kustomize", str(ROOT / "overlays" / "controller")).stdout)
    applied = kubectl("apply", "-f", "-", input=overlay)
    assert "deployment.apps/msgen-controller" in applied.stdout
    kubectl("rollout", "restart", "deployment/msgen-controller", "-n", SYSTEM)  # the image may be new
    kubectl("rollout", "status", "deployment/msgen-controller", "-n", SYSTEM, "--timeout=240s", timeout=300)
    wait_for("both replicas ready", lambda: len([p for p in controller_pods() if ready(p)]) == 2)
    yield
    # Waits for the namespace to go, so that a later test applying the overlay's RBAC does
    # not meet it terminating.
    kubectl("delete", "-f", "-", "--ignore-not-found", "--timeout=180s", check=False, timeout=240, input=overlay)


def rendered_by_kubectl(tmp_path: Path, ns: str, name: str, text: str, *options: str) -> None:
    """kubectl apply of msgen render's output: the controller alone runs the policies."""
    job = write(tmp_path, name, text)
    out = msgen("render", str(job), "-n", ns, *options)
    assert out.exit_code == 0, out.stderr
    kubectl("apply", "-f", "-", input=out.stdout)


def published(ns: str, kind: str, name: str) -> dict[str, Any]:
    text = (get(kind, ns, name)["metadata"].get("annotations") or {}).get("msgen/status")
    return json.loads(text) if text else {}


def controller_events(ns: str) -> list[dict[str, Any]]:
    return [e for e in get("events", ns) if (e.get("source") or {}).get("component") == "msgen-controller"]


def test_a_controller_for_one_namespace_needs_rolebindings_there_only(tmp_path: Path, namespace: str) -> None:
    """The RBAC of overlays/controller-namespaces (the ClusterRole bound in one namespace):
    `--namespace` works with it; every namespace is refused, and --once says so, exit 1.
    First in the module: before the Deployment runs, nothing else acts on the job."""
    built = kubectl("kustomize", str(ROOT / "overlays" / "controller")).stdout
    role = next(d for d in built.split("\n---\n") if "kind: ClusterRole\n" in d)
    kubectl("apply", "-f", "-", input=role)
    kubectl("create", "serviceaccount", "scoped", "-n", namespace)
    kubectl("create", "rolebinding", "scoped", "-n", namespace, "--clusterrole", "msgen-controller",
            f"--serviceaccount={namespace}:scoped")
    kubectl("create", "role", "lease", "-n", namespace, "--verb=get,update,create", "--resource=leases")
    kubectl("create", "rolebinding", "lease", "-n", namespace, "--role", "lease", f"--serviceaccount={namespace}:scoped")
    token = kubectl("create", "token", "scoped", "-n", namespace).stdout.strip()
    config = json.loads(kubectl("config", "view", "--raw", "-o", "json").stdout)
    limited = tmp_path / "scoped.kubeconfig"
    limited.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "scoped",
        "clusters": [{"name": "c", "cluster": config["clusters"][0]["cluster"]}],
        "users": [{"name": "scoped", "user": {"token": token}}],
        "contexts": [{"name": "scoped", "context": {"cluster": "c", "user": "scoped", "namespace": namespace}}],
    }))  # fmt: skip
    assert msgen("apply", str(write(tmp_path, "one", msjob("one", script({}, default=(2, 0))))), "-n", namespace,
                 "--target", "pod").exit_code == 0
    wait_for("worker 0 to succeed", lambda: get("pod", namespace, "one-worker-0")["status"]["phase"] == "Succeeded")
    scoped = msgen("controller", "--once", "--kubeconfig", str(limited), "-n", namespace)
    assert scoped.exit_code == 0, scoped.stderr
    assert f"{namespace}/one: Succeeded" in scoped.stdout
    everywhere = msgen("controller", "--once", "--kubeconfig", str(limited))
    assert everywhere.exit_code == 1 and "in every namespace" in everywhere.stderr
    assert "forbidden" in everywhere.stderr, everywhere.stderr


def test_a_controller_on_the_cluster_serves_its_metrics(tmp_path: Path, namespace: str) -> None:
    """`msgen controller --metrics-port` against the cluster (before the Deployment runs, so
    nothing else acts on the job): /metrics parses with Prometheus' parser and holds the
    families operators scrape, counting the job's policy actions and the watches."""
    import socket
    import time
    from urllib.request import urlopen

    from msgen.reconcile.metrics import families

    from .test_reconcile_metrics import FAMILIES

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = msgen_started("controller", "--no-leader-elect", "-n", namespace, "--interval", "5",
                               "--metrics-port", str(port))
    try:
        rendered_by_kubectl(tmp_path, namespace, "mtr", msjob("mtr", script({0: (3, 0)}, default=(300, 0))),
                            "--target", "pod")
        wait_for("cleanPodPolicy to delete the running pods", lambda: sorted(
            p["metadata"]["name"] for p in pods(namespace) if not p["metadata"].get("deletionTimestamp"))
            == ["mtr-worker-0"])
        time.sleep(2)
        found = families(urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode())
    finally:
        controller.terminate()
        out = finished(controller, timeout=60)
    assert {name: found[name].type for name in FAMILIES if name in found} == FAMILIES, out.stdout
    actions = {tuple(sorted(s.labels.items())): s.value for s in found["msgen_policy_actions"].samples
               if s.name.endswith("_total")}
    deleted = actions[(("action", "delete"), ("kind", "Pod"), ("policy", "cleanPodPolicy"), ("result", "success"))]
    assert deleted == 2, actions  # the Scheduler and worker 1
    assert any(s.labels["resource"] == "pods" and s.value > 0 for s in found["msgen_watch_events"].samples)
    leader = [s.value for s in found["leader_election_master_status"].samples]
    assert leader == [1.0]  # without leader election it always acts


def test_both_replicas_are_ready_and_one_leads(deployed: None) -> None:
    found = controller_pods()
    assert len(found) == 2 and all(ready(p) for p in found)
    leader = leader_pod()
    # Within a few seconds of taking the Lease, not at its next resync (30 s).
    wait_for("the leader to say so", lambda: "leading (Lease msgen-system/msgen-controller" in logs(leader),
             timeout=20)
    spec = found[0]["spec"]
    assert spec["serviceAccountName"] == "msgen-controller" and spec["containers"][0]["readinessProbe"]


def test_a_job_applied_by_kubectl_gets_its_policies_status_and_events(
        deployed: None, tmp_path: Path, namespace: str) -> None:
    text = msjob("kbj", script({0: (3, 0)}, default=(300, 0)))
    rendered_by_kubectl(tmp_path, namespace, "kbj", text, "--target", "pod")
    # Success by worker 0 and cleanPodPolicy Running on bare Pods: the controller's to do.
    wait_for("the controller to end the job", lambda: published(namespace, "pod", "kbj-worker-0").get("phase")
             == "Succeeded")
    wait_for("the running pods to be deleted", lambda: sorted(
        p["metadata"]["name"] for p in pods(namespace) if not p["metadata"].get("deletionTimestamp"))
        == ["kbj-worker-0"])
    reasons = {e["reason"] for e in controller_events(namespace)}
    assert {"JobRunning", "JobSucceeded"} <= reasons, reasons
    shown = msgen("status", "kbj", "-n", namespace)
    assert "kbj: Succeeded" in shown.stdout and "Running 20" in shown.stdout, shown.stdout
    lines = logs(leader_pod())
    assert f"{namespace}/kbj: policy: delete Pod kbj-scheduler-0: job succeeded; cleanPodPolicy Running" in lines
    assert "forbidden" not in lines and "skipped" not in lines


def test_a_failed_indexed_job_is_published_failed_with_its_reason(
        deployed: None, tmp_path: Path, namespace: str) -> None:
    rendered_by_kubectl(tmp_path, namespace, "kbf", msjob("kbf", script({1: (1, 1)}, default=(300, 0))))
    found = wait_for("the failure to be published", lambda: published(namespace, "job", "kbf-worker")
                     if published(namespace, "job", "kbf-worker").get("phase") == "Failed" else None)
    assert found["conditions"][-1]["reason"] == "BackoffLimitExceeded"
    wait_for("cleanPodPolicy to suspend the scheduler", lambda: get("job", namespace, "kbf-scheduler")["spec"].get("suspend"))
    warning = [e for e in controller_events(namespace) if e["reason"] == "JobFailed"]
    assert warning and warning[0]["type"] == "Warning"


def test_leadership_passes_on_when_the_leader_pod_is_deleted(
        deployed: None, tmp_path: Path, namespace: str, record_property: Any) -> None:
    before = get("lease", SYSTEM, "msgen-controller")["spec"]
    old = leader_pod()
    kubectl("delete", "pod", "-n", SYSTEM, old, "--wait=false")
    new = wait_for("another replica to take the Lease", lambda: (
        leader_pod() if not holder().startswith(old + "_") and holder() else None), timeout=120)
    after = get("lease", SYSTEM, "msgen-controller")["spec"]
    assert new != old and after["leaseTransitions"] > before.get("leaseTransitions", 0)
    wait_for("the Deployment to replace the deleted pod", lambda: len([p for p in controller_pods() if ready(p)]) == 2)
    # The new leader carries out a policy.
    rendered_by_kubectl(tmp_path, namespace, "kbl", msjob("kbl", script({0: (3, 0)}, default=(300, 0))),
                        "--target", "pod")
    wait_for("the new leader to end the job", lambda: f"{namespace}/kbl: Succeeded" in logs(new))
    lines = [line for line in logs(new).splitlines() if "leading" in line or f"{namespace}/kbl" in line]
    assert any(line.startswith("leading (Lease") for line in lines), lines
    assert any(f"{namespace}/kbl: policy: delete Pod kbl-scheduler-0" in line for line in lines), lines
    stamped = kubectl("logs", "--timestamps", "-n", SYSTEM, new).stdout.splitlines()
    shown = [f"leader {old} deleted; {new} took the Lease (transitions {after['leaseTransitions']}):"] + [
        line for line in stamped if "leading" in line or f"{namespace}/kbl" in line]
    record_property("controller_log", "\n".join(shown))
    print("\n" + "\n".join(shown))


def test_a_replica_that_cannot_watch_is_not_ready(deployed: None) -> None:
    """Without its ClusterRoleBinding the watches' next list is refused: both replicas turn
    not ready (the readiness probe), say why in their log, and recover when it is back."""
    binding = kubectl("get", "clusterrolebinding", "msgen-controller", "-o", "json").stdout
    kubectl("delete", "clusterrolebinding", "msgen-controller")
    try:
        for pod in controller_pods():  # their watches end within a minute, then list again
            name = pod["metadata"]["name"]

            def not_ready(name: str = name) -> bool:
                return not ready(get("pod", SYSTEM, name))

            wait_for(f"{name} to be not ready", not_ready, timeout=240, every=5)
        said = logs(controller_pods()[0]["metadata"]["name"])
        assert "forbidden" in said and "; retrying" in said, said
    finally:
        restored = json.loads(binding)
        restored["metadata"] = {"name": "msgen-controller"}
        kubectl("apply", "-f", "-", input=json.dumps(restored))
    wait_for("both replicas ready again", lambda: len([p for p in controller_pods() if ready(p)]) == 2,
             timeout=240, every=5)
    assert "working again" in logs(controller_pods()[0]["metadata"]["name"])
