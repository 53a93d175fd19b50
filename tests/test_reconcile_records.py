"""What the controller keeps of each watched object (`records.essentials`), and that an
event changes its copy in place: the controller's memory per job, asserted on structure."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import actions, informer, published, records, status, watch

from .fake_api import Cluster, Server
from .fake_kubelet import create_job_pods, msjob, place, rendered

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def as_a_cluster_has_it(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """`obj` with what a real API server and kubectl add: managedFields, finalizers, the
    last-applied annotation, a pod's conditions, IPs, QoS class and images."""
    out: dict[str, Any] = json.loads(json.dumps(obj))
    metadata = out["metadata"]
    metadata.setdefault("uid", f"uid-{n}")
    metadata.update(resourceVersion=str(100 + n), generation=1,
                    creationTimestamp="2026-01-01T00:00:00Z", finalizers=["batch.kubernetes.io/job-tracking"],
                    managedFields=[{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}}])
    metadata.setdefault("annotations", {})[LAST_APPLIED] = json.dumps(obj)
    if out["kind"] == "Pod":
        failed = obj["metadata"]["name"].startswith("j-worker-1")
        out["status"] = {
            "phase": "Failed" if failed else "Running", "startTime": "2026-01-01T00:00:00Z",
            "hostIP": "10.0.0.1", "podIP": f"10.1.0.{n}", "podIPs": [{"ip": f"10.1.0.{n}"}], "qosClass": "Burstable",
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:01Z"}
                           for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [{
                "name": "mindspore", "ready": not failed, "started": not failed, "restartCount": 0,
                "image": "mindspore/mindspore:2.3", "imageID": "docker.io/mindspore@sha256:00", "containerID": "containerd://0",
                "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-01-01T00:00:01Z",
                                         "finishedAt": "2026-01-01T00:00:30Z"}} if failed else
                {"running": {"startedAt": "2026-01-01T00:00:01Z"}}}]}
    return out


def job(target: str) -> list[dict[str, Any]]:
    """A rendered job as the API server holds it, its Jobs' pods made as the Job controller does."""
    cluster = Cluster()
    objects = []
    for obj in rendered(msjob("j", 3), "ns", target):
        objects.append(cluster.put(obj))
        if obj["kind"] == "Job":
            objects += create_job_pods(cluster, objects[-1])
    return [as_a_cluster_has_it(o, n) for n, o in enumerate(objects)]


@pytest.mark.parametrize("target", ["pod", "indexed-job"])
def test_a_record_keeps_what_the_decisions_read_and_nothing_a_cluster_adds(target: str) -> None:
    objects = job(target)
    kept = [records.essentials(o) for o in objects]
    for full, record in zip(objects, kept, strict=True):
        metadata = record["metadata"]
        assert "managedFields" not in metadata and "finalizers" not in metadata
        assert set(metadata.get("annotations") or {}) <= {"msgen/run-policy", "batch.kubernetes.io/job-completion-index"}
        assert metadata["uid"] == full["metadata"]["uid"]
        assert metadata["labels"] == {k: v for k, v in full["metadata"]["labels"].items() if k in records.KEPT_LABELS}
        assert metadata["labels"]["training.kubeflow.org/job-name"] == "j"
        if record["kind"] == "Pod":
            assert "job-name" in full["metadata"]["labels"] and "job-name" not in metadata["labels"]  # MindSpore's own
            assert set(record["spec"]) <= {"containers", "nodeName", "restartPolicy", "schedulerName"}
            assert record["spec"]["containers"] == [{"name": "mindspore"}]
            assert set(record["status"]) == {"phase", "startTime", "containerStatuses"}
            assert set(record["status"]["containerStatuses"][0]) == {"name", "restartCount", "state"}
        template = (record.get("spec") or {}).get("template")
        assert template is None or set(template) == {"metadata", "spec"}
        assert template is None or template["spec"] == {"restartPolicy": full["spec"]["template"]["spec"]["restartPolicy"]}
    assert len(json.dumps(kept)) < len(json.dumps(objects)) / 3
    assert "managedFields" in objects[0]["metadata"]  # the object received is not changed

    def decided(found: list[dict[str, Any]]) -> Any:
        policy, workloads, pods = watch.select("j", "ns", found)
        verdict = status.aggregate(policy, workloads, pods)
        services = [o for o in found if o["kind"] == "Service"]
        now = datetime(2026, 1, 1, 1, tzinfo=timezone.utc)
        return (verdict, actions.due(policy, verdict, workloads, pods, now, services),
                (published.keeper(policy, workloads, services) or {}).get("metadata", {}).get("name"))

    assert decided(kept) == decided(objects)
    # the OOMKilled worker, read from what was kept (an indexed Job's, from its pods: backoffLimit 0
    # is passed, before its Job says so)
    assert decided(kept)[0].phase == "Failed"


