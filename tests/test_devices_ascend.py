"""msgen.devices.ascend: Ascend NPUs, asked for by `huawei.com/Ascend910`-like names or
`huawei.com/npu`; a container sees the NPUs its device plug-in allocated (an annotation), and
an AscendJob's NPU pods get `HCCL_LOGIC_SUPERPOD_ID` as ascend-operator's
`addHcclSuperPodIdEnv` sets it (rank ÷ (sp-block ÷ NPUs per pod), 0 without `sp-block`, the pod
annotation `super-pod-rank` under `super-pod-affinity: soft`)."""

from __future__ import annotations

from typing import Any

import pytest

from msgen import devices
from msgen.devices import ascend
from msgen.model.patch import field_ref
from .conftest import SAMPLES
from .conftest import msgen
from .test_frameworks_mindspore import pod_templates
from msgen.targets import NAMES as TARGETS
from .plugin_plans import scheduler_and_worker
from .test_device_plugins import NPU_JOB


@pytest.mark.parametrize(
    "resource, kind",
    [("huawei.com/Ascend910", "ascend"), ("huawei.com/npu", "ascend"), ("nvidia.com/gpu", "gpu"),
     ("huawei.com/other", None)],
)
def test_the_resources_that_ask_for_an_npu(resource: str, kind: str | None) -> None:
    assert devices.device_kind(resource) == kind


def test_it_is_the_registered_ascend_device() -> None:
    assert devices.lookup("ascend") is ascend


def _container(name: str, resource: str | None) -> dict[str, Any]:
    limits = {resource: 1} if resource else {}
    return {"name": name, "resources": {"limits": limits}}


@pytest.mark.parametrize("host_network", [False, True])
def test_visible_devices_come_from_the_plugins_annotation(host_network: bool) -> None:
    template = {"spec": {"hostNetwork": host_network}}
    containers = [_container("train", "huawei.com/Ascend910"), _container("log", None)]
    env = ascend.visible_devices(template, containers).env
    expected = [("train", ascend.VISIBLE_DEVICES,
                 field_ref("metadata.annotations['huawei.com/Ascend910']"))]
    if host_network:
        expected.append(("train", ascend.HCCL_IF_IP, field_ref("status.hostIP")))
    assert list(env) == expected


ACJOB = (SAMPLES / "ascend" / "mindspore-acjob.yaml").read_text()


FOUR_WORKERS = ACJOB.replace("      replicas: 2\n", "      replicas: 4\n", 1)


def with_metadata(text: str, annotations: str = "", labels: str = "") -> str:
    """The job with more annotations (before its labels) and labels (after `framework`)."""
    if annotations:
        text = text.replace("  labels:\n", f"  annotations:\n{annotations}  labels:\n", 1)
    return text.replace("    framework: mindspore\n", f"    framework: mindspore\n{labels}", 1)


def superpod_ids(objects: list[dict[str, Any]]) -> dict[tuple[str, int], Any]:
    out = {}
    for _, template, _count in pod_templates(objects):
        labels = template["metadata"]["labels"]
        role = labels["replica-type"]
        for entry in template["spec"]["containers"][0].get("env") or []:
            if entry["name"] == "HCCL_LOGIC_SUPERPOD_ID":
                index = int(labels["replica-index"]) if "replica-index" in labels else -1
                out[(role, index)] = entry.get("value", entry.get("valueFrom"))
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_without_sp_block_every_npu_pod_has_id_0(target: str) -> None:
    run = msgen("render", "-", "--target", target, input=ACJOB)
    assert run.exit_code == 0, run.stderr
    ids = superpod_ids(run.objects())
    assert ids and set(ids.values()) == {"0"}
    assert all(role == "worker" for role, _ in ids), "the Scheduler asks for no NPUs"


def test_sp_block_divides_the_rank_on_the_pod_target() -> None:
    text = with_metadata(FOUR_WORKERS, annotations='    sp-block: "16"\n')  # 2 pods of 8 NPUs each
    run = msgen("render", "-", "--target", "pod", input=text)
    assert run.exit_code == 0, run.stderr
    assert superpod_ids(run.objects()) == {("worker", 0): "0", ("worker", 1): "0", ("worker", 2): "1", ("worker", 3): "1"}
    assert "HCCL_LOGIC_SUPERPOD_ID" not in run.stderr


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "pod"])
def test_sp_block_that_needs_a_division_is_reported_where_the_index_is_dynamic(target: str) -> None:
    text = with_metadata(FOUR_WORKERS, annotations='    sp-block: "16"\n')
    run = msgen("render", "-", "--target", target, input=text)
    assert run.exit_code == 0, run.stderr
    assert superpod_ids(run.objects()) == {}
    assert (
        "<stdin>:11:15: warning: metadata.annotations.sp-block: HCCL_LOGIC_SUPERPOD_ID is the pod's rank divided by 2 "
        f"(pods per logical super-pod), which target {target} cannot compute at run time"
    ) in run.stderr


def test_sp_block_of_one_pod_is_the_index() -> None:
    text = with_metadata(FOUR_WORKERS, annotations='    sp-block: "8"\n')
    run = msgen("render", "-", "--target", "volcano", input=text)
    assert run.exit_code == 0, run.stderr
    ids = superpod_ids(run.objects())
    assert ids == {("worker", -1): {"fieldRef": {"fieldPath": "metadata.labels['volcano.sh/task-index']"}}}


def test_soft_super_pod_affinity_reads_the_schedulers_annotation() -> None:
    text = with_metadata(FOUR_WORKERS, labels="    super-pod-affinity: soft\n")
    run = msgen("render", "-", "--target", "indexed-job", input=text)
    assert run.exit_code == 0, run.stderr
    assert set(map(str, superpod_ids(run.objects()).values())) == {str({"fieldRef": {"fieldPath": "metadata.annotations['super-pod-rank']"}})}


def test_ascend_reads_the_devices_its_plugin_allocated() -> None:
    made, scheduler, worker = scheduler_and_worker(NPU_JOB)
    assert ascend.contribute(made, scheduler) == []
    (patch,) = ascend.contribute(made, worker)
    visible = field_ref("metadata.annotations['huawei.com/Ascend910']")
    assert patch.env == (("mindspore", ascend.VISIBLE_DEVICES, visible),)
