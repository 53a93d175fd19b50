"""ms-operator's and MindCluster's own job files, unchanged, against their operators' contracts.

Every file in `../shared/upstream/ms-operator` and `../shared/upstream/mindxdl-deploy` is
rendered for every target; each pod's env, labels and the job's policies are read from the
rendered objects and compared with what ms-operator (`pkg/controllers/v1/msjob_controller.go`)
or ascend-operator (`pkg/controllers/v1/env.go`, `labels.go`, `api/v1/defaults.go`) gave it.
Skipped, with the reason, where `../shared` is absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen.targets import NAMES as TARGETS
from msgen.targets import lookup

from .conftest import SHARED, msgen, needs_shared, shared_files
from .test_frameworks_mindspore import main_container, pod_templates

UPSTREAM = SHARED / "upstream"
MS_OPERATOR = shared_files("upstream/ms-operator", "*.yaml")
MINDXDL = shared_files("upstream/mindxdl-deploy", "*.yaml")
needs_upstream = needs_shared("upstream/ms-operator", "upstream/mindxdl-deploy")

#: fieldPaths through which a target tells a pod its index
INDEX_FIELDS = {
    "metadata.annotations['batch.kubernetes.io/job-completion-index']",
    "metadata.labels['apps.kubernetes.io/pod-index']",
    "metadata.labels['volcano.sh/task-index']",
}
NPU = "huawei.com/Ascend910"


def rendered(path: Path, target: str, *args: str) -> tuple[list[dict[str, Any]], str]:
    run = msgen("render", str(path), "--target", target, *args)
    assert run.exit_code == 0, run.stderr
    return run.objects(), run.stderr


def pods(objects: list[dict[str, Any]]) -> list[tuple[str, int, dict[str, Any]]]:
    """(replica type, index, pod template) for every pod the objects stand for."""
    out = []
    for owner, template, count in pod_templates(objects):
        labels = template["metadata"]["labels"]
        role = labels["training.kubeflow.org/replica-type"]
        if owner["kind"] == "Pod" or "replica-index" in labels:
            out.append((role, int(labels["replica-index"]), template))
        else:
            out += [(role, index, template) for index in range(count)]
    return out


def env(template: dict[str, Any], container: str, index: int) -> dict[str, Any]:
    """The container's env with every value a pod would see: literals, index fields resolved,
    other downward-API fields as their fieldPath."""
    main = main_container(template, container)
    out: dict[str, Any] = {}
    for entry in main.get("env") or []:
        if "value" in entry:
            out[entry["name"]] = entry["value"]
        else:
            field = entry["valueFrom"]["fieldRef"]["fieldPath"]
            out[entry["name"]] = str(index) if field in INDEX_FIELDS else ("fieldRef", field)
    for name, value in list(out.items()):
        if isinstance(value, str):
            for other, resolved in out.items():
                if isinstance(resolved, str) and other != name:
                    value = value.replace(f"$({other})", resolved)
            out[name] = value
    return out


def source(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


def replicas(job: dict[str, Any], key: str) -> int:
    specs = job["spec"].get("msReplicaSpecs") or job["spec"]["replicaSpecs"]
    spec = next((v for k, v in specs.items() if k.lower() == key.lower()), None)
    return 0 if spec is None else int(spec.get("replicas", 1))


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        assert expression["operator"] == "In", expression
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


# ---- ms-operator ------------------------------------------------------------------------


@needs_upstream
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", MS_OPERATOR, ids=lambda p: p.stem)
def test_ms_operator_files_give_each_pod_ms_operators_env_and_labels(path: Path, target: str) -> None:
    job = source(path)
    name = job["metadata"]["name"]
    objects, _ = rendered(path, target)
    found = pods(objects)
    assert sorted(r for r, _, _ in found) == sorted(
        r for r in ("scheduler", "ps", "worker") for _ in range(replicas(job, r))
    ), "one pod per replica"
    distributed = replicas(job, "Scheduler") > 0
    for role, index, template in found:
        labels = template["metadata"]["labels"]
        # kubeflow/common GenLabels + SetReplicaType, with ms-operator's controllerName
        # Job pods' job-name is the Job's own name (the API server sets it, refusing others).
        assert labels.get("job-name", name) == labels["training.kubeflow.org/job-name"] == name
        assert ("job-name" in labels) == (not lookup(target).facts.job_templates)
        assert labels["replica-type"] == role
        assert labels["group-name"] == "mindspore.gitee.com"
        assert labels["training.kubeflow.org/operator-name"] == "msjob-controller"
        assert "training.kubeflow.org/job-role" not in labels, "ms-operator's IsMasterRole is false"
        seen = env(template, "mindspore", index)
        if not distributed:
            assert not any(k.startswith("MS_") for k in seen), "a standalone Worker gets no env"
            continue
        assert seen["MS_ROLE"] == {"scheduler": "MS_SCHED", "ps": "MS_PSERVER", "worker": "MS_WORKER"}[role]
        assert seen["MS_SCHED_PORT"] == "2222"
        assert seen["MS_SERVER_NUM"] == str(replicas(job, "PS"))
        assert seen["MS_WORKER_NUM"] == str(replicas(job, "Worker"))  # one GPU per worker pod
        if role == "scheduler":
            assert seen["MS_SCHED_HOST"] == ("fieldRef", "status.podIP")
        else:
            assert seen["MS_SCHED_HOST"] == f"$({name.upper().replace('-', '_')}_SCHEDULER_0_SERVICE_HOST)"
        # msgen's deliberate difference: Workers' node id is their index (a stable rank).
        if role == "worker":
            assert seen["MS_NODE_ID"] == str(index)
        else:  # the pod's name, as ms-operator set it (statically, or the downward API's)
            assert seen["MS_NODE_ID"] in (f"{name}-{role}-{index}", ("fieldRef", "metadata.name"))


@needs_upstream
@pytest.mark.parametrize("path", MS_OPERATOR, ids=lambda p: p.stem)
def test_ms_operator_files_gang_annotation_names_the_task(path: Path) -> None:
    objects, _ = rendered(path, "indexed-job", "--gang-scheduler", "volcano")
    for role, _, template in pods(objects):
        annotations = template["metadata"]["annotations"]
        assert annotations["volcano.sh/task-spec"] == role, "ms-operator createNewPod"
        assert annotations["scheduling.k8s.io/group-name"] == source(path)["metadata"]["name"]


# ---- MindCluster's AscendJob samples ------------------------------------------------------


def ascend_pods(path: Path, target: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[tuple[str, int, dict[str, Any]]]]:
    objects, _ = rendered(path, target)
    return source(path), objects, pods(objects)


@needs_upstream
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", MINDXDL, ids=lambda p: p.stem)
def test_ascendjob_samples_give_every_role_ascend_operators_env(path: Path, target: str) -> None:
    job, _, found = ascend_pods(path, target)
    name = job["metadata"]["name"]
    workers = replicas(job, "Worker")
    worker_spec = job["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    per_pod = int(worker_spec["resources"]["requests"][NPU])
    multi_node = len(job["spec"]["replicaSpecs"]) > 1
    for role, index, template in found:
        seen = env(template, "ascend", index)
        if not multi_node:
            # setEnv: a MindSpore job of one Worker replica spec gets no framework env
            assert not any(k.startswith("MS_") or k == "NPU_POD" for k in seen)
            continue
        asks_npu = NPU in (template["spec"]["containers"][0].get("resources") or {}).get("requests", {})
        expected = {
            "MS_LOCAL_WORKER": str(per_pod),
            "MS_WORKER_NUM": str(per_pod * workers),
            "MS_NODE_RANK": str(index),
            "MS_SCHED_PORT": "2222",
            "MS_SERVER_NUM": "0",
            "MS_ROLE": "MS_SCHED" if role == "scheduler" else "MS_WORKER",
            "NPU_POD": "true" if asks_npu else "false",
            "HostNetwork": "false",
            "REPLICA_TYPE": role.capitalize(),
        }
        if asks_npu:  # addHcclSuperPodIdEnv: no sp-block annotation in the samples
            expected["HCCL_LOGIC_SUPERPOD_ID"] = "0"
        else:
            assert "HCCL_LOGIC_SUPERPOD_ID" not in seen
        assert {k: seen.get(k) for k in expected} == expected, f"{role} {index}"
        if role == "scheduler":
            assert seen["MS_SCHED_HOST"] == ("fieldRef", "status.podIP")
        else:
            assert seen["MS_SCHED_HOST"] == f"$({name.upper().replace('-', '_')}_SCHEDULER_0_SERVICE_HOST)"
            assert seen["ASCEND_VISIBLE_DEVICES"] == ("fieldRef", f"metadata.annotations['{NPU}']")
        assert "MS_NODE_ID" not in seen, "MindCluster's launch script numbers the processes"
        ports = template["spec"]["containers"][0].get("ports") or []
        if role == "scheduler":
            assert {"containerPort": 2222, "name": "ascendjob-port"} in ports


@needs_upstream
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", MINDXDL, ids=lambda p: p.stem)
def test_ascendjob_samples_pods_carry_ascend_operators_labels(path: Path, target: str) -> None:
    job, _, found = ascend_pods(path, target)
    for role, index, template in found:
        labels = template["metadata"]["labels"]
        assert labels.get("job-name", job["metadata"]["name"]) == job["metadata"]["name"]
        assert ("job-name" in labels) == (not lookup(target).facts.job_templates)
        assert labels["replica-type"] == role
        assert labels["group-name"] == "mindxdl.gitee.com"
        assert labels["training.kubeflow.org/operator-name"] == "ascendjob-controller"
        assert (labels.get("training.kubeflow.org/job-role") == "master") == (role == "scheduler")
        if target == "pod":
            assert labels["replica-index"] == str(index)


@needs_upstream
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", MINDXDL, ids=lambda p: p.stem)
def test_ascendjob_samples_own_anti_affinity_selects_their_own_pods(path: Path, target: str) -> None:
    """MindCluster's samples spread Workers with a required anti-affinity on job-name +
    replica-type: it must select the Workers' own pods (and only the job's own role)."""
    _, _, found = ascend_pods(path, target)
    checked = 0
    for role, _, template in found:
        affinity = (template["spec"].get("affinity") or {}).get("podAntiAffinity") or {}
        for term in affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or []:
            selector = term["labelSelector"]
            mine = template["metadata"]["labels"]
            assert selects(selector, mine), f"{role}'s anti-affinity selects none of its own pods"
            others = [t for r, _, t in found if r != role]
            assert not any(selects(selector, t["metadata"]["labels"]) for t in others)
            checked += 1
    multi_worker = any(r == "worker" for r, i, _ in found if i > 0)
    assert checked > 0 or not multi_worker, "the sample's anti-affinity was not found"


@needs_upstream
@pytest.mark.parametrize("path", MINDXDL, ids=lambda p: p.stem)
def test_ascendjob_samples_policies_are_ascend_operators(path: Path) -> None:
    """cleanPodPolicy None (SetDefaultsAscendJob) and success when all pods have: the Volcano
    Job does not complete on the Worker task alone, the Worker Job needs every index."""
    objects, _ = rendered(path, "volcano")
    vcjob = next(o for o in objects if o["apiVersion"] == "batch.volcano.sh/v1alpha1")
    for task in vcjob["spec"]["tasks"]:
        actions = {p["action"] for p in task.get("policies") or []}
        assert "CompleteJob" not in actions, "cleanPodPolicy None leaves the other pods running"
    objects, _ = rendered(path, "indexed-job")
    for obj in objects:
        if obj["kind"] == "Job":
            assert "successPolicy" not in obj["spec"], "every pod must succeed"


ACJOB_TEXT = (UPSTREAM / "mindxdl-deploy" / "mindspore_multinodes_acjob.yaml")


@needs_upstream
def test_recover_strategy_becomes_ascend_operators_env_and_warns() -> None:
    text = ACJOB_TEXT.read_text().replace(
        "  labels:\n    framework: mindspore\n",
        "  annotations:\n    recover-strategy: \"retry,recover-in-place,elastic-training\"\n"
        "  labels:\n    framework: mindspore\n    pod-rescheduling: \"on\"\n",
        1,
    )
    run = msgen("render", "-", "--target", "pod", input=text)
    assert run.exit_code == 0, run.stderr
    for role, index, template in pods(run.objects()):
        seen = env(template, "ascend", index)
        expected = {
            "PROCESS_RECOVER": "on",
            "ELASTIC_PROCESS_RECOVER_ENABLE": "1",
            "ENABLE_RESTART_FAULT_PROCESS": "on",
            "MS_ENABLE_TFT": "{ARF:1,HCCE:1,RSC:1,UCE:1}",
            "MINDIO_FOR_MINDSPORE": "1",
            "MS_ENABLE_THM": "{HCCL_WATCHDOG:0}",
        }
        assert {k: seen.get(k) for k in expected} == expected, role
    assert "<stdin>:6:23: warning: metadata.annotations.recover-strategy: recover-strategy 'elastic-training' sets no env: ascend-operator applies it to PyTorch jobs only" in run.stderr
    assert "metadata.annotations.recover-strategy: recover-strategy: msgen writes the env ascend-operator derives from it, but the recovery itself is done at run time" in run.stderr
    assert "metadata.labels.pod-rescheduling: pod-rescheduling: on: msgen writes the env" in run.stderr


@needs_upstream
def test_sub_healthy_hot_switch_env() -> None:
    text = ACJOB_TEXT.read_text().replace("    framework: mindspore\n", "    framework: mindspore\n    subHealthyStrategy: hotSwitch\n", 1)
    run = msgen("render", "-", "--target", "pod", input=text)
    assert run.exit_code == 0, run.stderr
    for _, index, template in pods(run.objects()):
        seen = env(template, "ascend", index)
        assert (seen["MS_ENABLE_TFT"], seen["MINDIO_FOR_MINDSPORE"], seen["PROCESS_RECOVER"]) == ("{ARF:1}", "1", "on")
    assert "metadata.labels.subHealthyStrategy: subHealthyStrategy: hotSwitch:" in run.stderr


@needs_upstream
def test_volcano_refusal_is_gone_and_the_index_comes_from_volcano() -> None:
    objects, _ = rendered(ACJOB_TEXT, "volcano")
    vcjob = next(o for o in objects if o["apiVersion"] == "batch.volcano.sh/v1alpha1")
    worker = next(t for t in vcjob["spec"]["tasks"] if t["name"] == "worker")
    rank = next(e for e in worker["template"]["spec"]["containers"][0]["env"] if e["name"] == "MS_NODE_RANK")
    assert rank["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['volcano.sh/task-index']"


@needs_upstream
def test_remaining_refusal_names_its_cause_where_it_was_written() -> None:
    run = msgen("render", str(ACJOB_TEXT), "--target", "statefulset", "--kube-version", "1.27")
    assert run.exit_code == 1 and run.stdout == ""
    assert ": error: spec.replicaSpecs.Worker: an AscendJob gives each Worker pod its index as MS_NODE_RANK" in run.stderr
    assert "target statefulset cannot tell a pod its index at Kubernetes 1.27" in run.stderr
    assert "kind: AscendJob" not in run.stderr.splitlines()[-3]
