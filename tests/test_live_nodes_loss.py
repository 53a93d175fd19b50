"""A node is lost while a job trains on it: on every target, the job must not hang. It trains
again on the other nodes or ends Failed within BOUND seconds of the loss, and `msgen status`
says so; a target that cannot recover by itself (a StatefulSet, whose pod on a lost node stays
Terminating) is told what to do by `msgen status`.

The node is lost with `tests/live/cluster node stop` (its kubelet, containerd and every
container killed, no clean shutdown, its network cut) while both Workers train (a Worker on an
extra node, the Scheduler on node 1), and brought back when the test ends. A timeline of what
Kubernetes and msgen did is printed (`pytest -s`) and appended to MSGEN_LIVE_REPORT.

Opt-in (MSGEN_TEST_FAILURES=1, marker `live_nodes`) on `tests/live/cluster up --nodes 3`;
see tests/live_nodes.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import live_addons, live_cluster, live_nodes
from .conftest import ROOT
from .live_cluster import KUBECONFIG, PodLogs
from .live_nodes import FIRST, MSGEN, Timeline, lose

pytestmark = live_nodes.marks
__all__ = ["lose"]

#: Seconds after the loss within which the job must have trained again or ended.
BOUND = int(os.environ.get("MSGEN_LIVE_LOSS_BOUND", "600"))
TARGETS = ["indexed-job", "pod", "statefulset", "jobset", "volcano", "trainjob"]
NEEDS = {"jobset": ("jobset",), "volcano": ("volcano",), "trainjob": ("jobset", "trainer")}


@pytest.fixture
def namespace() -> Any:
    name = f"msgen-nodes-{uuid.uuid4().hex[:8]}"
    live_cluster.kubectl("create", "namespace", name)
    live_cluster.create_script_config_map(name)
    yield name
    live_cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


def start(namespace: str, job: live_cluster.Prepared, tmp_path: Path, target: str, wait: bool) -> subprocess.Popen[str]:
    path = tmp_path / f"{job.name}.yaml"
    path.write_text(yaml.safe_dump(job.job))
    argv = [*MSGEN, "apply", str(path), "-n", namespace, "--target", target, "--kube-version",
            live_cluster.server_version()]
    if wait:
        argv += ["--wait", "--timeout", f"{BOUND + 600}s"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "KUBECONFIG": str(KUBECONFIG)})


#: The Workers' restart policy and the job's `runPolicy.backoffLimit`: the sample as written
#: (the Scheduler `Never`, no limit), and with retries (each role's Job, the JobSet, the Volcano
#: Job may then start pods again).
POLICIES = {"as written": ("OnFailure", None), "backoffLimit 3": ("OnFailure", 3),
            "ExitCode, backoffLimit 3": ("ExitCode", 3)}
#: What each target cannot express (docs/targets.md): the same run as another, not repeated.
NOT_EXPRESSED = {("pod", "backoffLimit 3"): "backoffLimit", ("pod", "ExitCode, backoffLimit 3"): "ExitCode",
                 ("statefulset", "backoffLimit 3"): "backoffLimit", ("statefulset", "ExitCode, backoffLimit 3"): "ExitCode",
                 ("volcano", "ExitCode, backoffLimit 3"): "ExitCode"}


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("target", TARGETS)
def test_a_workers_node_is_lost_while_the_job_trains(target: str, policy: str, namespace: str, tmp_path: Path,
                                                    lose: Any) -> None:
    live_nodes.require_nodes(3)
    live_addons.require(*NEEDS.get(target, ()))
    if (target, policy) in NOT_EXPRESSED:
        pytest.skip(f"{target} does not express {NOT_EXPRESSED[target, policy]} (docs/targets.md)")
    restart, backoff = POLICIES[policy]
    job = live_nodes.lenet("lost", steps=STEPS, step_seconds=1, restart=restart)
    if backoff is not None:
        job.job["spec"]["runPolicy"] = {**(job.job["spec"].get("runPolicy") or {}), "backoffLimit": backoff}
    logs = PodLogs(namespace)
    applying = start(namespace, job, tmp_path, target, wait=target != "statefulset")
    try:
        workers = live_addons.wait_until("both Workers train", lambda: live_nodes.training_workers(namespace, job.name),
                                         600)
        victim = next(w for w in workers if w["spec"]["nodeName"] != FIRST)
        node = victim["spec"]["nodeName"]
        before = {w["metadata"]["uid"] for w in workers}
        timeline = Timeline(namespace, job.name, target, node)
        timeline.note(f"losing {node}, where {victim['metadata']['name']} trains")
        lose(node)
        timeline.note(f"{node} lost")
        ended = _follow(applying, target, timeline, node, namespace, job.name, before)
    finally:
        logs.stop(grace=5)
        if applying.poll() is None:
            applying.kill()
            applying.communicate()
    events = timeline.stop()
    tails = {key.split("#")[0]: [line for line in lines if re.search(r"\[(ERROR|EXCEPTION)\]|Error:", line)][-3:]
             + lines[-2:] for key, lines in logs.logs.items() if lines}
    print(f"\n{target} {policy}: {ended}\n{timeline.summary()}")
    for pod, lines in sorted(tails.items()):
        print(f"  last lines of {pod}:\n" + "\n".join(f"    | {line[:300]}" for line in lines))
    live_cluster.report({"suite": "node-loss", "target": target, "policy": policy, "outcome": ended,
                         "events": events, "tails": tails})
    assert not ended.startswith("hung"), f"the job hung after its node was lost:\n{timeline.summary()}"


#: Steps of one second the job trains: long enough to be lost in the middle, short enough to
#: train again from the start after it.
STEPS = 90
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"


def _follow(applying: subprocess.Popen[str], target: str, timeline: Timeline, node: str, namespace: str, job: str,
            before: set[str]) -> str:
    """Until the job ends or BOUND passes: when it trains again (both Workers step, one of them
    a new pod or container), and its verdict; when `msgen status` names a pod the lost node
    holds, do what it says (taint the node out-of-service) and go on."""
    began = time.monotonic()
    tainted = again = False
    while time.monotonic() - began < BOUND:
        if applying.poll() is not None:
            out, err = applying.communicate()
            verdict = next((line for line in out.splitlines() if ": Succeeded after" in line
                            or ": Failed after" in line), err.strip()[-300:] if target != "statefulset" else "")
            if target != "statefulset":
                timeline.note(f"msgen apply --wait: {verdict}")
                return f"{verdict.split(':')[1].split()[0] if ':' in verdict else 'error'} " \
                       f"{time.time() - timeline.t0:.0f} s after the loss: {verdict}"
        training = _trains_again(namespace, job, before)
        if not again and training:
            timeline.note("both Workers train again")
            again = True
            if target == "statefulset":
                return f"trains again {time.time() - timeline.t0:.0f} s after the loss"
        shown = _status(namespace, job, target)
        stuck = [line for line in shown if line.startswith("  stuck: ")]
        if stuck:
            timeline.note("msgen status: " + stuck[0].strip())
        # A job that trains needs nothing done; one that trained again and ended may still wait
        # for the lost pod (its Job's end, and the JobSet's, wait for its terminating pods).
        if stuck and not tainted and not training:
            live_cluster.kubectl("taint", "node", node, f"{OUT_OF_SERVICE}=nodeshutdown:NoExecute", check=False)
            timeline.note(f"tainted {node} {OUT_OF_SERVICE} (what msgen status says)")
            tainted = True
        time.sleep(3)
    timeline.note("msgen status at the bound: " + " | ".join(_status(namespace, job, target)))
    return f"hung: no verdict {BOUND} s after the loss"


def _trains_again(namespace: str, job: str, before: set[str]) -> bool:
    workers = live_nodes.training_workers(namespace, job, steps=3)
    return bool(workers) and {w["metadata"]["uid"] for w in workers} != before or any(
        int(s.get("restartCount") or 0) > 0 for w in workers for s in w["status"].get("containerStatuses") or [])


def _status(namespace: str, job: str, target: str) -> list[str]:
    shown = subprocess.run([*MSGEN, "status", job, "-n", namespace, "-t", target], capture_output=True, text=True,
                           cwd=ROOT, env={**os.environ, "KUBECONFIG": str(KUBECONFIG)}, timeout=120)
    return (shown.stdout or shown.stderr).splitlines()
