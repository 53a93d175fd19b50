"""`--gang-scheduler kubernetes` on a real cluster: the default scheduler places a job's pods all
or none (Kubernetes 1.37's Workload API and GangScheduling plug-in, contracts §8).

Needs a cluster (MSGEN_TEST_KUBECONFIG, kubectl) that serves `scheduling.k8s.io/v1beta1`: the
live harness with `tests/live/cluster up --feature-gates GenericWorkload=true`, which turns the
gate on in the API server, scheduler and controller manager and the API version on in the API
server. Skips, saying so, otherwise.

- Every object msgen renders with the option, and the pods its workload controllers would make,
  is accepted by the API server (a server-side dry run, strict field validation).
- A job that fits trains (real MindSpore, `tests/live/train.py`), all its pods bound together.
- With too little room for all: one node gets an extended resource `msgen.test/gang-slot` of 2
  (its status, as the harness gives GPUs), and a job's Workers ask for one each. Three Workers
  and their Scheduler: the scheduler reports the PodGroup `Unschedulable` and binds none of the
  four pods, though two Workers and the Scheduler would fit: the same job without the option,
  applied next (the control), gets exactly those three bound while the gang still has none.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from . import live_addons, live_cluster
from .conftest import ROOT, msgen
from .dry_run import ENVIRONMENT, ApiServer, judged
from .live_cluster import KUBECONFIG, KUBECTL, Prepared, kubectl, prepare, run_job
from .test_gang_kubernetes import API
from .test_live_gang_kueue import apply_only
from .test_live_training import assert_trained, record

pytestmark = [
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster"),
    pytest.mark.skipif(not KUBECTL, reason="the live tests need kubectl on the PATH"),
]
TIMEOUT = int(os.environ.get("MSGEN_LIVE_TIMEOUT", "900"))
SLOT = "msgen.test/gang-slot"


@pytest.fixture(scope="module", autouse=True)
def _served() -> None:
    if API not in kubectl("api-versions").stdout.split():
        pytest.skip(f"the cluster does not serve {API}: tests/live/cluster up --feature-gates GenericWorkload=true "
                    "(the GenericWorkload gate and --runtime-config=scheduling.k8s.io/v1beta1=true)")


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"msgen-live-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    live_cluster.create_script_config_map(name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def lenet(name: str, workers: int, slots: bool = False) -> Prepared:
    job = prepare((ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text())
    job.job["metadata"]["name"] = name
    worker = next(spec for key, spec in job.job["spec"]["msReplicaSpecs"].items() if key.lower() == "worker")
    worker["replicas"] = workers
    if slots:
        container = worker["template"]["spec"]["containers"][0]
        container.setdefault("resources", {})["limits"] = {SLOT: "1"}
    return job


def test_the_api_server_accepts_every_object_and_the_pods_made_from_them(namespace: str) -> None:
    version = live_cluster.server_version()
    server = ApiServer(str(KUBECONFIG))
    refused = []
    try:
        for target in ("indexed-job", "pod", "statefulset", "jobset", "trainjob"):
            for sample in ("lenet-cpu.yaml", "gpu-2x8-msrun.yaml", "widedeep-ps.yaml"):
                run = msgen("render", str(ROOT / "samples" / "mindspore" / sample), "--target", target,
                            "--gang-scheduler", "kubernetes", "--kube-version", version)
                assert run.exit_code == 0, run.stderr
                objects = [part for obj in run.objects() for part in judged(obj)
                           if part["kind"] in ("Workload", "PodGroup", "Pod", "Job", "StatefulSet")]
                assert {o["kind"] for o in objects} >= {"Workload", "PodGroup", "Pod"}
                for obj, (status, message) in zip(objects, server.dry_run_all(objects, namespace), strict=True):
                    if status >= 300 and not any(reason in message for reason in ENVIRONMENT):
                        refused.append(f"{sample} {target}: {obj['kind']}/{obj['metadata']['name']}: {message}")
    finally:
        server.close()
    assert refused == []


def test_a_gang_that_fits_trains_with_every_pod_bound_together(namespace: str, tmp_path: Path) -> None:
    job = lenet("kgang", 2)
    times = live_addons.PodTimes(namespace)
    try:
        outcome = run_job(namespace, job, tmp_path, "--target", "indexed-job", "--gang-scheduler", "kubernetes",
                          timeout=TIMEOUT)
    finally:
        times.stop()
    assert outcome.exit_code == 0, f"{outcome.stdout}\n{outcome.stderr}"
    assert_trained(outcome, job, "cluster-ip")
    assert len(times.scheduled) == 3, f"every pod was seen bound: {times.scheduled}"
    assert min(times.scheduled.values()) >= max(times.created.values()), (times.created, times.scheduled)
    group = live_addons.get_json(f"podgroups.{API.split('/')[0]}", "kgang", "-n", namespace)
    assert _initially_scheduled(group) == ("True", "Scheduled")
    spread = max(times.scheduled.values()) - min(times.scheduled.values())
    record("lenet-cpu.yaml, 3 pods", "indexed-job --gang-scheduler kubernetes", "cluster-ip", outcome,
           f"all 3 pods bound within {spread:.0f}s, after the last was created; trained, Succeeded")


@pytest.fixture
def two_slots() -> Iterator[str]:
    """One Ready node of the harness with `msgen.test/gang-slot: 2` in its status (and no other)."""
    nodes = [n for n in live_addons.get_json("nodes")["items"]
             if "kwok.x-k8s.io/node" not in n["metadata"].get("annotations", {}) and _ready(n)]
    node = nodes[0]["metadata"]["name"]
    _set_slots(node, "2")
    try:
        yield node
    finally:
        _set_slots(node, None)


def _ready(node: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions", []))


def _set_slots(node: str, value: str | None) -> None:
    key = SLOT.replace("/", "~1")
    ops = [{"op": "add", "path": f"/status/{part}/{key}", "value": value} if value is not None
           else {"op": "remove", "path": f"/status/{part}/{key}"} for part in ("capacity", "allocatable")]
    kubectl("patch", "node", node, "--subresource=status", "--type=json", "-p", json.dumps(ops), check=value is not None)


def _initially_scheduled(group: dict[str, Any]) -> tuple[str, str] | None:
    for condition in group.get("status", {}).get("conditions") or []:
        if condition["type"] == "PodGroupInitiallyScheduled":
            return condition["status"], condition["reason"]
    return None


@pytest.mark.parametrize("target", ["indexed-job", "pod"])
def test_with_room_for_part_of_the_job_no_pod_is_placed(target: str, namespace: str, two_slots: str,
                                                         tmp_path: Path) -> None:
    gang = "kgang-full"
    apply_only(namespace, lenet(gang, 3, slots=True), tmp_path, "--target", target, "--gang-scheduler", "kubernetes")
    live_addons.wait_until("the job's four pods are created", lambda: len(_pods(namespace, gang)) == 4, 120)
    group = live_addons.wait_until(
        "the scheduler's verdict on the PodGroup",
        lambda: (lambda g: g if _initially_scheduled(g) else None)(
            live_addons.get_json(f"podgroups.{API.split('/')[0]}", gang, "-n", namespace)), 180)
    assert _initially_scheduled(group) == ("False", "Unschedulable"), group["status"]
    assert _bound(namespace, gang) == [], "no pod of the gang is placed"
    # The control, on the same cluster at once: the same job without a gang gets the Scheduler
    # and two Workers placed (the room the gang did not take), its third Worker Unschedulable.
    control = "kgang-control"
    apply_only(namespace, lenet(control, 3, slots=True), tmp_path, "--target", "pod")

    def settled() -> list[dict[str, Any]] | None:
        pods = _pods(namespace, control)
        unschedulable = [p for p in pods if any(c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
                                                for c in p.get("status", {}).get("conditions") or [])]
        return pods if len(pods) == 4 and len(_bound(namespace, control)) == 3 and len(unschedulable) == 1 else None

    pods = live_addons.wait_until("the control: three pods bound and the fourth Unschedulable", settled, 180)
    slotted = [p for p in pods if p["spec"].get("nodeName") == two_slots and "worker" in p["metadata"]["name"]]
    assert len(slotted) == 2, "the two slots went to two of the control's Workers"
    assert _bound(namespace, gang) == [], "the gang still has no pod placed"
    record("lenet-cpu.yaml, 3 Workers × 1 of 2 slots + Scheduler", f"{target} --gang-scheduler kubernetes",
           "cluster-ip", None, f"none of 4 bound (PodGroup Unschedulable: {_message(group)}); "
           "the same job without the option: 3 of 4 bound")


def _pods(namespace: str, job: str) -> list[dict[str, Any]]:
    return live_addons.pods(namespace, f"training.kubeflow.org/job-name={job}")


def _bound(namespace: str, job: str) -> list[str]:
    return [p["metadata"]["name"] for p in _pods(namespace, job) if p["spec"].get("nodeName")]


def _message(group: dict[str, Any]) -> str:
    return str(next(c["message"] for c in group["status"]["conditions"] if c["type"] == "PodGroupInitiallyScheduled"))
