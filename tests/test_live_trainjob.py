"""Real training through Kubeflow Trainer: the live training suite's jobs on `--target trainjob`.

Each MSJob of `test_live_training.JOBS` is applied as a TrainJob and its TrainingRuntime with
`msgen apply --wait`, in both `--scheduler-address` modes; Trainer's controller builds the
JobSet, and the checks are the live training suite's: the cluster forms (every worker process
joins once with a distinct rank), the AllReduce sums are right, every worker ends with the same
parameters, and `--wait` says Succeeded, here from the TrainJob's `Complete` condition. One run
goes through Kueue: the TrainJob waits in a LocalQueue this test makes, and is admitted.

Runs with the live training suite (marker `live_training`, MSGEN_TEST_TRAINING=1) when
MSGEN_TEST_KUBECONFIG names a cluster that also runs JobSet and Kubeflow Trainer (their CRDs,
and controllers that have run: the harness's `cluster up --with jobset,trainer`); otherwise it
skips, saying which is missing. The Kueue run also needs Kueue with its TrainJob integration;
without Kueue's CRDs it skips.
MSGEN_LIVE_REPORT=FILE appends one JSON line per run (job, target, mode, outcome, seconds).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen.targets.labels import JOB_NAME, MANAGED_BY

from . import live_addons
from .live_cluster import KUBECONFIG, KUBECTL, kubectl, prepare, run_job
from .test_live_training import JOBS, MODES, TIMEOUT, assert_trained, namespace, record, source

__all__ = ["namespace"]  # the fixture, shared with the live training suite

pytestmark = [
    pytest.mark.live_training,
    pytest.mark.skipif(os.environ.get("MSGEN_TEST_TRAINING") != "1",
                       reason="the training suite (about an hour) runs with MSGEN_TEST_TRAINING=1"),
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to train on"),
    pytest.mark.skipif(not KUBECTL, reason="the live training tests need kubectl on the PATH"),
]

TARGET = "trainjob"
#: Trainer's CRDs, and JobSet's, which its controller builds on.
CRDS = ("trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org", "jobsets.jobset.x-k8s.io")
KUEUE_CRDS = ("localqueues.kueue.x-k8s.io", "clusterqueues.kueue.x-k8s.io", "workloads.kueue.x-k8s.io")


def missing_crds(names: tuple[str, ...]) -> list[str]:
    found = kubectl("get", "crd", *names, "-o", "name", check=False).stdout.split()
    return [n for n in names if f"customresourcedefinition.apiextensions.k8s.io/{n}" not in found]


@pytest.fixture(scope="module")
def trainer() -> None:
    """Skip, saying why, unless Trainer's and JobSet's CRDs are installed and Trainer's
    controller has run: it filled its webhook certificate Secret, which it does wherever it runs
    (the release's Deployment, or the harness's host process, which has no Deployment)."""
    absent = missing_crds(CRDS)
    if absent:
        pytest.skip(f"Kubeflow Trainer is not on the cluster: no CRD {', '.join(absent)}")
    live_addons.require("jobset", "trainer")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where,path", JOBS, ids=[p for _, p in JOBS])
def test_job_trains_through_trainer_and_wait_says_it_succeeded(
    where: str, path: str, mode: str, trainer: None, namespace: str, tmp_path: Path
) -> None:
    job = prepare(source(where, path).read_text())
    outcome = run_job(namespace, job, tmp_path, "--target", TARGET, "--scheduler-address", mode, timeout=TIMEOUT)
    try:
        assert outcome.exit_code == 0, f"msgen apply --wait: {outcome.stdout}\n{outcome.stderr}"
        assert f"{job.name}: Succeeded after" in outcome.stdout, outcome.stdout
        assert_trained(outcome, job, mode)
        assert_trainer_says_complete(namespace, job.name)
    except AssertionError:
        record(path, TARGET, mode, outcome, "FAILED")
        raise
    record(path, TARGET, mode, outcome, "trained, Succeeded")


def assert_trainer_says_complete(namespace: str, name: str) -> None:
    """The TrainJob's own verdict (what `--wait` read) and the JobSet Trainer built for it."""
    train_job = json.loads(kubectl("get", "trainjob", name, "-n", namespace, "-o", "json").stdout)
    complete = [c for c in train_job["status"]["conditions"] if c["type"] == "Complete"]
    assert complete and complete[0]["status"] == "True", train_job["status"]
    jobset = kubectl("get", "jobset", name, "-n", namespace, "-o", "json", check=False)
    if jobset.returncode == 0:  # gone once a ttlSecondsAfterFinished passed
        metadata = json.loads(jobset.stdout)["metadata"]
        owner = metadata["ownerReferences"][0]
        assert (owner["kind"], owner["name"]) == ("TrainJob", name)
        # what `msgen controller` watches it by, from the runtime's template
        assert {k: metadata["labels"].get(k) for k in (MANAGED_BY, JOB_NAME)} == {MANAGED_BY: "msgen", JOB_NAME: name}


