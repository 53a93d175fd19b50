"""msgen.launchers.ascend: the Ascend pod settings and the labels of the rank-table workload,
which the pipeline applies to the target's output as new objects (`with_workload_labels`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from msgen import launchers
from msgen.launchers import WorkloadLabels, ascend
from msgen.model.plan import Options

from .conftest import SAMPLES
from .plugin_plans import plan, render, workloads

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
