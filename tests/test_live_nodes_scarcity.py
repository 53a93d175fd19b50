"""Two jobs for the room of one and a half: gang scheduling under scarcity, and host-network
jobs on three nodes.

- Gang: each job's two Workers each request most of a node's memory (60% of the smallest
  node's allocatable: one Worker per node), so the three nodes hold one job and half of
  another. (Memory, not a node's devices: msgen runs a MindSpore process per device of a
  Worker, 16 per job for the harness's 8 devices a node, more than this machine trains; the
  schedulers count both the same way.) With Volcano (`--gang-scheduler volcano`
  on `indexed-job`, and `--target volcano`) and with Kueue (`--kueue-queue` on `jobset`, when
  Kueue runs), one job runs whole and the other waits whole, no pod of it bound, until the
  first ends; then it trains. Without a gang scheduler the kube-scheduler binds pods one by
  one: the second job is half placed (a Worker holds a node's room and waits for its peer).
- Host network (the Ascend samples' `hostNetwork: true` Workers, port 2222): one Worker per
  node, and a second such job's Worker waits (Pending, the node's port taken) instead of
  colliding with the first's.

Opt-in (MSGEN_TEST_FAILURES=1, marker `live_nodes`) on `tests/live/cluster up --nodes 3`;
see tests/live_nodes.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import live_addons, live_cluster, live_nodes
from .conftest import ROOT
from .live_cluster import KUBECONFIG, Prepared
from .live_nodes import MSGEN

pytestmark = live_nodes.marks

SCARCE = "memory"
#: The part of a node's allocatable memory each Worker requests: one Worker per node.
SHARE = 0.6


@pytest.fixture
def namespace() -> Any:
    name = f"msgen-nodes-{uuid.uuid4().hex[:8]}"
    live_cluster.kubectl("create", "namespace", name)
    live_cluster.create_script_config_map(name)
    yield name
    live_cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


def whole_node_job(name: str, request: str, gang: bool) -> Prepared:
    """lenet whose Workers each request `request` of SCARCE (a node's room); trains for about
    a minute."""
    job = live_nodes.lenet(name, steps=60, step_seconds=1)
    for key, spec in job.job["spec"]["msReplicaSpecs"].items():
        if key.lower() == "worker":
            spec["template"]["spec"]["containers"][0]["resources"] = {"requests": {SCARCE: request}}
    if gang:
        job.job["spec"].setdefault("runPolicy", {})["schedulingPolicy"] = {"minAvailable": 3}
    return job


def apply(namespace: str, job: Prepared, tmp_path: Path, *options: str, wait: bool = False) -> subprocess.Popen[str]:
    path = tmp_path / f"{job.name}.yaml"
    path.write_text(yaml.safe_dump(job.job))
    argv = [*MSGEN, "apply", str(path), "-n", namespace, "--kube-version", live_cluster.server_version(), *options,
            *(["--wait", "--timeout", "900s"] if wait else [])]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "KUBECONFIG": str(KUBECONFIG)})


def bound(namespace: str, job: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in live_nodes.pods_of(namespace, job) if p["spec"].get("nodeName")
                  and p["status"].get("phase") in ("Pending", "Running"))


def worker_request() -> tuple[str, int]:
    """SHARE of the smallest Ready node's allocatable memory, in Mi (more than half a node:
    one such Worker per node), and that in bytes."""
    allocatable = [n["status"]["allocatable"]["memory"] for n in live_nodes.real_nodes() if live_nodes.ready(n)]
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    smallest = min(int(a[:-2]) * units[a[-2:]] if a[-2:] in units else int(a) for a in allocatable)
    mebibytes = int(smallest * SHARE) >> 20
    return f"{mebibytes}Mi", mebibytes << 20


GANGS = {
    "volcano gang (indexed-job)": (("--target", "indexed-job", "--gang-scheduler", "volcano"), ("volcano",), True),
    "volcano target": (("--target", "volcano"), ("volcano",), True),
    "kueue (jobset)": (("--target", "jobset"), ("kueue", "jobset"), False),
    "no gang scheduler (indexed-job)": (("--target", "indexed-job"), (), False),
}


@pytest.mark.parametrize("how", list(GANGS))
def test_two_jobs_for_the_room_of_one_and_a_half(how: str, namespace: str, tmp_path: Path) -> None:
    live_nodes.require_nodes(3)
    options, needs, gang = GANGS[how]
    live_addons.require(*needs)
    request, request_bytes = worker_request()
    queue: list[str] = []
    if "kueue" in needs:
        queue = ["--kueue-queue", _kueue_queue(namespace, memory=3 * request_bytes)]
    first, second = whole_node_job("first", request, gang), whole_node_job("second", request, gang)
    waiting = apply(namespace, first, tmp_path, *options, *queue, wait=True)
    live_addons.wait_until("the first job's Workers are bound", lambda: len(bound(namespace, "first")) == 3, 300)
    # The second job, followed to its end (re-applying a Volcano Job is refused by its webhook).
    following = apply(namespace, second, tmp_path, *options, *queue, wait=True)
    began = time.monotonic()
    seen: set[str] = set()  # the second job's pods bound while the first held all its room
    shown: list[str] | None = None
    while waiting.poll() is None and time.monotonic() - began < 900:
        holds = len(bound(namespace, "first")) == 3
        half = bound(namespace, "second")
        if holds and len(bound(namespace, "first")) == 3:  # before and after: no race with its end
            seen.update(half)
            if half != shown:  # each change once
                print(f"{how}: +{time.monotonic() - began:.0f}s while the first job runs, the second has bound "
                      f"{half or 'nothing'}")
                shown = half
        time.sleep(2)
    out, _ = waiting.communicate(timeout=60)
    assert "first: Succeeded after" in out, out
    second_bound_while_first_ran = sorted(seen)
    # Then the second job gets its room and trains.
    out2, err2 = following.communicate(timeout=960)
    live_cluster.report({"suite": "scarcity", "how": how, "second_bound_while_first_ran": second_bound_while_first_ran,
                         "second": out2.strip().splitlines()[-1:] if out2 else err2[-300:]})
    print(f"{how}: second job bound while the first ran: {second_bound_while_first_ran}; then: {out2[-500:]}")
    assert "second: Succeeded after" in out2, out2 + err2
    if gang or "kueue" in needs:
        assert second_bound_while_first_ran == [], "the second job waited whole"
    else:
        assert second_bound_while_first_ran, "without a gang scheduler the second job is placed in part"


def _kueue_queue(namespace: str, memory: int) -> str:
    """A ClusterQueue whose memory quota is three Workers' requests (one job and a half), and
    its LocalQueue."""
    queue = f"q-{namespace.rsplit('-', 1)[-1]}"
    live_addons.kueue_queues(namespace, queue, pods_quota=100)
    patch = [{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources/1/nominalQuota",
              "value": f"{memory >> 20}Mi"}]
    live_cluster.kubectl("patch", "clusterqueue", queue, "--type=json", "-p", json.dumps(patch))
    return queue


def host_network_job(name: str, nodes: int) -> Prepared:
    """ascend-2x8.yaml: its two host-network Workers (port 2222) as written, training a minute;
    no anti-affinity of ours: their ports alone keep them apart."""
    job = live_cluster.prepare((ROOT / "samples" / "mindspore" / "ascend-2x8.yaml").read_text(), nodes=nodes)
    job.job["metadata"]["name"] = name
    for spec in job.job["spec"]["msReplicaSpecs"].values():
        container = spec["template"]["spec"]["containers"][0]
        container["env"] = [*container.get("env", []), {"name": "LIVE_STEPS", "value": "60"},
                            {"name": "LIVE_STEP_SECONDS", "value": "1"}]
    live_nodes.spread(job, workers_apart=False)
    return job


def test_host_network_jobs_take_a_node_per_worker_and_the_second_waits(namespace: str, tmp_path: Path) -> None:
    nodes = live_nodes.require_nodes(3)
    first, second = host_network_job("hn-first", len(nodes)), host_network_job("hn-second", len(nodes))
    assert first.job["spec"]["msReplicaSpecs"]["Worker"]["replicas"] == 2
    waiting = apply(namespace, first, tmp_path, wait=True)
    live_addons.wait_until("the first job's pods are bound", lambda: len(bound(namespace, "hn-first")) == 3, 300)
    apply(namespace, second, tmp_path).communicate(timeout=300)
    most = 0
    placed: dict[str, set[str]] = {}
    pending_why: set[str] = set()
    while waiting.poll() is None:
        at_once: dict[str, int] = {}
        for pod in live_nodes.pods_of(namespace, "hn-first") + live_nodes.pods_of(namespace, "hn-second"):
            where = pod["spec"].get("nodeName")
            if where and pod["spec"].get("hostNetwork") and pod["status"].get("phase") in ("Pending", "Running"):
                at_once[where] = at_once.get(where, 0) + 1
                placed.setdefault(where, set()).add(pod["metadata"]["name"])
            for c in pod["status"].get("conditions") or []:
                if c["type"] == "PodScheduled" and c["status"] == "False":
                    pending_why.add(f"{pod['metadata']['name']}: {c.get('message', '')}")
        most = max([most, *at_once.values()])
        time.sleep(2)
    out, err = waiting.communicate()
    assert "hn-first: Succeeded after" in out, out + err
    print(f"host-network Workers per node: {placed}; waiting: {pending_why}")
    assert most == 1, f"no node ran two host-network Workers at once: {placed}"
    assert any(why.startswith("hn-second-worker") and "free ports" in why for why in pending_why), pending_why
    done = apply(namespace, second, tmp_path, wait=True)
    out2, err2 = done.communicate(timeout=960)
    assert "hn-second: Succeeded after" in out2, out2 + err2
    live_cluster.report({"suite": "host-network", "placed": {k: sorted(v) for k, v in placed.items()},
                         "waiting": sorted(pending_why)})