def _kueue_objects(namespace: str, flavor: str, cluster_queue: str) -> list[dict[str, Any]]:
    """A ResourceFlavor, a ClusterQueue with room for the job and a LocalQueue in `namespace`."""
    resources = [{"name": name, "nominalQuota": quota} for name, quota in (("cpu", "64"), ("memory", "256Gi"))]
    return [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": flavor}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": cluster_queue},
         "spec": {"namespaceSelector": {}, "resourceGroups": [
             {"coveredResources": ["cpu", "memory"], "flavors": [{"name": flavor, "resources": resources}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
         "metadata": {"name": "training", "namespace": namespace}, "spec": {"clusterQueue": cluster_queue}},
    ]


def test_a_trainjob_queued_in_kueue_is_admitted_and_trains(trainer: None, namespace: str, tmp_path: Path) -> None:
    absent = missing_crds(KUEUE_CRDS)
    if absent:
        pytest.skip(f"Kueue is not on the cluster: no CRD {', '.join(absent)}")
    suffix = uuid.uuid4().hex[:8]
    flavor, cluster_queue = f"msgen-live-{suffix}", f"msgen-live-{suffix}"
    queues = tmp_path / "queues.yaml"
    queues.write_text(yaml.safe_dump_all(_kueue_objects(namespace, flavor, cluster_queue)))
    kubectl("apply", "-f", str(queues))
    try:
        job = prepare(source("samples", "mindspore/lenet-cpu.yaml").read_text())
        outcome = run_job(namespace, job, tmp_path, "--target", TARGET, "--kueue-queue", "training", timeout=TIMEOUT)
        try:
            assert outcome.exit_code == 0, f"msgen apply --wait: {outcome.stdout}\n{outcome.stderr}"
            assert f"{job.name}: Succeeded after" in outcome.stdout, outcome.stdout
            assert_trained(outcome, job, "cluster-ip")
            workload = _admitted_workload(namespace, job.name)
            assert workload is not None, (
                "Kueue made no admitted Workload for the TrainJob: enable Kueue's integration "
                "trainer.kubeflow.org/trainjob")
        except AssertionError:
            record("mindspore/lenet-cpu.yaml, --kueue-queue", TARGET, "cluster-ip", outcome, "FAILED")
            raise
        record("mindspore/lenet-cpu.yaml, --kueue-queue", TARGET, "cluster-ip", outcome,
               "queued, admitted by Kueue, trained, Succeeded")
    finally:
        kubectl("delete", "namespace", namespace, "--wait=true", check=False, timeout=300)
        kubectl("delete", "clusterqueue", cluster_queue, "--wait=false", check=False)
        kubectl("delete", "resourceflavor", flavor, "--wait=false", check=False)


def _admitted_workload(namespace: str, train_job: str, wait: float = 30) -> dict[str, Any] | None:
    """The Kueue Workload of the TrainJob, once it says Admitted (or None)."""
    deadline = time.monotonic() + wait
    while True:
        done = kubectl("get", "workloads.kueue.x-k8s.io", "-n", namespace, "-o", "json", check=False)
        for workload in json.loads(done.stdout)["items"] if done.returncode == 0 else []:
            owners = workload["metadata"].get("ownerReferences") or []
            ours = any((o["kind"], o["name"]) == ("TrainJob", train_job) for o in owners)
            conditions = (workload.get("status") or {}).get("conditions") or []
            admitted = any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions)
            finished = any(c["type"] == "Finished" and c["status"] == "True" for c in conditions)
            if ours and (admitted or finished):
                return dict(workload)
        if time.monotonic() > deadline:
            return None
        time.sleep(2)
