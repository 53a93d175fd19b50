"""A Worker fails in the middle of training, on every target, under the run policies msgen
renders: OOM-killed (exit 137, a memory limit reached) with the target's retrying policy, and
exiting 3 under `Never` (with `backoffLimit`, `cleanPodPolicy` and `ttlSecondsAfterFinished`)
and under `OnFailure` (with `backoffLimit`). What each policy does with it, how long the job
takes to end, and what `msgen apply --wait` and `msgen status` say are printed (`pytest -s`),
appended to MSGEN_LIVE_REPORT and checked against docs/failures.md's table.

Opt-in (MSGEN_TEST_FAILURES=1, marker `live_nodes`) on `tests/live/cluster up --nodes 3`;
see tests/live_nodes.py.
"""

from __future__ import annotations

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
from .live_cluster import KUBECONFIG, PodLogs
from .live_nodes import MSGEN, Timeline

pytestmark = live_nodes.marks

TARGETS = ["indexed-job", "pod", "statefulset", "jobset", "volcano", "trainjob"]
NEEDS = {"jobset": ("jobset",), "volcano": ("volcano",), "trainjob": ("jobset", "trainer")}
#: The retrying policy each target runs: ExitCode where a Job's podFailurePolicy expresses it.
RETRYING = {"indexed-job": "ExitCode", "jobset": "ExitCode", "trainjob": "ExitCode", "pod": "OnFailure",
            "statefulset": "Always", "volcano": "OnFailure"}
#: The Worker's memory limit: MindSpore's CPU worker uses about 0.5 GiB here.
MEMORY = "1536Mi"
CASES: dict[str, tuple[dict[str, str], str | None, dict[str, Any]]] = {
    "oom, retrying policy": ({"LIVE_FAIL_EXIT": "oom"}, None, {}),
    "exit 3, Never, backoffLimit 1, ttl 20 s": ({"LIVE_FAIL_EXIT": "3"}, "Never",
                                                {"backoffLimit": 1, "ttlSecondsAfterFinished": 20}),
    "exit 3, OnFailure, backoffLimit 2, cleanPodPolicy All": ({"LIVE_FAIL_EXIT": "3"}, "OnFailure",
                                                              {"backoffLimit": 2, "cleanPodPolicy": "All"}),
}


@pytest.fixture
def namespace() -> Any:
    name = f"msgen-nodes-{uuid.uuid4().hex[:8]}"
    live_cluster.kubectl("create", "namespace", name)
    live_cluster.create_script_config_map(name)
    yield name
    live_cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("target", TARGETS)
def test_a_worker_fails_mid_training(target: str, case: str, namespace: str, tmp_path: Path) -> None:
    live_nodes.require_nodes(3)
    live_addons.require(*NEEDS.get(target, ()))
    env, restart, run_policy = CASES[case]
    restart = restart or RETRYING[target]
    if target == "statefulset" and restart == "Never":
        pytest.skip("a StatefulSet's pods always restart: restartPolicy Never is reported, not expressed")
    job = live_nodes.lenet("fails", steps=60, step_seconds=1, restart=restart,
                           env={**env, "LIVE_FAIL_NODE": "1", "LIVE_FAIL_AT_STEP": "10"})
    job.job["spec"]["runPolicy"] = {**(job.job["spec"].get("runPolicy") or {}), **run_policy}
    for spec in job.job["spec"]["msReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0].setdefault("resources", {})["limits"] = {"memory": MEMORY}
    path = tmp_path / "fails.yaml"
    path.write_text(yaml.safe_dump(job.job))
    timeline = Timeline(namespace, job.name, target, None)
    logs = PodLogs(namespace)
    wait = target != "statefulset"
    argv = [*MSGEN, "apply", str(path), "-n", namespace, "--target", target, "--kube-version",
            live_cluster.server_version(), *(["--wait", "--timeout", "600s"] if wait else [])]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "KUBECONFIG": str(KUBECONFIG)},
                          timeout=900)
    ended = time.time() - timeline.t0
    if not wait:
        time.sleep(150)  # the StatefulSet restarts its pods: what it did in 2.5 minutes
    logs.stop(grace=5)
    failed_at = next((t for t, what in timeline.events if "Failed" in what or "terminating" in what), None)
    time.sleep(30 if "ttl" in case else 5)  # what the TTL (20 s) left
    after = _status(namespace, job.name, target)
    timeline.note("msgen status: " + " | ".join(after))
    events = timeline.stop()
    failures = [e for e in _events(logs) if e["event"] == "fail"]
    verdict = next((line for line in done.stdout.splitlines() if ": Succeeded after" in line or ": Failed after" in line),
                   "")
    print(f"\n{target} {case} (Worker {restart}): exit {done.returncode}: {verdict}\n{timeline.summary()}")
    live_cluster.report({"suite": "worker-failure", "target": target, "case": case, "restart": restart,
                         "exit": done.returncode, "verdict": verdict, "failed_at": failed_at, "events": events,
                         "stdout": done.stdout[-4000:]})
    assert failures, "worker 1 failed as asked"
    if wait:
        assert done.returncode in (0, 1) and verdict, f"--wait reached a verdict:\n{done.stdout}\n{done.stderr}"
        phase = verdict.split()[1]
        # Pods a controller was creating as the job ended are not a new run; one created later is.
        again = [what for at, what in events if what.endswith(" created") and at > ended + AFTER_THE_END]
        assert not again, f"the job ran again after its end ({ended:.0f} s):\n{timeline.summary()}"
        if "ttl" in case and target in GONE_AFTER_TTL:
            assert after and "no workload of job 'fails'" in after[0], f"the TTL deleted the job: {after}"
        else:
            assert after and after[0].startswith(f"fails: {phase}"), f"msgen status still says {phase}: {after}"


#: Seconds after `--wait` saw the end from which a pod created for the job is a new run (the
#: Job controller may still replace a pod as the JobSet that ends it deletes its Jobs).
AFTER_THE_END = 15

#: Where `ttlSecondsAfterFinished` deletes the whole finished job, with nothing but Kubernetes and
#: the target's controller running (docs/targets.md): the JobSet's own TTL, the Volcano Job's.
#: `msgen status` then finds no job. Elsewhere something keeps its end: the TrainJob outlives
#: its JobSet, a Job that `cleanPodPolicy` suspended (`indexed-job`) and a bare-Pod job's pods
#: are deleted by `msgen controller` alone.
GONE_AFTER_TTL = {"jobset", "volcano"}


def _status(namespace: str, job: str, target: str) -> list[str]:
    shown = subprocess.run([*MSGEN, "status", job, "-n", namespace, "-t", target], capture_output=True, text=True,
                           cwd=ROOT, env={**os.environ, "KUBECONFIG": str(KUBECONFIG)}, timeout=120)
    return (shown.stdout or shown.stderr).splitlines()


def _events(logs: PodLogs) -> list[dict[str, Any]]:
    return [e for lines in logs.logs.values() for line in lines for e in live_cluster.events_in(line)]
