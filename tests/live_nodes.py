"""What the multi-node failure suites share: the cluster's real nodes, jobs spread over them,
a node lost and brought back (`tests/live/cluster node stop|start`), and a timeline of what
Kubernetes and msgen did after it.

The suites (`tests/test_live_nodes_*.py`, marker `live_nodes`) run when MSGEN_TEST_FAILURES=1
and MSGEN_TEST_KUBECONFIG names a cluster with at least three Ready nodes whose extra nodes
carry the harness's taint (`tests/live/cluster up --nodes 3`, as root: losing a node kills its
processes). Jobs are the live training suite's `lenet-cpu` (`live_cluster.prepare`), trained by
`tests/live/train.py`, made longer (`LIVE_STEPS` of `LIVE_STEP_SECONDS`) where something must
happen while they train.

Placement: every pod tolerates the extra nodes' taint; the Scheduler stays on node 1
(`msgen-node`, never lost: it runs the harness's shared pods), and the Workers repel each
other (one per node), so the job's traffic crosses nodes and a Worker's node can be lost while
a node is left for its replacement. Pods tolerate `node.kubernetes.io/unreachable` and
`not-ready` for TOLERATION seconds (`MSGEN_LIVE_TOLERATION`, default 30) instead of the API
server's default 300: a user's pods would wait 270 s longer before their eviction.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from .conftest import ROOT
from .live_cluster import KUBECONFIG, KUBECTL, Prepared, kubectl, prepare

CLUSTER = ROOT / "tests" / "live" / "cluster"
FIRST = "msgen-node"
EXTRA_TAINT = "msgen-harness/extra-node"
TOLERATION = int(os.environ.get("MSGEN_LIVE_TOLERATION", "30"))
JOB_LABEL = "training.kubeflow.org/job-name"
ROLE_LABEL = "training.kubeflow.org/replica-type"
MSGEN = [sys.executable, "-m", "msgen"]

marks = [
    pytest.mark.live_nodes,
    pytest.mark.skipif(os.environ.get("MSGEN_TEST_FAILURES") != "1",
                       reason="the multi-node failure suite runs with MSGEN_TEST_FAILURES=1 (on tests/live/cluster "
                              "up --nodes 3)"),
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster"),
    pytest.mark.skipif(not KUBECTL, reason="the live tests need kubectl on the PATH"),
]


def real_nodes() -> list[dict[str, Any]]:
    """The cluster's nodes that run pods (not kwok's)."""
    found = json.loads(kubectl("get", "nodes", "-o", "json").stdout)["items"]
    return [n for n in found if (n["metadata"].get("labels") or {}).get("type") != "kwok"]


def ready(node: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions") or [])


def require_nodes(count: int = 3) -> list[str]:
    """The names of `count` Ready nodes, node 1 first; skips, saying how, with fewer."""
    nodes = [n["metadata"]["name"] for n in real_nodes() if ready(n)]
    extra = [n for n in nodes if n != FIRST]
    if FIRST not in nodes or len(extra) < count - 1:
        pytest.skip(f"{count} Ready nodes are needed ({', '.join(nodes) or 'none'} here): tests/live/cluster up --nodes {count}")
    return [FIRST, *sorted(extra, key=lambda n: int(n.rsplit("-", 1)[1]))[: count - 1]]


def lenet(name: str, steps: int = 20, step_seconds: float = 0, env: dict[str, str] | None = None,
          restart: str | None = None) -> Prepared:
    job = prepare((ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text())
    job.job["metadata"]["name"] = name
    for key, spec in job.job["spec"]["msReplicaSpecs"].items():
        if restart and key.lower() == "worker":
            spec["restartPolicy"] = restart
        container = spec["template"]["spec"]["containers"][0]
        container["env"] = [*container.get("env", []), *({"name": k, "value": v} for k, v in {
            "LIVE_STEPS": str(steps), "LIVE_STEP_SECONDS": str(step_seconds), **(env or {})}.items())]
    spread(job)
    return job


def spread(job: Prepared, scheduler_node: str = FIRST, workers_apart: bool = True) -> None:
    """Every pod tolerates the extra nodes and leaves a lost node after TOLERATION seconds;
    the Scheduler (and PS) on `scheduler_node`; the Workers one per node (`workers_apart`)."""
    name = job.name
    for key, spec in job.job["spec"]["msReplicaSpecs"].items():
        pod = spec["template"]["spec"]
        pod["tolerations"] = [*pod.get("tolerations", []), {"key": EXTRA_TAINT, "operator": "Exists"},
                              *({"key": f"node.kubernetes.io/{what}", "operator": "Exists", "effect": "NoExecute",
                                 "tolerationSeconds": TOLERATION} for what in ("unreachable", "not-ready"))]
        if key.lower() == "worker" and workers_apart:
            pod["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {JOB_LABEL: name, ROLE_LABEL: "worker"}},
                "topologyKey": "kubernetes.io/hostname"}]}}
        elif key.lower() != "worker":
            pod["nodeSelector"] = {**pod.get("nodeSelector", {}), "kubernetes.io/hostname": scheduler_node}


def node_command(action: str, name: str) -> float:
    """`tests/live/cluster node stop|start NAME`; the seconds it took."""
    began = time.monotonic()
    done = subprocess.run([str(CLUSTER), "node", action, name], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"tests/live/cluster node {action} {name}: {done.stderr[-3000:]}"
    return time.monotonic() - began


@pytest.fixture
def lose() -> Iterator[Any]:
    """`lose(node)` loses a node now; every node lost is brought back when the test ends."""
    lost: list[str] = []

    def lose_node(name: str) -> float:
        assert name != FIRST, "node 1 runs every other suite's pods"
        lost.append(name)
        return node_command("stop", name)

    yield lose_node
    for name in lost:
        node_command("start", name)
        # a node back from the dead is in service again (an admin's step, when it was tainted so)
        kubectl("taint", "node", name, "node.kubernetes.io/out-of-service-", check=False)


def pods_of(namespace: str, job: str) -> list[dict[str, Any]]:
    return list(json.loads(kubectl("get", "pods", "-n", namespace, "-l", f"{JOB_LABEL}={job}", "-o", "json")
                           .stdout)["items"])


def role(pod: dict[str, Any]) -> str:
    return str((pod["metadata"].get("labels") or {}).get(ROLE_LABEL, ""))


def steps_seen(namespace: str, pod: str) -> int:
    """How many `step` lines the pod's main container printed (its current run)."""
    try:  # a lost node's kubelet does not answer: no steps seen
        log = kubectl("logs", "-n", namespace, pod, "-c", main_container(namespace, pod), "--request-timeout=10s",
                      check=False, timeout=20).stdout
    except subprocess.TimeoutExpired:
        return 0
    return sum('"event": "step"' in line for line in log.splitlines())


