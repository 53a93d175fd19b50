"""mxnet-operator's own job files, unchanged, against the operators' contracts (contracts §5).

Every file in `../shared/upstream/kubeflow-mxnet-operator` (`kubeflow.org/v1 MXJob`) and
`../shared/upstream/deepinsight-mxnet-operator` (`mxnet.mlkube.io/v1beta1 MxJob`) is rendered
for every target; each pod's env and the job's outcome are read from the rendered objects and
compared with what the operators' code gave it: kubeflow/mxnet-operator and training-operator
`pkg/controller.v1/mxnet` (`SetClusterSpec`/`SetPodEnv`, `addBytePSEnv`, `genLabelsSpec`,
`UpdateJobStatus`), deepinsight/mxnet-operator `pkg/trainer` (`createDist`, `GetStatus`).
Skipped, with the reason, where `../shared` is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from msgen.model import versions
from msgen.targets import NAMES as TARGETS

from .conftest import msgen, needs_shared, shared_files
from .kube_schemas import OUTPUT_CRDS, core_parts, crd_validator
from .test_frameworks_mindspore import pod_templates
from .test_upstream_mindspore import env

#: Spread over the Pythons CI runs: its time is jsonschema's, validating bytes the golden tests hold equal on every Python (tests/python_share.py).
pytestmark = pytest.mark.spread

KUBEFLOW = shared_files("upstream/kubeflow-mxnet-operator", "*.yaml")
DEEPINSIGHT = shared_files("upstream/deepinsight-mxnet-operator", "*.yaml")
needs_kubeflow = needs_shared("upstream/kubeflow-mxnet-operator")
needs_deepinsight = needs_shared("upstream/deepinsight-mxnet-operator")


def source(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


def rendered(text_or_path: str | Path, target: str, *args: str) -> tuple[list[dict[str, Any]], str]:
    if isinstance(text_or_path, Path):
        run = msgen("render", str(text_or_path), "--target", target, *args)
    else:
        run = msgen("render", "-", "--target", target, *args, input=text_or_path)
    assert run.exit_code == 0, run.stderr
    return run.objects(), run.stderr


def pods(objects: list[dict[str, Any]]) -> list[tuple[str, int, dict[str, Any]]]:
    """(replica type, index, pod template) for every pod the objects stand for."""
    out = []
    for _, template, count in pod_templates(objects):
        labels = template["metadata"]["labels"]
        role = labels["training.kubeflow.org/replica-type"]
        static = labels.get("training.kubeflow.org/replica-index")
        if static is not None:
            out.append((role, int(static), template))
        else:
            out += [(role, index, template) for index in range(count)]
    return out


def mx_replicas(job: dict[str, Any]) -> dict[str, int]:
    return {k.lower(): int(v.get("replicas", 1)) for k, v in job["spec"]["mxReplicaSpecs"].items()}


# ---- kubeflow/mxnet-operator (kubeflow.org/v1 MXJob) ---------------------------------------


@needs_kubeflow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", KUBEFLOW, ids=lambda p: p.stem)
def test_kubeflow_files_give_each_pod_the_operators_env(path: Path, target: str) -> None:
    job = source(path)
    counts = mx_replicas(job)
    objects, _ = rendered(path, target)
    found = pods(objects)
    assert sorted(r for r, _, _ in found) == sorted(r for r, n in counts.items() for _ in range(n))
    train = job["spec"]["jobMode"] == "MXTrain"
    for role, index, template in found:
        for container in template["spec"]["containers"]:
            seen = env(template, container["name"], index)
            config = json.loads(seen["MX_CONFIG"])
            assert config["task"] == {"type": role, "index": index}
            if not train:
                continue  # (the operator's DMLC_* env of tuning pods is empty; msgen sets none)
            assert seen["DMLC_ROLE"] == role
            assert seen["DMLC_NUM_WORKER"] == str(counts["worker"])
            assert seen["DMLC_NUM_SERVER"] == str(counts["server"])
            # addBytePSEnv: Workers, and only Workers, get their index as DMLC_WORKER_ID
            if role == "worker":
                assert seen["DMLC_WORKER_ID"] == str(index)
            else:
                assert "DMLC_WORKER_ID" not in seen


@needs_kubeflow
@pytest.mark.parametrize("target", TARGETS)
def test_every_worker_gets_its_own_dmlc_worker_id(target: str) -> None:
    """Several Workers (the operator's dist example, scaled): one id per worker, 0..N-1."""
    path = next(p for p in KUBEFLOW if p.name == "mx_job_dist_gpu_v1.yaml")
    text = path.read_text().replace("    Worker:\n      replicas: 1", "    Worker:\n      replicas: 3")
    found = pods(rendered(text, target)[0])
    ids = sorted(env(t, "mxnet", i)["DMLC_WORKER_ID"] for r, i, t in found if r == "worker")
    assert ids == ["0", "1", "2"]


@needs_kubeflow
@pytest.mark.parametrize("target", TARGETS)
def test_mx_config_labels_are_the_tuner_server_key(target: str) -> None:
    """genLabelsSpec: labels.<rt> is the replica's `label` (mxnet-operator 1.0, which the
    tuning example was written for) or the template's `tuner-server-key` annotation (1.1,
    training-operator)."""
    path = next(p for p in KUBEFLOW if p.name == "mx_job_tune_gpu_v1.yaml")
    want = {"tunertracker": "", "tunerserver": "2080ti", "tuner": ""}
    objects, stderr = rendered(path, target)
    assert "label" not in stderr
    for role, index, template in pods(objects):
        assert json.loads(env(template, "mxnet", index)["MX_CONFIG"])["labels"] == want, role
    job = source(path)
    server = job["spec"]["mxReplicaSpecs"]["TunerServer"]
    del server["label"]
    server["template"]["metadata"] = {"annotations": {"tuner-server-key": "2080ti"}}
    objects, stderr = rendered(yaml.safe_dump(job), target)
    assert "tuner-server-key" not in stderr
    for role, index, template in pods(objects):
        assert json.loads(env(template, "mxnet", index)["MX_CONFIG"])["labels"] == want, role


@needs_kubeflow
def test_a_label_and_an_annotation_that_disagree_are_refused() -> None:
    path = next(p for p in KUBEFLOW if p.name == "mx_job_tune_gpu_v1.yaml")
    text = path.read_text().replace(
        "      template:\n        spec:\n          containers:\n          - name: mxnet\n"
        "            image: mxjob/auto-tuning:gpu\n            command: [\"python3\"]\n"
        "            args: [\"/home/scripts/start-job.py\"]\n            resources:",
        "      template:\n        metadata:\n          annotations: {tuner-server-key: v100}\n"
        "        spec:\n          containers:\n          - name: mxnet\n"
        "            image: mxjob/auto-tuning:gpu\n            command: [\"python3\"]\n"
        "            args: [\"/home/scripts/start-job.py\"]\n            resources:",
    )
    assert "v100" in text
    run = msgen("render", "-", input=text)
    assert run.exit_code == 1 and run.stdout == ""
    assert (
        "<stdin>:19:14: error: spec.mxReplicaSpecs.TunerServer.label: label '2080ti' and the "
        "template's annotation tuner-server-key 'v100' disagree about MX_CONFIG's "
        "labels.tunerserver"
    ) in run.stderr
    run = msgen("render", "-", input=text.replace("tuner-server-key: v100", "tuner-server-key: 2080ti"))
    assert run.exit_code == 0, run.stderr


def test_a_tuner_server_without_its_key_is_warned_about() -> None:
    text = """
apiVersion: kubeflow.org/v1
kind: MXJob
metadata: {name: tune}
spec:
  jobMode: MXTune
  mxReplicaSpecs:
    TunerTracker: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}
    TunerServer: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}
    Tuner: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}
"""
    _, stderr = rendered(text, "indexed-job")
    assert "<stdin>:9:29: warning: spec.mxReplicaSpecs.TunerServer.template: the TunerServer has neither a tuner-server-key annotation" in stderr


def run_policy_of(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The run policy the rendered workloads carry for the reconciler (msgen/run-policy)."""
    found = {
        o["metadata"]["annotations"]["msgen/run-policy"]
        for o in objects
        if "msgen/run-policy" in (o["metadata"].get("annotations") or {})
    }
    assert len(found) == 1, found
    data: dict[str, Any] = json.loads(found.pop())
    return data


@needs_kubeflow
@pytest.mark.parametrize("target", TARGETS)
def test_mxnet_operators_inline_run_policy_compiles(target: str) -> None:
    """kubeflow/mxnet-operator's MXJob has common.RunPolicy inline at spec; its BytePS example
    writes spec.cleanPodPolicy (and spec.successPolicy, which no operator read)."""
    path = next(p for p in KUBEFLOW if p.name == "byteps_dist_gpu_v1.yaml")
    objects, stderr = rendered(path, target)
    assert run_policy_of(objects)["cleanPodPolicy"] == "Running"
    assert "byteps_dist_gpu_v1.yaml:8:18: warning: spec.successPolicy: successPolicy 'AllWorkers' is ignored" in stderr
    assert "unknown field" not in stderr


INLINE = """
apiVersion: kubeflow.org/v1
kind: MXJob
metadata: {name: inline}
spec:
  jobMode: MXTrain
%s
  mxReplicaSpecs:
    Scheduler: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}
    Server: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: mxnet, image: mx}]}}}
