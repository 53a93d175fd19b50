"""The API server in process (tests/fake_api.py) with its simulated kubelet and Job
controller reacting (tests/fake_kubelet.py), and msgen's own client connected to it: where
the tests that run a controller's passes by hand start from, and what they read back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .fake_api import Cluster, Server, Write
from .fake_kubelet import react

JOB_NAME = "training.kubeflow.org/job-name"
VERDICTS = ("JobSucceeded", "JobFailed")


@contextmanager
def served(tmp_path: Path, namespace: str, cluster: Cluster | None = None) -> Iterator[tuple[Cluster, Any]]:
    """The cluster (a new one unless given), and a client of `namespace` through a
    kubeconfig in `tmp_path`."""
    from msgen.reconcile import kube

    cluster = cluster or Cluster()
    server = Server(cluster).start()
    try:
        config = tmp_path / "kubeconfig"
        config.write_text(json.dumps(server.kubeconfig(namespace)))
        react(cluster)
        yield cluster, kube.connect(str(config), None)
    finally:
        server.shutdown()


def job_objects(cluster: Cluster, namespace: str, job: str) -> list[dict[str, Any]]:
    """The job's pods, Services and Jobs as a replica's watches show them once they caught up."""
    selector = f"{JOB_NAME}={job}"
    return [o for collection in (("v1", "pods"), ("v1", "services"), ("batch/v1", "jobs"))
            for o in cluster.listing(collection, namespace, selector)[0]]


def verdict_events(cluster: Cluster) -> list[Write]:
    """The `JobSucceeded`/`JobFailed` Events the server accepted, in order."""
    return [w for w in cluster.writes if w.kind == "Event" and w.method == "POST" and w.result is not None
            and w.body["reason"] in VERDICTS]