def test_the_annotations_a_decision_reads_are_kept() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {
        "msgen/status": "{}", "msgen/stopped-at": "2026-01-01T00:00:00Z", "argocd.argoproj.io/tracking-id": "app:/Pod:ns/p",
        "volcano.sh/task-index": "3", LAST_APPLIED: "{}", "prometheus.io/scrape": "true"}}}
    assert set(records.essentials(pod)["metadata"]["annotations"]) == {
        "msgen/status", "msgen/stopped-at", "argocd.argoproj.io/tracking-id", "volcano.sh/task-index"}


def test_a_tenants_labels_cost_nothing() -> None:
    """A pod anyone may label with a job's name: its other labels are not kept."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {
        "training.kubeflow.org/job-name": "j", **{f"x{n}": "y" * 60 for n in range(1000)}}}}
    assert records.essentials(pod)["metadata"]["labels"] == {"training.kubeflow.org/job-name": "j"}


def test_records_share_one_copy_of_each_text() -> None:
    """Each watch event is parsed on its own: without interning, every object of a job
    would hold its own copy of the same label keys, values and run policy."""
    first, second = (records.essentials(json.loads(json.dumps(o))) for o in [o for o in job("pod") if o["kind"] == "Pod"][:2])
    policy = "msgen/run-policy"
    assert first["metadata"]["annotations"][policy] is second["metadata"]["annotations"][policy]
    shared = [(k, v) for k, v in first["metadata"]["labels"].items() if second["metadata"]["labels"].get(k) == v]
    assert shared and all(v is second["metadata"]["labels"][k] for k, v in shared)
    key = next(iter(first["metadata"]["labels"]))
    assert next(k for k in second["metadata"]["labels"] if k == key) is key


def test_hostile_nesting_is_kept_as_received_not_recursed_into() -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(5000):
        inner["x"] = {}
        inner = inner["x"]
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "status": deep}
    assert records.essentials(obj)["status"]["x"]["x"]["x"] is not None


def test_an_event_changes_the_copy_in_place_not_a_copy_of_it() -> None:
    """A copy of the whole cache per event grows with the cache (5 % of a leader's time at
    6,000 pods): every event must change the same dict."""
    def pod(name: str, version: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "resourceVersion": version}}

    cache = informer.relisted([pod("a", "1"), pod("b", "2")], "2")
    objects = cache.objects
    for event, obj in [("MODIFIED", pod("a", "3")), ("ADDED", pod("c", "4")), ("DELETED", pod("b", "5")),
                       ("BOOKMARK", {"metadata": {"resourceVersion": "6"}})]:
        cache = informer.applied(cache, event, obj)
        assert cache.objects is objects
    assert sorted(objects) == ["ns/a", "ns/c"] and cache.version == "6"


def test_the_informer_keeps_one_record_per_object_listed(tmp_path: Path) -> None:
    """A relist makes each object's record once: a second record of each, made from the
    first, stayed referenced (by the loop's last list) until the next relist."""
    pytest.importorskip("lightkube")
    from msgen.reconcile import kube

    cluster = Cluster()
    server = Server(cluster).start()
    try:
        place(cluster, rendered(msjob("j", 3), "ns", "pod"))
        config = tmp_path / "kubeconfig"
        config.write_text(json.dumps(server.kubeconfig("ns")))
        made: list[str] = []

        def counted(obj: dict[str, Any]) -> dict[str, Any]:
            made.append(str(obj["metadata"]["name"]))
            return records.essentials(obj)

        watching = informer.Informer(kube.connect(str(config), None), "v1", "Pod", "ns", {}, threading.Event(),
                                     transform=counted).start()
        assert watching.synced.wait(10)
        watching.stop()
        assert sorted(made) == sorted(o["metadata"]["name"] for o in watching.items()) and len(made) == 4
    finally:
        server.shutdown()


def test_a_given_lister_is_transformed_once_per_object() -> None:
    made: list[str] = []

    def lister() -> tuple[list[dict[str, Any]], str | None]:
        return [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}}], "1"

    def quiet(version: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
        threading.Event().wait(5)
        yield from ()

    def counted(obj: dict[str, Any]) -> dict[str, Any]:
        made.append(str(obj["metadata"]["name"]))
        return obj

    watching = informer.Informer(None, "v1", "Pod", "ns", {}, threading.Event(), lister=lister, watcher=quiet,
                                 transform=counted).start()
    assert watching.synced.wait(5)
    watching.stop()
    assert made == ["a"]
