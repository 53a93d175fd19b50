"""`msgen status` and `msgen controller` against an API server in process (tests/fake_api.py):
the requests they make for many jobs, and the controller's actions, each done once, through
an API server restart, counted on /metrics as the server saw them."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest

from msgen.reconcile import snapshot
from msgen.reconcile.kube import LIST_PAGE
from msgen.reconcile.watch import WORKLOADS

from .conftest import ROOT, msgen
from .fake_api import Cluster, Server
from .fake_kubelet import end, msjob, place, react, rendered, start

#: Spread over the Pythons CI runs: its time is many passes over an API server in process; the reconcile logic's own tests run on every Python (tests/python_share.py).
pytestmark = pytest.mark.spread

pytest.importorskip("lightkube")
pytest.importorskip("prometheus_client")


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Path]]:
    cluster = Cluster()
    server = Server(cluster).start()
    config = tmp_path / "kubeconfig"
    config.write_text(json.dumps(server.kubeconfig("big")))
    yield cluster, config
    server.shutdown()


def copies(template: list[dict[str, Any]], name: str, count: int) -> Iterator[list[dict[str, Any]]]:
    text = json.dumps(template)
    for n in range(count):
        yield json.loads(text.replace(name, f"job{n:04d}"))


def test_status_of_a_thousand_jobs_is_a_few_lists(api: tuple[Cluster, Path]) -> None:
    cluster, config = api
    template = rendered(msjob("tpljob", 2), "big", "pod")
    for objects in copies(template, "tpljob", 1000):
        place(cluster, objects)
    start(cluster, "big", "job0007-worker-1")
    names = [f"job{n:04d}" for n in range(1000)]
    shown = msgen("status", *names, "-n", "big", "-o", "json", "--kubeconfig", str(config))
    assert shown.exit_code == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert sorted(found) == names
    assert found["job0007"]["phase"] == "Running" and found["job0008"]["phase"] == "Created"
    # One list per workload kind (the custom resources answer 404), one of the Jobs a JobSet
    # made, the 3,000 pods and the 2,000 Services (where a job's end may be kept) in pages of
    # kube.LIST_PAGE: none per job.
    pages = -(-3000 // LIST_PAGE) + -(-2000 // LIST_PAGE)
    assert cluster.requests == Counter({("GET", "list"): len(WORKLOADS) + pages}), cluster.requests


def test_a_few_jobs_are_named_in_the_selector_many_by_the_label() -> None:
    label = "training.kubeflow.org/job-name"
    assert snapshot.selector(["b", "a", "b"]) == {label: ["a", "b"]}
    assert snapshot.selector([f"j{n}" for n in range(snapshot.NAMED_AT_MOST + 1)]) == {label: None}
    from msgen.reconcile.kube import selector_text

    assert selector_text({label: ["a", "b"]}) == f"{label} in (a,b)"
    jobset = "jobset.sigs.k8s.io/jobset-name"
    assert selector_text(snapshot.selector(["a"], jobset)) == f"{jobset} in (a),!{label}"


def test_status_of_a_job_whose_workloads_are_gone_reads_its_service(api: tuple[Cluster, Path]) -> None:
    cluster, config = api
    for obj in rendered(msjob("gone", 1), "big", "pod"):
        if obj["kind"] == "Service":
            obj["metadata"].setdefault("annotations", {})["msgen/status"] = json.dumps(
                {"phase": "Succeeded", "conditions": [{"type": "Succeeded", "reason": "JobSucceeded"}]})
            cluster.put(obj)
    shown = msgen("status", "gone", "-n", "big", "--kubeconfig", str(config))
    assert shown.exit_code == 0, shown.stderr
    assert "gone: Succeeded (published by msgen controller" in shown.stdout
    # the workload kinds and a JobSet's Jobs, then the Services
    assert cluster.requests[("GET", "list")] == len(WORKLOADS) + 2


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(what: str, check: Callable[[], Any], timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def scrape(port: int) -> dict[str, Any]:
    from msgen.reconcile.metrics import families

    return families(urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode())


def total(found: dict[str, Any], family: str, **labels: str) -> float:
    return float(sum(s.value for s in found[family].samples
                     if s.name == family + "_total" and all(s.labels.get(k) == v for k, v in labels.items())))


def test_the_controller_acts_once_per_action_through_a_restart_and_counts_it(
        api: tuple[Cluster, Path], tmp_path: Path) -> None:
    cluster, config = api
    react(cluster)
    pods = {"bare": place(cluster, rendered(msjob("bare", 3, ttl=2), "big", "pod")),
            "indexed": place(cluster, rendered(msjob("indexed", 2), "big", "indexed-job"))}
    port, health = free_port(), free_port()
    while health == port:
        health = free_port()
    log = tmp_path / "controller.log"
    with log.open("w") as out:
        controller = subprocess.Popen(
            [sys.executable, "-m", "msgen", "controller", "--no-leader-elect", "--interval", "3",
             "--metrics-port", str(port), "--health-port", str(health), "--kubeconfig", str(config)],
            stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        wait_for("/readyz", lambda: _ready(health))
        for each in pods.values():
            for pod in each:
                start(cluster, "big", pod["metadata"]["name"])
        wait_for("both jobs running", lambda: "big/indexed: Running" in log.read_text()
                 and "big/bare: Running" in log.read_text())
        lists = total(scrape(port), "msgen_watch_lists", resource="pods")
        cluster.restart(1.0)  # every watch drops, and must list again
        wait_for("the pods listed again after the restart",
                 lambda: total(scrape(port), "msgen_watch_lists", resource="pods") > lists)
        end(cluster, "big", "bare-worker-0", 0)  # success by worker 0: the others are cleaned up
        indexed_worker = next(p["metadata"]["name"] for p in pods["indexed"] if "worker-1" in p["metadata"]["name"])
        end(cluster, "big", indexed_worker, 1)  # the Worker Job fails: the Scheduler Job is suspended
        wait_for("the TTL to delete the bare job", lambda: not cluster.listing(("v1", "pods"), "big",
                 "training.kubeflow.org/job-name=bare")[0], timeout=30)
        wait_for("the Scheduler Job suspended", lambda: (cluster.get("batch/v1", "jobs", "big", "indexed-scheduler")
                                                         or {}).get("spec", {}).get("suspend"))
        # Two more reconciles (a resync every 3 s) after the last action: nothing is done again.
        reconciled = total(scrape(port), "controller_runtime_reconcile")
        wait_for("two more reconciles",
                 lambda: total(scrape(port), "controller_runtime_reconcile") >= reconciled + 2)
        found = scrape(port)
    finally:
        controller.send_signal(signal.SIGTERM)
        controller.wait(timeout=30)
    deletes = [(w.kind, w.name) for w in cluster.writes if w.method == "DELETE"]
    suspends = [w.name for w in cluster.writes if w.method == "PATCH" and (w.body.get("spec") or {}).get("suspend")]
    events = Counter((w.body["involvedObject"]["name"], w.body["reason"]) for w in cluster.writes if w.kind == "Event")
    # cleanPodPolicy Running deleted the running pods, the TTL the rest and the Services; none twice.
    assert sorted(deletes) == [("Pod", "bare-scheduler-0"), ("Pod", "bare-worker-0"), ("Pod", "bare-worker-1"),
                               ("Pod", "bare-worker-2"), ("Service", "bare"), ("Service", "bare-scheduler-0")]
    assert suspends == ["indexed-scheduler"]
    assert max(events.values()) == 1, events
    assert events[("indexed-worker", "JobFailed")] == 1 and events[("bare-worker-0", "JobSucceeded")] == 1
    # What the server saw, the controller counted.
    assert total(found, "msgen_policy_actions", action="delete", result="success") == len(deletes)
    assert total(found, "msgen_policy_actions", policy="cleanPodPolicy", action="suspend") == 1
    assert total(found, "msgen_policy_actions", policy="verdict") == 2
    assert total(found, "msgen_watch_restarts", resource="pods") >= 1
    assert total(found, "msgen_watch_lists", resource="pods") >= 2  # listed again after the restart
    assert total(found, "rest_client_requests", method="DELETE") == len(deletes)
    assert total(found, "controller_runtime_reconcile", result="error") == 0
    output = log.read_text()
    assert "Traceback" not in output and "skipped" not in output, output


def _ready(port: int) -> bool:
    try:
        return bool(urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2).status == 200)
    except OSError:
        return False
