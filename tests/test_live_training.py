"""Real training on a real cluster: every MSJob sample msgen renders forms its MindSpore cluster
and trains, on `indexed-job`, `pod`, `statefulset`, `jobset` and `volcano` (the last two with
their controllers on the cluster), with both `--scheduler-address` modes and both launchers,
and `msgen apply --wait` judges the end right.

Runs when MSGEN_TEST_TRAINING=1 and MSGEN_TEST_KUBECONFIG names a cluster whose node runs pods
(kubelet, cluster DNS) and holds a MindSpore CPU image under the names the samples use, with
`kubectl` on the PATH; the live harness (`tests/live/cluster up`) is one. Otherwise it skips,
saying so: the whole suite takes about an hour on 2 cores, so a shell with the harness's
MSGEN_TEST_KUBECONFIG set does not start it by itself. The marker `live_training` selects it
(`pytest -m live_training`) or leaves it out (`-m "not live_training"`).

Each job is the sample (or the ms-operator file in ../shared/upstream) with its training
script replaced by `tests/live/train.py`, mounted from a ConfigMap where the job's command
expects it, and with what a 2-core node cannot give scaled down (`live_cluster.prepare` lists
each change). The script prints what it saw (`MSGEN-LIVE {json}` lines); the tests read them
from every container's log: each worker process joined once with a distinct rank, the
AllReduce of `rank + 1` summed right, the loss fell and every worker ended with the same
parameters, which needs the gradient AllReduce. MSGEN_LIVE_REPORT=FILE appends one JSON line
per run (job, target, mode, outcome, seconds).
"""

from __future__ import annotations

import math
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from . import live_addons, live_cluster
from .conftest import ROOT, SHARED
from .live_cluster import KUBECONFIG, KUBECTL, Outcome, Prepared, kubectl, prepare, report, run_job

pytestmark = [
    pytest.mark.live_training,
    pytest.mark.skipif(os.environ.get("MSGEN_TEST_TRAINING") != "1",
                       reason="the training suite (about an hour) runs with MSGEN_TEST_TRAINING=1"),
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to train on"),
    pytest.mark.skipif(not KUBECTL, reason="the live training tests need kubectl on the PATH"),
]

#: The MSJobs (mindspore.gitee.com/v1) that train here, as `(where, path)`.
JOBS = [
    ("samples", "mindspore/lenet-cpu.yaml"),
    ("samples", "mindspore/lenet-elastic-kueue.yaml"),
    ("samples", "mindspore/resnet-gang-volcano.yaml"),
    ("samples", "mindspore/standalone-worker.yaml"),
    ("samples", "mindspore/widedeep-gpu-dataparallel.yaml"),
    ("samples", "mindspore/widedeep-ps.yaml"),
    ("samples", "mindspore/gpu-2x8.yaml"),
    ("samples", "mindspore/gpu-2x8-msrun.yaml"),
    ("samples", "mindspore/ascend-single-npu.yaml"),
    ("samples", "mindspore/ascend-2x8.yaml"),
    ("samples", "mindspore/ascend-2x8-msrun.yaml"),
    ("samples", "mindspore/ascend-a3-node.yaml"),
    ("samples", "mindspore/ascend-npu-resource.yaml"),
    ("upstream", "ms-operator/ms_wide_deep_dataparallel.yaml"),
    ("upstream", "ms-operator/ms_wide_deep_ps_distribute.yaml"),
    ("upstream", "ms-operator/ms_wide_deep_ps_standalone.yaml"),
    ("upstream", "ms-operator/ms_wide_deep_standalone.yaml"),
]
#: MSJobs that do not run on the test cluster, and why.
NOT_HERE = {
    "mindspore/ascend-2x8-rank-table.yaml": (
        "--rank-table operator (its annotation): the Workers wait for the rank table MindCluster's ascend-operator "
        "fills (docs/ascend.md), and MindCluster is not on the test cluster"
    ),
}
#: Jobs also run on `statefulset` (whose pods restart for ever: judged from the first run).
STATEFULSET_JOBS = ["mindspore/lenet-cpu.yaml", "mindspore/widedeep-ps.yaml", "mindspore/gpu-2x8.yaml",
                    "mindspore/gpu-2x8-msrun.yaml"]