"""


def test_inline_run_policy_defaults_and_fields() -> None:
    # SetDefaults_MXJob: an inline run policy without cleanPodPolicy means All
    objects, _ = rendered(INLINE % "  backoffLimit: 3\n  ttlSecondsAfterFinished: 60", "indexed-job")
    policy = run_policy_of(objects)
    assert (policy["cleanPodPolicy"], policy["backoffLimit"], policy["ttlSecondsAfterFinished"]) == ("All", 3, 60)
    jobs = [o for o in objects if o["kind"] == "Job"]
    assert {j["spec"]["backoffLimit"] for j in jobs} == {3}
    # training-operator's form keeps its default, None
    objects, _ = rendered(INLINE % "  runPolicy: {backoffLimit: 3}", "indexed-job")
    assert run_policy_of(objects)["cleanPodPolicy"] == "None"
    # gang scheduling's minAvailable, and warnings point at the inline fields
    objects, stderr = rendered(INLINE % "  schedulingPolicy: {minAvailable: 2}\n  activeDeadlineSeconds: 5", "statefulset")
    assert "<stdin>:7:21: warning: spec.schedulingPolicy: it asks for gang scheduling" in stderr
    assert "<stdin>:8:26: warning: spec.activeDeadlineSeconds: not supported by target statefulset" in stderr
    objects, _ = rendered(INLINE % "  schedulingPolicy: {minAvailable: 2}", "indexed-job", "--gang-scheduler", "volcano")
    assert next(o for o in objects if o["kind"] == "PodGroup")["spec"]["minMember"] == 2


def test_both_run_policy_forms_at_once_is_an_error() -> None:
    run = msgen("render", "-", input=INLINE % "  cleanPodPolicy: All\n  runPolicy: {backoffLimit: 1}")
    assert run.exit_code == 1 and run.stdout == ""
    assert (
        "<stdin>:7:3: error: spec.cleanPodPolicy: spec.cleanPodPolicy is kubeflow mxnet-operator's "
        "inline run policy, but this job also has spec.runPolicy (training-operator's form); "
        "accepted: one form, either cleanPodPolicy under spec.runPolicy, or runPolicy's fields "
        "directly under spec"
    ) in run.stderr
    run = msgen("render", "-", input=INLINE % "  schedulingPolicy: {queue: q}")
    assert run.exit_code == 1
    assert "spec.schedulingPolicy.queue: unknown field 'queue'" in run.stderr


# ---- deepinsight/mxnet-operator (mxnet.mlkube.io/v1beta1 MxJob) ----------------------------


@needs_deepinsight
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", DEEPINSIGHT, ids=lambda p: p.stem)
def test_deepinsight_files_compile_with_the_original_operators_env(path: Path, target: str) -> None:
    """The original operator's group compiles (it used to pass through uncompiled). Its env:
    createDist's five DMLC_* on container mxnet in jobMode dist; createLocal: none."""
    job = source(path)
    assert job["apiVersion"] == "mxnet.mlkube.io/v1beta1"
    objects, _ = rendered(path, target)
    assert not any(o["kind"] == "MxJob" for o in objects), "compiled, not passed through"
    found = pods(objects)
    counts = {s["mxReplicaType"].lower(): int(s.get("replicas", 1)) for s in job["spec"]["replicaSpecs"]}
    assert sorted(r for r, _, _ in found) == sorted(r for r, n in counts.items() for _ in range(n))
    for role, index, template in found:
        for container in template["spec"]["containers"]:
            seen = env(template, container["name"], index)
            if job["spec"]["jobMode"] == "local" or container["name"] != "mxnet":
                assert seen == {}
                continue
            assert sorted(seen) == ["DMLC_NUM_SERVER", "DMLC_NUM_WORKER", "DMLC_PS_ROOT_PORT", "DMLC_PS_ROOT_URI", "DMLC_ROLE"]
            assert seen["DMLC_ROLE"] == role
        # the pod template's own restartPolicy, as the operator left it
        written = next(s for s in job["spec"]["replicaSpecs"] if s["mxReplicaType"].lower() == role)
        want = written["template"]["spec"].get("restartPolicy")
        if want is not None and target != "statefulset":
            assert template["spec"]["restartPolicy"] == want


