"""caffe2-operator's own job files, unchanged, against what caffe2-operator gave each pod.

Every file in `../shared/upstream/caffe2-operator` is rendered for every target and read back
from the rendered objects: each shard's env (`controller_pod.go` `createNewPod`: `REDIS_HOST`,
`REDIS_PORT`, `NFS_PATH`, `SHARD_ID`, `NUM_SHARDS`, `RUN_ID`, then `CAFFE2_CONFIG` from
`config.go`), its ports (the operator added none: `defaults.go` has the port defaulting
commented out), and the job's success rule (`status.go` `updateStatus`: succeeded when every
shard has, failed when any has). Skipped, with the reason, where `../shared` is absent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from msgen.model import run_policy, versions
from msgen.model.plan import ALL_WORKERS
from msgen.reconcile import status
from msgen.targets import NAMES as TARGETS

from .conftest import msgen, needs_shared, shared_files
from .kube_schemas import core_parts
from .test_frameworks_mindspore import pod_templates
from .test_upstream_mindspore import INDEX_FIELDS

CAFFE2 = shared_files("upstream/caffe2-operator", "*.yaml")
needs_upstream = needs_shared("upstream/caffe2-operator")

#: What each target gives RUN_ID: the run's workload UID where the pods can read one.
RUN_ID_FIELD = {
    "indexed-job": "metadata.labels['controller-uid']",
    "jobset": "metadata.labels['jobset.sigs.k8s.io/jobset-uid']",
    "trainjob": "metadata.labels['jobset.sigs.k8s.io/jobset-uid']",  # the JobSet Trainer builds
    "volcano": "metadata.annotations['scheduling.k8s.io/group-name']",
}
OPERATOR_ORDER = ["REDIS_HOST", "REDIS_PORT", "NFS_PATH", "SHARD_ID", "NUM_SHARDS", "RUN_ID", "CAFFE2_CONFIG"]
#: Variables a target defines first so that later values can use the pod's index.
INDEX_VARIABLES = {"JOB_COMPLETION_INDEX", "MSGEN_POD_INDEX", "MSGEN_TASK_INDEX"}


def job_of(path: Path) -> dict[str, Any]:
    """The Caffe2Job in an upstream file (the Redis example also holds a Redis Pod and Service)."""
    return next(d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "Caffe2Job")


def rendered(path: Path, target: str) -> tuple[list[dict[str, Any]], str]:
    run = msgen("render", str(path), "--target", target)
    assert run.exit_code == 0, run.stderr
    return run.objects(), run.stderr


def shards(objects: list[dict[str, Any]], name: str) -> list[tuple[int, dict[str, Any]]]:
    """(index, pod template) for every shard the job's objects stand for."""
    out = []
    for owner, template, count in pod_templates(objects):
        labels = template["metadata"].get("labels") or {}
        if labels.get("training.kubeflow.org/job-name") != name:
            continue  # the Redis Pod of the Redis example, passed through
        if owner["kind"] == "Pod":
            out.append((int(labels["training.kubeflow.org/replica-index"]), template))
        else:
            out += [(index, template) for index in range(count)]
    return out


def seen_env(container: dict[str, Any], index: int) -> dict[str, Any]:
    """The env a shard's process sees: literals with `$(...)` expanded as the kubelet does
    (only variables defined earlier), index fields resolved, other fields as ("field", path)."""
    out: dict[str, Any] = {}
    for entry in container.get("env") or []:
        if "value" in entry:
            out[entry["name"]] = re.sub(
                r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                lambda m: str(out.get(m.group(1), m.group(0))),
                entry["value"],
            )
        else:
            field = entry["valueFrom"]["fieldRef"]["fieldPath"]
            out[entry["name"]] = str(index) if field in INDEX_FIELDS else ("field", field)
    return out


@needs_upstream
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", CAFFE2, ids=lambda p: p.stem)
def test_each_shard_gets_caffe2_operators_env(path: Path, target: str) -> None:
    job = job_of(path)
    name, spec = job["metadata"]["name"], job["spec"]
    backend, replicas = spec["backendSpecs"], spec["replicaSpecs"]["replicas"]
    objects, stderr = rendered(path, target)
    found = shards(objects, name)
    assert sorted(i for i, _ in found) == list(range(replicas)), "one pod per shard"
    hosts: list[str] | None = None
    run_ids = set()
    for index, template in found:
        for container in template["spec"]["containers"]:  # every container, as createNewPod
            env = seen_env(container, index)
            assert [n for n in env if n not in INDEX_VARIABLES][-7:] == OPERATOR_ORDER
            assert env["REDIS_HOST"] == backend.get("redisHost", "")
            assert env["REDIS_PORT"] == str(backend.get("redisPort", 0))
            assert env["NFS_PATH"] == backend.get("nfsPath", "")
            assert env["SHARD_ID"] == str(index)
            assert env["NUM_SHARDS"] == str(replicas)
            config = json.loads(env["CAFFE2_CONFIG"])
            assert config["task"] == {"type": "worker", "index": index}
            assert len(config["cluster"]["worker"]) == replicas
            assert all(h.endswith(":2222") for h in config["cluster"]["worker"]), "api.Caffe2Port"
            assert hosts in (None, config["cluster"]["worker"]), "every shard lists the same hosts"
            hosts = config["cluster"]["worker"]
            run_ids.add(env["RUN_ID"])
            # The example's own command line gets every value it names.
            for arg in container.get("args") or []:
                for used in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", arg):
                    assert used in env, f"{arg} names {used}, which the container lacks"
    field = RUN_ID_FIELD.get(target)
    if field is not None:
        assert run_ids == {("field", field)}, "the UID of the run's workload, read at run time"
        assert "RUN_ID" not in stderr
    else:
        assert run_ids == {name}, "no workload whose identity changes per run: the job name"
        assert f"target {target} creates no object whose identity changes from run to run" in stderr


