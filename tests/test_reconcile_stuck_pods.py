"""Pods a lost node holds (msgen/reconcile/stuck_pods.py): a pod deleted longer ago than its
grace period and SLACK that has not ended is named, with its node and what frees it; any
other pod is not. Seen on the live harness: a StatefulSet's Worker on a lost node stays
Terminating (Running) until the node is back (tests/test_live_nodes_loss.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from msgen.reconcile import stuck_pods

NOW = datetime(2026, 11, 28, 15, 0, 0, tzinfo=timezone.utc)


def pod(name: str = "lost-worker-1", *, deleted: float | None = 31, phase: str = "Running", node: str = "msgen-node-2",
        evicted: bool = False) -> dict[str, Any]:
    """A pod whose deletion deadline passed `deleted` seconds before NOW."""
    metadata: dict[str, Any] = {"name": name, "namespace": "ns"}
    if deleted is not None:
        metadata["deletionTimestamp"] = (NOW - timedelta(seconds=deleted)).strftime("%Y-%m-%dT%H:%M:%SZ")
        metadata["deletionGracePeriodSeconds"] = 30
    conditions = [{"type": "Ready", "status": "False"}]
    if evicted:
        conditions.append({"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
                           "message": "Taint manager: deleting due to NoExecute taint"})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase, "conditions": conditions}}


def test_an_evicted_pod_past_its_grace_period_is_named_with_its_node_and_the_way_out() -> None:
    [line] = stuck_pods.stuck([pod(evicted=True)], NOW)
    assert line.startswith("pod lost-worker-1 on node msgen-node-2: evicted from its node, which has a NoExecute taint")
    assert "still terminating since 2026-11-28T14:59:29Z" in line and "its kubelet does not answer" in line
    assert "A StatefulSet, or a Job with a podFailurePolicy (restartPolicy ExitCode), starts no replacement" in line
    # A job that trained again elsewhere and succeeded waits too: its Job's end waits for the pod.
    assert "a Job whose success or failure is decided (SuccessCriteriaMet, FailureTarget) is not Complete" in line
    assert "nor is the JobSet or TrainJob that waits for that Job" in line
    assert "kubectl taint node msgen-node-2 node.kubernetes.io/out-of-service=nodeshutdown:NoExecute" in line
    assert "kubectl delete node msgen-node-2" in line and stuck_pods.DOCS in line


def test_a_deleted_pod_past_its_grace_period_without_eviction_is_named_too() -> None:
    [line] = stuck_pods.stuck([pod(deleted=600)], NOW)
    assert "on node msgen-node-2: deleted, still terminating" in line


@pytest.mark.parametrize("other", [
    pod(deleted=29),  # within the slack: its kubelet may still be ending it
    pod(deleted=-20),  # still in its grace period
    pod(deleted=None),  # not deleted
    pod(phase="Failed"), pod(phase="Succeeded"),  # ended: nothing waits for it
    pod(node=""),  # never bound: the API server deletes such a pod at once
], ids=["slack", "grace", "not-deleted", "failed", "succeeded", "unbound"])
def test_other_pods_are_not_named(other: dict[str, Any]) -> None:
    assert stuck_pods.stuck([other], NOW) == []


def test_the_line_stays_the_same_while_the_pod_stays() -> None:
    """--wait shows each reason once: the line must not change from one look to the next."""
    assert stuck_pods.stuck([pod()], NOW) == stuck_pods.stuck([pod()], NOW + timedelta(seconds=60))
