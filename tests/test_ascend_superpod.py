"""`HCCL_LOGIC_SUPERPOD_ID` on an AscendJob's NPU pods, as ascend-operator's
`addHcclSuperPodIdEnv` sets it: rank ÷ (sp-block ÷ NPUs per pod), 0 without `sp-block`, the
pod annotation `super-pod-rank` under `super-pod-affinity: soft`."""

from __future__ import annotations

from typing import Any

import pytest

from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen
from .test_mindspore_contract import pod_templates

ACJOB = (SAMPLES / "ascend" / "mindspore-acjob.yaml").read_text()
FOUR_WORKERS = ACJOB.replace("      replicas: 2\n", "      replicas: 4\n", 1)


def with_metadata(text: str, annotations: str = "", labels: str = "") -> str:
    """The job with more annotations (before its labels) and labels (after `framework`)."""
    if annotations:
        text = text.replace("  labels:\n", f"  annotations:\n{annotations}  labels:\n", 1)
    return text.replace("    framework: mindspore\n", f"    framework: mindspore\n{labels}", 1)


def superpod_ids(objects: list[dict[str, Any]]) -> dict[tuple[str, int], Any]:
    out = {}
    for _, template, count in pod_templates(objects):
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