def main_container(namespace: str, pod: str) -> str:
    found = json.loads(kubectl("get", "pod", pod, "-n", namespace, "-o", "json").stdout)
    names = [c["name"] for c in found["spec"]["containers"]]
    return "node" if "node" in names else "mindspore"


def training_workers(namespace: str, job: str, steps: int = 3) -> list[dict[str, Any]]:
    """The Worker pods, once each runs and has printed `steps` training steps."""
    workers = [p for p in pods_of(namespace, job) if role(p) == "worker" and p["status"].get("phase") == "Running"
               and not p["metadata"].get("deletionTimestamp")]
    if len(workers) < 2 or any(steps_seen(namespace, p["metadata"]["name"]) < steps for p in workers):
        return []
    return workers


def msgen_phase(namespace: str, job: str, target: str) -> str:
    """The phase `msgen status` reports, and its reason: `Failed (BackoffLimitExceeded)`."""
    done = subprocess.run([*MSGEN, "status", job, "-n", namespace, "-t", target, "-o", "json"], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "KUBECONFIG": str(KUBECONFIG)}, timeout=120)
    if done.returncode != 0:
        return f"error: {done.stderr.strip()[-200:]}"
    conditions = json.loads(done.stdout).get(job, {}).get("conditions") or []
    if not conditions:
        return "Created"
    last = conditions[-1]
    return f"{last['type']} ({last.get('reason', '')})"


def timestamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Timeline:
    """What happened after `t0`, polled every 2 s: the lost node's Ready condition and taints,
    each pod of the job (created, bound where, running, terminating, gone), and msgen's
    phase. `events` lists (seconds after t0, what) in order, each fact once."""

    def __init__(self, namespace: str, job: str, target: str, node: str | None, status: bool = True):
        self.namespace, self.job, self.target, self.node, self.status = namespace, job, target, node, status
        self.t0 = time.time()
        self.events: list[tuple[float, str]] = []
        self._seen: set[str] = set()
        self._pods: dict[str, str] = {}
        self._placed: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def note(self, what: str, at: float | None = None) -> None:
        if what not in self._seen:
            self._seen.add(what)
            self.events.append((round((at if at is not None else time.time()) - self.t0, 1), what))

    def first(self, prefix: str) -> float | None:
        return next((t for t, what in self.events if what.startswith(prefix)), None)

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                self._look()
            except (AssertionError, ValueError, KeyError, subprocess.SubprocessError):
                pass
            self._stop.wait(2)

    def _at(self, text: Any) -> float | None:
        """An API time (to the second), if there is one and it is after t0."""
        if not isinstance(text, str) or not text:
            return None
        at = timestamp(text)
        return at if at >= self.t0 - 1 else None

    def _look(self) -> None:
        if self.node:
            self._look_at_node(self.node)
        current = {}
        for pod in pods_of(self.namespace, self.job):
            current[pod["metadata"]["uid"]] = pod["metadata"]["name"]
            self._look_at_pod(pod)
        for uid, name in self._pods.items():
            if uid not in current:
                self.note(f"pod {name} ({uid[:8]}) gone")
        self._pods = current
        if self.status:
            self.note(f"msgen status: {msgen_phase(self.namespace, self.job, self.target)}")

    def _look_at_node(self, name: str) -> None:
        node = json.loads(kubectl("get", "node", name, "-o", "json").stdout)
        for c in node["status"].get("conditions") or []:
            if c["type"] == "Ready":
                self.note(f"node Ready={c['status']}", self._at(c.get("lastTransitionTime")))
        for taint in node["spec"].get("taints") or []:
            self.note(f"node tainted {taint['key']}:{taint['effect']}", self._at(taint.get("timeAdded")))

    def _look_at_pod(self, pod: dict[str, Any]) -> None:
        metadata, status = pod["metadata"], pod["status"]
        name, uid = metadata["name"], metadata["uid"]
        where = pod["spec"].get("nodeName", "")
        if uid not in self._pods and self._at(metadata["creationTimestamp"]):
            self.note(f"pod {name} ({uid[:8]}) created", self._at(metadata["creationTimestamp"]))
        if where:
            self.note(f"pod {name} ({uid[:8]}) on {where}")
            self._placed[name] = where
        self.note(f"pod {name} ({uid[:8]}) {status.get('phase')}")
        for container in status.get("containerStatuses") or []:
            state, last = container.get("state") or {}, container.get("lastState") or {}
            for ended in (last.get("terminated") or {}, state.get("terminated") or {}):
                if ended:
                    self.note(f"pod {name} ({uid[:8]}) container {container['name']} exit {ended.get('exitCode')} "
                              f"({ended.get('reason', '')})", self._at(ended.get("finishedAt")))
            if "running" in state:
                self.note(f"pod {name} ({uid[:8]}) container {container['name']} runs "
                          f"(restarts {container.get('restartCount', 0)})", self._at(state["running"].get("startedAt")))
        if metadata.get("deletionTimestamp"):
            asked = timestamp(metadata["deletionTimestamp"]) - float(metadata.get("deletionGracePeriodSeconds") or 0)
            self.note(f"pod {name} ({uid[:8]}) terminating", asked if asked >= self.t0 - 1 else None)
        for c in status.get("conditions") or []:
            if c["type"] == "DisruptionTarget" and c["status"] == "True":
                self.note(f"pod {name} ({uid[:8]}) DisruptionTarget {c.get('reason', '')}",
                          self._at(c.get("lastTransitionTime")))

    def placements(self) -> dict[str, str]:
        """Each pod name seen, and the node it was last seen bound to."""
        return dict(self._placed)

    def stop(self) -> list[tuple[float, str]]:
        self._stop.set()
        self._thread.join(timeout=60)
        self.events.sort(key=lambda event: event[0])
        return self.events

    def summary(self) -> str:
        return "\n".join(f"  +{t:6.1f}s {what}" for t, what in self.events)
