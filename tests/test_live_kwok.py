"""The harness's kwok nodes (`tests/live/cluster up --with kwok`), as bench/controller_scale.py
needs them: tainted, so that only pods that ask for them land there and the real node's pods
never do; room for a thousand jobs' pods; and a benchmark's Job pods left running until the
benchmark ends them (kwok's own stages would end them seconds after they start)."""

from __future__ import annotations

import importlib
import json
import sys
import time
from typing import Any

import pytest

from msgen.model.quantity import parse

from .conftest import ROOT
from .live import kubectl, needs_cluster, wait_for
from .live import namespace as namespace  # noqa: F401 - the fixture

pytestmark = needs_cluster


def kwok_nodes() -> list[dict[str, Any]]:
    found = json.loads(kubectl("get", "nodes", "-l", "type=kwok", "-o", "json").stdout)["items"]
    if not found:
        pytest.skip("no kwok nodes on the cluster: tests/live/cluster up --with kwok")
    return list(found)


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "example.invalid/none:1"}], **spec}}


def test_kwok_nodes_are_tainted_and_hold_a_thousand_jobs_pods() -> None:
    sys.path.insert(0, str(ROOT / "tests" / "live"))
    kwok = importlib.import_module("harness.components.kwok")
    for node in kwok_nodes():
        assert kwok.TAINT in (node["spec"].get("taints") or []), node["metadata"]["name"]
        assert parse(node["status"]["allocatable"]["pods"])[0] >= kwok.PODS_PER_NODE  # "1k"


def test_only_pods_that_tolerate_the_taint_land_on_kwok_nodes_and_the_benchmarks_stay_running(
        namespace: str) -> None:  # noqa: F811 - the fixture
    sys.path.insert(0, str(ROOT / "bench"))
    from kwok_driver import on_kwok

    kwok_nodes()
    # Asking for a kwok node without tolerating its taint: never scheduled there.
    refused = pod("refused", nodeSelector={"type": "kwok"})
    job = on_kwok({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "bench"},
                   "spec": {"completions": 2, "parallelism": 2, "template": {
                       "metadata": {}, "spec": {**pod("x")["spec"], "restartPolicy": "Never"}}}})
    kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                   "items": [refused, job]}))

    def running() -> list[dict[str, Any]]:
        pods = json.loads(kubectl("get", "pods", "-n", namespace, "-l", "job-name=bench", "-o", "json").stdout)["items"]
        return pods if len(pods) == 2 and all(p["status"].get("phase") == "Running" for p in pods) else []

    started = wait_for("the benchmark Job's pods running on kwok nodes", running, timeout=120)
    assert all(p["spec"]["nodeName"].startswith("kwok-node-") for p in started)
    time.sleep(12)  # kwok's pod-complete stage ends a Job's pods 1-6 s after they are ready
    assert [p["status"]["phase"] for p in running()] == ["Running", "Running"]
    left = json.loads(kubectl("get", "pod", "refused", "-n", namespace, "-o", "json").stdout)
    assert left["status"].get("phase") == "Pending" and not left["spec"].get("nodeName")
    reasons = [c.get("message", "") for c in left["status"].get("conditions") or [] if c.get("type") == "PodScheduled"]
    assert any("untolerated taint" in r for r in reasons), reasons


def test_kwok_plays_as_many_pod_stages_at_once_as_the_harness_says() -> None:
    """The kwok running is the harness's (its configuration, POD_PARALLELISM pod stages at
    once), not the release's 4, which left a thousand jobs' pods waiting minutes to run."""
    import os
    from pathlib import Path

    sys.path.insert(0, str(ROOT / "tests" / "live"))
    kwok = importlib.import_module("harness.components.kwok")
    releases = importlib.import_module("harness.releases")
    kwok_nodes()
    home = Path(os.environ.get("MSGEN_HARNESS_HOME") or releases.DEFAULT_HOME)
    try:
        pid = (home / "run" / "kwok.pid").read_text().strip()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError as exc:
        pytest.skip(f"kwok is not the harness's process here ({exc}): run on the harness's machine")
    config = next((a.split("=", 1)[1] for a in argv if a.startswith("--config=")), None)
    assert config is not None, argv
    assert f"\n  podPlayStageParallelism: {kwok.POD_PARALLELISM}\n" in Path(config).read_text(), config
