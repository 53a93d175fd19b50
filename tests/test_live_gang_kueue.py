"""Gang scheduling and queueing on a real cluster: `--gang-scheduler volcano` on `indexed-job`
and `pod` (every pod starts together, and with too few resources none starts), and
`--kueue-queue` on `indexed-job` and `jobset` (the Workloads are admitted and the job trains;
without quota it waits and starts when quota appears; applying the same YAML again, as a
GitOps tool does, does not fight Kueue).

Needs Volcano, Kueue and JobSet on the cluster MSGEN_TEST_KUBECONFIG names (`tests/live/cluster
up --with jobset,volcano,kueue`) and skips, saying which is missing, without them. The jobs are
the live training suite's `lenet-cpu` (a Scheduler and two Workers running real MindSpore with
`tests/live/train.py`), judged by the same `assert_trained`.
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

from . import live_addons, live_cluster
from .conftest import ROOT
from .live_cluster import KUBECONFIG, KUBECTL, Prepared, kubectl, prepare, run_job
from .test_live_training import assert_trained, record

pytestmark = [
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to train on"),
    pytest.mark.skipif(not KUBECTL, reason="the live tests need kubectl on the PATH"),
]
TIMEOUT = int(os.environ.get("MSGEN_LIVE_TIMEOUT", "900"))


@pytest.fixture
def namespace() -> Any:
    name = f"msgen-live-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    live_cluster.create_script_config_map(name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def lenet(name: str, gang: bool = False) -> Prepared:
    job = prepare((ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text())
    job.job["metadata"]["name"] = name
    if gang:
        job.job["spec"].setdefault("runPolicy", {})["schedulingPolicy"] = {"minAvailable": 3}
    return job


def apply_only(namespace: str, job: Prepared, tmp_path: Path, *options: str) -> None:
    """`msgen apply` without waiting, as a GitOps tool would apply the rendered YAML."""
    path = tmp_path / f"{job.name}.yaml"
    path.write_text(yaml.safe_dump(job.job))
    done = subprocess.run([sys.executable, "-m", "msgen", "apply", str(path), "-n", namespace, "--kube-version",
                           live_cluster.server_version(), *options], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "KUBECONFIG": str(KUBECONFIG)}, timeout=300)
    assert done.returncode == 0, done.stderr


# --- gang scheduling -----------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["indexed-job", "pod"])
def test_volcano_gang_starts_every_pod_together(target: str, namespace: str, tmp_path: Path) -> None:
    live_addons.require("volcano")
    job = lenet("gang", gang=True)
    times = live_addons.PodTimes(namespace)
    try:
        outcome = run_job(namespace, job, tmp_path, "--target", target, "--gang-scheduler", "volcano", timeout=TIMEOUT)
    finally:
        times.stop()
    assert outcome.exit_code == 0, f"{outcome.stdout}\n{outcome.stderr}"
    assert_trained(outcome, job, "cluster-ip")
    assert len(times.created) == 3 and set(times.scheduler.values()) == {"volcano"}, times.scheduler
    assert len(times.scheduled) == 3, f"every pod was seen bound: {times.scheduled}"
    # Gang: Volcano binds no pod before the whole group exists (API times are to the second).
    spread = max(times.scheduled.values()) - min(times.scheduled.values())
    assert min(times.scheduled.values()) >= max(times.created.values()), (times.created, times.scheduled)
    record("lenet-cpu.yaml, minAvailable 3", f"{target} --gang-scheduler volcano", "cluster-ip", outcome,
           f"all 3 pods bound by Volcano within {spread:.0f}s, after the last was created; trained, Succeeded")


@pytest.mark.parametrize("target", ["indexed-job", "pod"])
def test_volcano_gang_starts_no_pod_without_room_for_all(target: str, namespace: str, tmp_path: Path) -> None:
    live_addons.require("volcano")
    node = next(n for n in live_addons.get_json("nodes")["items"] if "kwok.x-k8s.io/node" not in n["metadata"].get("annotations", {}))
    cpu = node["status"]["allocatable"]["cpu"]
    millicores = int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)
    job = lenet("gang-full", gang=True)
    # Each pod asks for 60% of the node: one fits, the gang of three never does.
    for spec in job.job["spec"]["msReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0].setdefault("resources", {})["requests"] = {"cpu": f"{millicores * 6 // 10}m"}
    apply_only(namespace, job, tmp_path, "--target", target, "--gang-scheduler", "volcano")
    live_addons.wait_until("the job's pods are created",
                           lambda: len(live_addons.pods(namespace, "training.kubeflow.org/job-name=gang-full")) == 3, 120)
    # Give Volcano (1 s scheduling period) time to bind any pod it would.
    time.sleep(30)
    pods = live_addons.pods(namespace, "training.kubeflow.org/job-name=gang-full")
    bound = [p["metadata"]["name"] for p in pods if p["spec"].get("nodeName")]
    assert bound == [], f"no pod of a gang that cannot fit starts: {bound}"
    assert live_addons.podgroup_phase(namespace, "gang-full") in ("Pending", "Inqueue"), "the PodGroup waits"
    record("lenet-cpu.yaml, 3 pods × 60% of the node's CPU", f"{target} --gang-scheduler volcano", "cluster-ip", None,
           "none started (PodGroup waits)")


# --- Kueue ---------------------------------------------------------------------------------------

def kueue_setup(namespace: str, pods_quota: int) -> str:
    queue = f"q-{namespace.rsplit('-', 1)[-1]}"
    live_addons.kueue_queues(namespace, queue, pods_quota)
    return queue


@pytest.mark.parametrize("target", ["indexed-job", "jobset"])
def test_kueue_admits_and_the_job_trains(target: str, namespace: str, tmp_path: Path) -> None:
    live_addons.require("kueue", *(["jobset"] if target == "jobset" else []))
    queue = kueue_setup(namespace, pods_quota=10)
    try:
        job = lenet("queued")
        outcome = run_job(namespace, job, tmp_path, "--target", target, "--kueue-queue", queue, timeout=TIMEOUT)
        assert outcome.exit_code == 0, f"{outcome.stdout}\n{outcome.stderr}"
        assert "queued: Succeeded after" in outcome.stdout, outcome.stdout
        assert_trained(outcome, job, "cluster-ip")
        workloads = live_addons.workloads(namespace)
        assert workloads and all(w["status"].get("admission") for w in workloads), workloads
        expected = 2 if target == "indexed-job" else 1  # Kueue admits each role's Job on its own
        assert len(workloads) == expected, [w["metadata"]["name"] for w in workloads]
    finally:
        kubectl("delete", "clusterqueue", queue, "--wait=false", check=False)
    record("lenet-cpu.yaml", f"{target} --kueue-queue", "cluster-ip", outcome, f"admitted ({expected} Workloads), trained, Succeeded")


def _suspended(namespace: str, target: str) -> list[bool]:
    kind = "jobs.batch" if target == "indexed-job" else "jobsets.jobset.x-k8s.io"
    found = live_addons.get_json(kind, "-n", namespace, "-l", "training.kubeflow.org/job-name=waits")["items"]
    return [bool(o["spec"].get("suspend")) for o in found]


@pytest.mark.parametrize("target", ["indexed-job", "jobset"])
def test_kueue_without_quota_waits_then_starts_and_reapplying_does_not_fight(target: str, namespace: str,
                                                                              tmp_path: Path) -> None:
    live_addons.require("kueue", *(["jobset"] if target == "jobset" else []))
    queue = kueue_setup(namespace, pods_quota=0)
    try:
        job = lenet("waits")
        options = ("--target", target, "--kueue-queue", queue)
        apply_only(namespace, job, tmp_path, *options)
        live_addons.wait_until("Kueue makes the Workloads", lambda: live_addons.workloads(namespace), 60)
        time.sleep(20)
        assert not any(live_addons.admitted(w) for w in live_addons.workloads(namespace)), "no quota: not admitted"
        assert all(_suspended(namespace, target)), "Kueue keeps the workloads suspended"
        assert live_addons.pods(namespace) == [], "no pod runs before admission"
        live_addons.set_pods_quota(queue, 10)
        live_addons.wait_until("the quota admits the Workloads",
                               lambda: all(live_addons.admitted(w) for w in live_addons.workloads(namespace)), 120)
        live_addons.wait_until("Kueue resumes the workloads", lambda: not any(_suspended(namespace, target)), 60)
        kind = "jobs.batch" if target == "indexed-job" else "jobsets.jobset.x-k8s.io"
        before = {o["metadata"]["name"]: o["metadata"]["uid"] for o in live_addons.get_json(kind, "-n", namespace)["items"]}
        # The same YAML again, with --wait: a GitOps tool's next sync while the job runs.
        outcome = run_job(namespace, job, tmp_path, *options, timeout=TIMEOUT)
        assert outcome.exit_code == 0, f"{outcome.stdout}\n{outcome.stderr}"
        assert "waits: Succeeded after" in outcome.stdout, outcome.stdout
        assert_trained(outcome, job, "cluster-ip")
        after = {o["metadata"]["name"]: o["metadata"]["uid"] for o in live_addons.get_json(kind, "-n", namespace)["items"]}
        assert after == before, "applying again neither recreated nor replaced the workloads"
        evicted = [w["metadata"]["name"] for w in live_addons.workloads(namespace)
                   if any(c["type"] == "Evicted" and c["status"] == "True" for c in w["status"].get("conditions") or [])]
        assert evicted == [], "no Workload was evicted (re-suspended) by the second apply"
    finally:
        kubectl("delete", "clusterqueue", queue, "--wait=false", check=False)
    record("lenet-cpu.yaml, no quota, then quota, then applied again", f"{target} --kueue-queue", "cluster-ip", outcome,
           "waited, admitted when quota appeared, re-apply kept it running, trained, Succeeded")
