"""msgen.launchers.mindspore: how a MindSpore pod's processes start (one per device by
msgen's launcher, or msrun) and the settings of large clusters; chosen by framework."""

from __future__ import annotations

import pytest

from msgen import launchers
from msgen.launchers import mindspore
from msgen.model.plan import Options

from .plugin_plans import pod_env, sample_plan


@pytest.mark.parametrize(
    "sample, loaded",
    [("mindspore/gpu-2x8.yaml", True), ("mindspore/lenet-cpu.yaml", True),
     ("caffe2/resnet50-redis.yaml", False), ("mxnet/mxjob-gpu-workers.yaml", False)],
)
def test_it_serves_mindspore_jobs_only(sample: str, loaded: bool) -> None:
    assert (mindspore in launchers.contributors(sample_plan(sample), Options())) == loaded


#: sample -> the env of Worker pod 1: eight devices per pod, two pods
PER_DEVICE = {"MS_LOCAL_WORKER": "8", "MS_NODE_RANK": "1", "MS_WORKER_NUM": "16"}


@pytest.mark.parametrize(
    "sample, pod",
    [("mindspore/gpu-2x8.yaml", "ms-resnet50-gpu-worker-1"),
     ("mindspore/gpu-2x8-msrun.yaml", "ms-resnet50-msrun-worker-1")],
)
def test_a_multi_device_worker_starts_a_process_per_device(sample: str, pod: str) -> None:
    env = pod_env(sample_plan(sample), pod)
    assert {k: env.get(k) for k in PER_DEVICE} == PER_DEVICE


def test_it_adds_no_labels_to_workloads() -> None:
    """It does not label workloads (`LabelsWorkloads`), so the registry asks it nothing."""
    assert not hasattr(mindspore, "workload_labels")
    assert launchers.workload_labels(sample_plan("mindspore/gpu-2x8.yaml"), Options()) == []