MODES = ["cluster-ip", "dns"]
#: The targets every job trains on; `jobset` and `volcano` need their controllers on the cluster
#: (`tests/live/cluster up --with jobset,volcano`) and skip, saying so, without them.
TARGETS = ["indexed-job", "pod", "jobset", "volcano"]
#: Seconds a job gets to end (MSGEN_LIVE_TIMEOUT; `--wait --timeout`).
TIMEOUT = int(os.environ.get("MSGEN_LIVE_TIMEOUT", "900"))


def source(where: str, path: str) -> Path:
    if where == "samples":
        return ROOT / "samples" / path
    found = SHARED / "upstream" / path
    if not found.exists():
        pytest.skip(f"{found} is missing: the upstream job files are in ../shared/upstream")
    return found


@pytest.fixture
def namespace() -> Any:
    prefix = os.environ.get("MSGEN_TEST_NAMESPACE_PREFIX", "msgen-live")
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    live_cluster.create_script_config_map(name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def role_log(outcome: Outcome, job: str, role: str) -> str:
    return outcome.logs.of(f"{job}-{role}-")


def assert_trained(outcome: Outcome, job: Prepared, mode: str) -> None:
    """What the pods' logs must show of a job that formed its cluster and trained."""
    n = job.worker_processes
    joined = outcome.of("cluster")
    assert sorted(e["rank"] for e in joined) == list(range(n)), f"each of {n} worker processes joins once: {joined}"
    assert {e["size"] for e in joined} == {n}
    if n > 1:
        sums = outcome.of("allreduce")
        assert len(sums) == n and all(e["sum"] == e["expected"] == n * (n + 1) / 2 for e in sums), sums
    trained = outcome.of("trained")
    assert sorted(e["rank"] for e in trained) == list(range(n)), f"every worker process trains to the end: {trained}"
    for e in trained:
        assert e["last_loss"] < e["first_loss"] / 10, e
        assert all(math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) for a, b in zip(e["params"], trained[0]["params"], strict=True)), (
            "every worker ends with the same parameters (the gradients were all-reduced)", trained)
    if not job.scheduler:
        return
    scheduler = role_log(outcome, job.name, "scheduler")
    # Every PS registers with the Scheduler, which counts them (MS_SERVER_NUM). Read at the
    # Scheduler: a PS's own init() returns later, once the PS processes formed their own group.
    servers = set(re.findall(r"The new node: (\S+)\(role: MS_PSERVER\)", scheduler))
    assert len(servers) == job.ps, f"every PS joins: {sorted(servers)}"
    if job.ps:
        # PS node ids are not numeric, so the Scheduler ranks every node by (host IP, node id).
        assert "Assign rank id of node id: 0, role: MS_WORKER" in scheduler
    else:
        assert "Rank ids are already set by numeric node ids" in scheduler
    for key, lines in outcome.logs.logs.items():
        resolved = any("msgen-resolve: MS_SCHED_HOST " in line for line in lines)
        if key.startswith(f"{job.name}-scheduler-"):
            assert not resolved, "the Scheduler listens on its own pod IP"
        elif mode == "dns":
            assert resolved, f"{key}: the scheduler's name was resolved before MindSpore started"
    for e in outcome.of("start"):
        if e["role"] in ("MS_WORKER", "MS_PSERVER"):
            # An IP address, whichever mode: the Service's address, or the resolved name.
            assert e["sched_host"].replace(".", "").isdigit() or ":" in e["sched_host"], e


def record(job: str, target: str, mode: str, outcome: Outcome | None, result: str) -> None:
    report({"job": job, "target": target, "mode": mode, "outcome": result,
            "seconds": None if outcome is None else round(outcome.seconds)})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("where,path", JOBS, ids=[p for _, p in JOBS])