# ---- the job's outcome follows the Scheduler ------------------------------------------------


def deciding(objects: list[dict[str, Any]], target: str) -> set[str] | None:
    """The roles whose completion completes the job, as the rendered workload says it."""
    if target == "jobset":
        js = next(o for o in objects if o["kind"] == "JobSet")
        policy = js["spec"]["successPolicy"]
        assert policy["operator"] == "All"
        return set(policy["targetReplicatedJobs"])
    if target == "volcano":
        vj = next(o for o in objects if o["kind"] == "Job")
        return {
            t["name"]
            for t in vj["spec"]["tasks"]
            for p in t.get("policies") or []
            if (p["event"], p["action"]) == ("TaskCompleted", "CompleteJob")
        }
    return None


@needs_kubeflow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["byteps_dist_gpu_v1.yaml", "mx_job_dist_gpu_v1.yaml"])
def test_the_jobs_outcome_follows_the_scheduler(name: str, target: str) -> None:
    """training-operator's MXJob UpdateJobStatus (and deepinsight's GetStatus): the job
    succeeds when the Scheduler does, not the Workers."""
    path = next(p for p in KUBEFLOW if p.name == name)
    objects, stderr = rendered(path, target)
    policy = run_policy_of(objects)
    assert policy["successPolicy"] == "Scheduler"
    if target == "volcano" and policy["cleanPodPolicy"] == "None":
        # nothing is stopped early (cleanPodPolicy None); msgen status still follows the Scheduler
        assert deciding(objects, target) == set()
    else:
        assert deciding(objects, target) in (None, {"scheduler"})
    jobs = [o for o in objects if o["kind"] == "Job" and o["apiVersion"] == "batch/v1"]
    assert not any("successPolicy" in j["spec"] for j in jobs), "no worker-0 rule on the Worker Job"
    if target in ("indexed-job", "pod"):
        none = ", cleanPodPolicy None" if policy["cleanPodPolicy"] == "None" else ""
        assert f"success by the Scheduler or Tuner{none} (MXJob) needs `msgen apply --wait` or `msgen controller`" in stderr
    if target == "volcano" and policy["cleanPodPolicy"] == "None":
        # Volcano cannot end the job with one task and leave the others running
        assert "success by the Scheduler or Tuner, cleanPodPolicy None (MXJob) needs `msgen apply --wait`" in stderr