@needs_upstream
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", CAFFE2, ids=lambda p: p.stem)
def test_no_port_is_added_and_services_stay_valid(path: Path, target: str) -> None:
    job = job_of(path)
    name = job["metadata"]["name"]
    source = job["spec"]["replicaSpecs"]["template"]["spec"]
    assert source.get("hostNetwork") is True, "the examples run on the host network"
    objects, _ = rendered(path, target)
    for _, template in shards(objects, name):
        assert template["spec"]["hostNetwork"] is True
        for container, original in zip(template["spec"]["containers"], source["containers"], strict=True):
            # A containerPort on the host network is a host port: one shard per node.
            assert container.get("ports") == original.get("ports") is None
    services = [
        o for o in objects
        if o["kind"] == "Service" and o["metadata"].get("labels", {}).get("app.kubernetes.io/name") == name
    ]  # fmt: skip
    # The shards reach each other by name, through the job's headless Service where msgen
    # creates it (JobSet and Volcano create their own, as does the JobSet Trainer builds): none
    # needs a port, and the API server accepts a Service without ports only when it is headless.
    expected = [] if target in ("jobset", "volcano", "trainjob") else [name]
    assert [s["metadata"]["name"] for s in services] == expected
    for service in services:
        assert service["spec"]["clusterIP"] == "None" and "ports" not in service["spec"]
    version = versions.show(versions.NEWEST)
    for obj in objects:
        if obj.get("metadata", {}).get("labels", {}).get("app.kubernetes.io/managed-by") != "msgen":
            continue
        for part in core_parts(obj):
            kubernetes_validate.validate(part, version, strict=True)


def _shard(index: int, phase: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"shard-{index}", "labels": {
            "training.kubeflow.org/replica-type": "worker",
            "training.kubeflow.org/replica-index": str(index)}},
        "status": {"phase": phase, "startTime": "2026-01-01T10:00:00Z"},
    }  # fmt: skip


@needs_upstream
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", CAFFE2, ids=lambda p: p.stem)
def test_the_job_succeeds_when_every_shard_has(path: Path, target: str) -> None:
    job = job_of(path)
    replicas = job["spec"]["replicaSpecs"]["replicas"]
    objects, stderr = rendered(path, target)
    assert "successPolicy" not in stderr
    workloads = [o for o in objects if run_policy.ANNOTATION in o["metadata"].get("annotations", {})]
    assert workloads
    for workload in workloads:
        policy = run_policy.parse(workload["metadata"]["annotations"][run_policy.ANNOTATION])
        assert policy.success_policy == ALL_WORKERS
        # The reconciler's verdict (bare Pods, StatefulSets, and every target's `msgen status`).
        pods = [_shard(i, "Succeeded" if i == 0 else "Running") for i in range(replicas)]
        assert status.aggregate(policy, [], pods).phase == "Running", "shard 0 alone is not enough"
        pods = [_shard(i, "Succeeded") for i in range(replicas)]
        assert status.aggregate(policy, [], pods).phase == "Succeeded"
        pods[-1] = _shard(replicas - 1, "Failed")
        if policy.target == "pod":
            assert status.aggregate(policy, [], pods).phase == "Failed", "any failed shard"
    workload = next(o for o in objects if o in workloads)
    spec = workload["spec"]
    if target == "indexed-job":
        # Complete when every index has; the first failed pod fails the Job.
        assert (spec["completions"], spec["backoffLimit"]) == (replicas, 0)
        assert "successPolicy" not in spec
    elif target in ("jobset", "trainjob"):  # a TrainJob: the JobSet its runtime describes
        if target == "trainjob":
            spec = next(o for o in objects if o["kind"] == "TrainingRuntime")["spec"]["template"]["spec"]
        worker = "node" if target == "trainjob" else "worker"
        assert spec["successPolicy"] == {"operator": "All", "targetReplicatedJobs": [worker]}
        (only,) = spec["replicatedJobs"]
        job_spec = only["template"]["spec"]
        assert (job_spec["completions"], job_spec["backoffLimit"]) == (replicas, 0)
        assert "successPolicy" not in job_spec
        assert "failurePolicy" not in spec, "the JobSet fails with its Job and is not restarted"
    elif target == "volcano":
        (task,) = spec["tasks"]
        # No CompleteJob on TaskCompleted: a Volcano Job completes once all its pods have ended
        # with minAvailable of them succeeded (state/running.go), here every shard.
        assert {"event": "PodFailed", "action": "TerminateJob"} in task["policies"]
        assert all(p["action"] != "CompleteJob" for p in task["policies"])
        assert spec["minAvailable"] == task["replicas"] == replicas
