"""msgen.launchers.ascend: the Ascend pod settings (`/dev/shm`, the chip's node selector, the rank
table filled by the cluster's operator) with their refusals, and the labels of the rank-table
workload, which the pipeline applies to the target's output as new objects
(`with_workload_labels`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from msgen import launchers
from msgen.launchers import WorkloadLabels, ascend
from msgen.model.plan import Options

from .conftest import SAMPLES, msgen
from .multi_device_pods import ACJOB, GPU, MS, config_maps, resolved_env, unpinned
from .plugin_plans import addresses, plan, render, slot_of, workloads
from .test_device_plugins import NPU_JOB, _slot
from .test_errors import fails, line_of
from .test_frameworks_mindspore import env_of, pod_templates, role_of
from .test_frameworks_mindspore import render as render_file

RANK_TABLE = (SAMPLES / "mindspore" / "ascend-2x8-rank-table.yaml").read_text()

#: target -> the labels of the workload MindCluster fills the rank table for
LABELLED = {
    "statefulset": ("StatefulSet", "worker", True),
    "volcano": ("Job", "", False),
}


@pytest.mark.parametrize("target", LABELLED)
def test_the_rank_table_workload_is_labelled_for_mindcluster(target: str) -> None:
    made = plan(RANK_TABLE)
    kind, suffix, on_pods = LABELLED[target]
    name = f"{made.name}-{suffix}" if suffix else made.name
    (wanted,) = ascend.workload_labels(made, Options(target=target, rank_table="operator"))  # type: ignore[arg-type]
    assert (wanted.kind, wanted.name) == (kind, name)
    assert wanted.labels == ((ascend.RING_LABEL, "ascend-910b"),)
    assert wanted.template_labels == (((ascend.DEPLOY_NAME_LABEL, name),) if on_pods else ())
    objects, _ = render(made, target, rank_table="operator")
    (labelled,) = [o for o in workloads(objects) if o["metadata"]["name"] == name]
    assert labelled["metadata"]["labels"][ascend.RING_LABEL] == "ascend-910b"


@pytest.mark.parametrize("options", [Options(target="statefulset"), Options(target="volcano")])
def test_nothing_is_labelled_without_an_operator_rank_table(options: Options) -> None:
    assert ascend.workload_labels(plan(RANK_TABLE), options) == ()


def _workload(name: str) -> dict[str, Any]:
    return {
        "kind": "StatefulSet",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"template": {"metadata": {"labels": {"pod": name}}, "spec": {}}},
    }


def test_labels_make_new_objects_and_leave_the_targets_output_as_it_was() -> None:
    rendered = [_workload("a"), _workload("b")]
    before = copy.deepcopy(rendered)
    wanted = [WorkloadLabels("StatefulSet", "b", (("ring", "x"), ("app", "y")), (("deploy", "b"),))]
    out = launchers.with_workload_labels(rendered, wanted)
    assert rendered == before
    assert out[0] is rendered[0]
    assert out[1]["metadata"]["labels"] == {"app": "y", "ring": "x"}
    assert out[1]["spec"]["template"]["metadata"]["labels"] == {"pod": "b", "deploy": "b"}
    assert launchers.with_workload_labels(rendered, []) is rendered




def test_rank_table_without_npus() -> None:
    text = GPU.replace("  name: ms-resnet50-gpu\n", "  name: ms-resnet50-gpu\n  annotations:\n    msgen/rank-table: operator\n")
    err = fails(text)
    assert f"<stdin>:{line_of(text, 'msgen/rank-table')}:23: error: metadata.annotations.msgen/rank-table: --rank-table operator: no role asks for Ascend NPUs" in err


def test_shm_size_against_the_templates_own_mount() -> None:
    err = fails(ACJOB, "--shm-size", "8Gi")
    assert f"<stdin>:{line_of(ACJOB, 'name: dshm')}:19: error: spec.replicaSpecs.Worker.template.spec.containers[0].volumeMounts[4]:" in err
    assert "container 'ascend' mounts its own /dev/shm, and --shm-size 8Gi asks msgen to mount one" in err


def test_accelerator_type_conflicts_with_the_templates_node_selector() -> None:
    err = fails(ACJOB, "--accelerator-type", "module-a3-16")
    assert f"<stdin>:{line_of(ACJOB, 'accelerator-type: module-910b-8')}:31: error: spec.replicaSpecs.Worker.template.spec.nodeSelector.accelerator-type:" in err
    assert "nodeSelector accelerator-type: 'module-910b-8' differs from 'module-a3-16'" in err


def test_accelerator_type_on_a_job_without_npus_is_a_warning() -> None:
    run = msgen("render", "-", "--accelerator-type", "module-910b-8", input=GPU)
    assert run.exit_code == 0, run.stderr
    assert "warning: metadata.name: --accelerator-type module-910b-8 is ignored: no role asks for Ascend NPUs" in run.stderr
    assert all("accelerator-type" not in str(o) for o in run.objects())
    text = GPU.replace("  name: ms-resnet50-gpu\n", "  name: ms-resnet50-gpu\n  annotations:\n    msgen/accelerator-type: module-910b-8\n")
    run = msgen("render", "-", input=text)
    assert f"<stdin>:{line_of(text, 'msgen/accelerator-type')}:" in run.stderr
    assert "is ignored: no role asks for Ascend NPUs" in run.stderr


def test_rank_table_operator() -> None:
    objects = render_file(str(MS / "ascend-2x8-rank-table.yaml"), "--target", "volcano")
    table = config_maps(objects)["rings-config-ms-resnet50-rank-table"]
    # MindCluster fills rings-config-<Volcano Job> only for a Volcano Job labelled ring-controller.atlas.
    vcjob = next(o for o in objects if o["kind"] == "Job")
    assert vcjob["metadata"]["name"] == "ms-resnet50-rank-table"
    assert vcjob["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b"
    assert table["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b"
    assert table["data"] == {"hccl.json": '{"status":"initializing"}'}
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    env = resolved_env(worker, 0)
    assert env["RANK_TABLE_FILE"] == "/user/serverid/devindex/config/hccl.json"
    assert env["RANK_SIZE"] == "16" and env["MSGEN_RANK_TABLE_TIMEOUT"] == "600"
    mount = next(m for m in worker["spec"]["containers"][0]["volumeMounts"] if m["mountPath"] == "/user/serverid/devindex/config")
    volume = next(v for v in worker["spec"]["volumes"] if v["name"] == mount["name"])
    assert volume["configMap"]["name"] == "rings-config-ms-resnet50-rank-table"
    scheduler = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "scheduler")
    assert "RANK_TABLE_FILE" not in env_of(scheduler), "the CPU Scheduler has no NPUs"
    assert [o["kind"] for o in objects][:2] == ["ConfigMap", "ConfigMap"], "ConfigMaps come first"


def test_rank_table_operator_statefulset_names_the_worker_statefulset() -> None:
    objects = render_file("-", "--target", "statefulset", input=unpinned(MS / "ascend-2x8-rank-table.yaml"))
    assert "rings-config-ms-resnet50-rank-table-worker" in config_maps(objects)
    sets = {o["metadata"]["name"]: o for o in objects if o["kind"] == "StatefulSet"}
    worker = sets["ms-resnet50-rank-table-worker"]
    # ascend-operator's StatefulSet plugin: the workload labelled ring-controller.atlas, its
    # pods found by deploy-name; the CPU Scheduler's StatefulSet is not a rank-table workload.
    assert worker["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b"
    assert worker["spec"]["template"]["metadata"]["labels"]["deploy-name"] == "ms-resnet50-rank-table-worker"
    scheduler = sets["ms-resnet50-rank-table-scheduler"]
    assert "ring-controller.atlas" not in scheduler["metadata"]["labels"]
    assert "deploy-name" not in scheduler["spec"]["template"]["metadata"]["labels"]
    volume = next(v for v in worker["spec"]["template"]["spec"]["volumes"] if "configMap" in v)
    assert volume["configMap"]["name"] == "rings-config-ms-resnet50-rank-table-worker"


@pytest.mark.parametrize("target", ["indexed-job", "pod", "jobset"])
def test_rank_table_operator_is_refused_where_mindcluster_fills_no_table(target: str) -> None:
    run = msgen("render", "-", "--target", target, input=unpinned(MS / "ascend-2x8-rank-table.yaml"))
    assert run.exit_code == 1 and run.stdout == ""
    assert ":14:23: error: metadata.annotations.msgen/rank-table: --rank-table operator: " in run.stderr
    assert "which MindCluster's rank-table plugins do not recognise" in run.stderr
    assert "accepted: --target volcano or statefulset, or --rank-table none" in run.stderr


def test_rank_table_label_follows_the_chip() -> None:
    text = (MS / "ascend-2x8-rank-table.yaml").read_text().replace("module-910b-8", "module")
    objects = render_file("-", "--target", "volcano", input=text)
    assert config_maps(objects)["rings-config-ms-resnet50-rank-table"]["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910"
    run = msgen("render", "-", "--target", "volcano", input=text.replace("    msgen/accelerator-type: module\n", ""))
    assert run.exit_code == 0
    assert "the chip is unknown, so rings-config-ms-resnet50-rank-table is labelled ring-controller.atlas: ascend-910b" in run.stderr


def test_ascend_shm_and_accelerator_type() -> None:
    objects = render_file(str(MS / "ascend-2x8.yaml"))
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    assert worker["spec"]["nodeSelector"] == {"accelerator-type": "module-910b-8"}
    shm = next(v for v in worker["spec"]["volumes"] if v["name"] == "msgen-shm")
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "32Gi"}
    scheduler = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "scheduler")
    assert "nodeSelector" not in scheduler["spec"], "only NPU pods need the chip"
    assert all(v["name"] != "msgen-shm" for v in scheduler["spec"]["volumes"])
    # A template's own /dev/shm is kept when --shm-size is not given.
    acjob = render_file(str(SAMPLES / "ascend" / "mindspore-acjob.yaml"))
    worker = next(t for _, t, _ in pod_templates(acjob) if role_of(t) == "worker")
    assert [m["name"] for m in worker["spec"]["containers"][0]["volumeMounts"] if m["mountPath"] == "/dev/shm"] == ["dshm"]


def test_ascend_settings_give_npu_pods_shared_memory() -> None:
    made = plan(NPU_JOB)
    patches = ascend.contribute(made, _slot(made, "Worker"), addresses(made), Options())
    (settings,) = patches
    assert settings.volumes[0]["emptyDir"] == {"medium": "Memory", "sizeLimit": "16Gi"}
    assert ascend.contribute(made, _slot(made, "Scheduler"), addresses(made), Options()) == []


def test_it_checks_the_ascend_options_against_the_job() -> None:
    """`check`: an operator rank table needs NPUs to fill it for; `contribute` gives NPU pods the
    chip's node selector as --accelerator-type names it."""
    gpus = plan(GPU)
    assert [d.is_error for d in ascend.check(gpus, Options(rank_table="operator"))] == [True]
    assert ascend.check(plan(NPU_JOB), Options()) == []
    made = plan(NPU_JOB)
    (settings,) = ascend.contribute(made, slot_of(made, "Worker"), addresses(made), Options(accelerator_type="module-910b-8"))
    assert dict(settings.node_selector) == {"accelerator-type": "module-910b-8"}