def test_job_trains_and_wait_says_it_succeeded(where: str, path: str, target: str, mode: str,
                                               namespace: str, tmp_path: Path) -> None:
    if target in ("jobset", "volcano"):
        live_addons.require(target)
    job = prepare(source(where, path).read_text())
    if target == "volcano":
        live_addons.volcano_queue_for(job.job)
    outcome = run_job(namespace, job, tmp_path, "--target", target, "--scheduler-address", mode, timeout=TIMEOUT)
    try:
        assert outcome.exit_code == 0, f"msgen apply --wait: {outcome.stdout}\n{outcome.stderr}"
        assert f"{job.name}: Succeeded after" in outcome.stdout, outcome.stdout
        assert_trained(outcome, job, mode)
    except AssertionError:
        record(path, target, mode, outcome, "FAILED")
        raise
    record(path, target, mode, outcome, "trained, Succeeded")


@pytest.mark.parametrize("path", sorted(NOT_HERE))
def test_jobs_that_cannot_run_here(path: str) -> None:
    record(path, ", ".join(TARGETS), "both", None, f"not run: {NOT_HERE[path]}")
    pytest.skip(NOT_HERE[path])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", STATEFULSET_JOBS)
def test_statefulset_jobs_train_in_their_first_run(path: str, mode: str, namespace: str, tmp_path: Path) -> None:
    job = prepare(source("samples", path).read_text())

    def all_trained(outcome: Outcome) -> bool:
        return len(outcome.first_runs().of("trained")) >= job.worker_processes

    outcome = run_job(namespace, job, tmp_path, "--target", "statefulset", "--scheduler-address", mode,
                      wait=False, until=all_trained, timeout=600)
    assert outcome.exit_code == 0, outcome.stderr
    # The pods restart after training (a StatefulSet's always do): judge each pod's first run.
    assert_trained(outcome.first_runs(), job, mode)
    record(path, "statefulset", mode, outcome, "trained (first run)")


def _recovery_job() -> Prepared:
    """lenet-cpu, whose worker 1 crashes once right after joining the cluster (a marker on an
    emptyDir, which outlives the container, makes its restart go on)."""
    job = prepare((ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text())
    job.job["metadata"]["name"] = "recover"
    for spec in job.job["spec"]["msReplicaSpecs"].values():
        spec["restartPolicy"] = "OnFailure"
        pod = spec["template"]["spec"]
        pod["volumes"].append({"name": "state", "emptyDir": {}})
        main = pod["containers"][0]
        main["volumeMounts"].append({"name": "state", "mountPath": "/state"})
        main["env"] = [{"name": "LIVE_FAIL_ONCE", "value": "1"}, {"name": "LIVE_MARKER_DIR", "value": "/state"}]
    return job


def test_recovery_volume_lets_a_crashed_worker_rejoin(namespace: str, tmp_path: Path) -> None:
    job = _recovery_job()
    outcome = run_job(namespace, job, tmp_path, "--target", "pod", "--recovery-volume", "state", timeout=600)
    assert outcome.exit_code == 0, f"{outcome.stdout}\n{outcome.stderr}"
    assert [e["node_id"] for e in outcome.of("crash")] == ["1"] and outcome.of("restarted")
    scheduler = role_log(outcome, "recover", "scheduler")
    assert "The node: 1 have been recovered" in scheduler, "MS_ENABLE_RECOVERY: the Scheduler takes it back"
    assert "registered repeatedly" not in scheduler
    # The restarted worker trains with the others.
    assert_trained(outcome.without_crashed_runs(), job, "cluster-ip")
    record("lenet-cpu.yaml, worker 1 crashes once", "pod", "cluster-ip --recovery-volume", outcome,
           "rejoined, trained, Succeeded")


def test_without_recovery_the_scheduler_rejects_the_restarted_worker(namespace: str, tmp_path: Path) -> None:
    # The control: the same job and crash without --recovery-volume.
    job = _recovery_job()

    def rejected(outcome: Outcome) -> bool:
        return "registered repeatedly" in role_log(outcome, "recover", "scheduler")

    outcome = run_job(namespace, job, tmp_path, "--target", "pod", wait=False, until=rejected, timeout=300)
    scheduler = role_log(outcome, "recover", "scheduler")
    assert "Node 1 registered repeatedly" in scheduler and "Reject this node" in scheduler
    assert "have been recovered" not in scheduler
    record("lenet-cpu.yaml, worker 1 crashes once", "pod", "cluster-ip", outcome, "restarted worker rejected")
