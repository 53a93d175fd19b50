"""A job whose Workers run on different nodes trains, on every target, with both
`--scheduler-address` modes: the MindSpore cluster forms over pod-to-pod traffic between
nodes, the Workers find the Scheduler (on node 1) through its ClusterIP Service or its DNS
name from other nodes, and the gradients are all-reduced across them.

Opt-in (MSGEN_TEST_FAILURES=1, marker `live_nodes`) on `tests/live/cluster up --nodes 3`;
see tests/live_nodes.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import live_addons, live_cluster, live_nodes
from .live_cluster import Outcome, run_job
from .test_live_training import assert_trained, record

pytestmark = live_nodes.marks

TARGETS = ["indexed-job", "pod", "statefulset", "jobset", "volcano", "trainjob"]
#: What each target needs on the cluster besides Kubernetes.
NEEDS = {"jobset": ("jobset",), "volcano": ("volcano",), "trainjob": ("jobset", "trainer")}


@pytest.fixture
def namespace() -> Any:
    import uuid

    name = f"msgen-nodes-{uuid.uuid4().hex[:8]}"
    live_cluster.kubectl("create", "namespace", name)
    live_cluster.create_script_config_map(name)
    yield name
    live_cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.mark.parametrize("mode", ["cluster-ip", "dns"])
@pytest.mark.parametrize("target", TARGETS)
def test_workers_on_different_nodes_train_together(target: str, mode: str, namespace: str, tmp_path: Path) -> None:
    live_nodes.require_nodes(3)
    live_addons.require(*NEEDS.get(target, ()))
    job = live_nodes.lenet("spread")
    where = live_nodes.Timeline(namespace, job.name, target, None, status=False)
    try:
        if target == "statefulset":  # never ends: judged from each pod's first run
            def all_trained(outcome: Outcome) -> bool:
                return len(outcome.first_runs().of("trained")) >= job.worker_processes

            outcome = run_job(namespace, job, tmp_path, "--target", target, "--scheduler-address", mode, wait=False,
                              until=all_trained, timeout=600)
            outcome = outcome.first_runs()
        else:
            outcome = run_job(namespace, job, tmp_path, "--target", target, "--scheduler-address", mode, timeout=900)
            assert outcome.exit_code == 0 and "spread: Succeeded after" in outcome.stdout, outcome.stdout + outcome.stderr
    finally:
        where.stop()
    assert_trained(outcome, job, mode)
    placed = where.placements()
    workers = sorted(node for pod, node in placed.items() if "-scheduler-" not in pod)
    schedulers = {node for pod, node in placed.items() if "-scheduler-" in pod}
    assert len(workers) == 2 and len(set(workers)) == 2, f"the Workers ran on two nodes: {placed}"
    assert schedulers == {live_nodes.FIRST}, placed
    assert any(node != live_nodes.FIRST for node in workers), placed
    record("lenet-cpu.yaml, Workers on two nodes", target, mode, outcome,
           f"trained across {', '.join(sorted({*workers, *schedulers}))}")