@needs_kubeflow
@pytest.mark.parametrize("target", TARGETS)
def test_a_tuning_job_ends_with_its_tuner(target: str) -> None:
    """kubeflow/mxnet-operator 1.0 ended a tuning job when its Tuner succeeded (1.1: when a
    role's pods all had, which the tracker and servers, serving until stopped, never do)."""
    path = next(p for p in KUBEFLOW if p.name == "mx_job_tune_gpu_v1.yaml")
    text = path.read_text().replace("  jobMode: MXTune\n", "  jobMode: MXTune\n  cleanPodPolicy: Running\n")
    assert "cleanPodPolicy: Running" in text
    for source_text, clean in ((path.read_text(), "None"), (text, "Running")):
        objects, stderr = rendered(source_text, target)
        policy = run_policy_of(objects)
        assert (policy["successPolicy"], policy["cleanPodPolicy"]) == ("Tuner", clean)
        decided = deciding(objects, target)
        if target == "volcano" and clean == "None":
            assert decided == set()
            assert "spec.mxReplicaSpecs.Tuner: success by the Scheduler or Tuner, cleanPodPolicy None (MXJob) needs" in stderr
        else:
            assert decided in (None, {"tuner"})


def test_a_job_without_a_scheduler_follows_its_single_worker() -> None:
    text = INLINE.replace("    Scheduler: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}\n", "")
    text = text.replace("    Server: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}\n", "")
    text = text.replace("replicas: 2", "replicas: 1") % ""
    objects, _ = rendered(text, "jobset")
    assert run_policy_of(objects)["successPolicy"] == "AllWorkers"
    assert deciding(objects, "jobset") == {"worker"}


# ---- the output is valid Kubernetes, and valid for the JobSet and Volcano CRDs ----------------


@needs_kubeflow
@needs_deepinsight
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", KUBEFLOW + DEEPINSIGHT, ids=lambda p: p.stem)
def test_upstream_mxnet_output_is_valid(path: Path, target: str) -> None:
    version = versions.show(versions.NEWEST)
    objects, _ = rendered(path, target, "--kube-version", version)
    for obj in objects:
        for part in core_parts(obj):
            try:
                kubernetes_validate.validate(part, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{part['kind']}/{part['metadata']['name']}: {exc.message}")
        if (obj["apiVersion"], obj["kind"]) in OUTPUT_CRDS:
            errors = list(crd_validator(obj["apiVersion"], obj["kind"]).iter_errors(obj))
            assert [e.message for e in errors] == [], obj["kind"]
