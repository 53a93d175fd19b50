"""Devices and process contributors as their registries choose them: the device kind of a
resource, which devices and contributors a job loads, and how many devices a container asks
for (each device's and contributor's own behaviour is in tests/test_devices_<device>.py and
tests/test_launchers_<module>.py)."""

from __future__ import annotations

import pytest

from msgen import devices, kinds, launchers
from msgen.model.plan import Options, Plan, PodSlot
from msgen.launchers import ascend as ascend_settings
from msgen.launchers import mindspore as mindspore_processes
from msgen.model.source import Source
from msgen.yamlio.yaml_loader import load_documents

from .plugin_plans import job, plan

GPU_JOB = job(resources="{limits: {nvidia.com/gpu: 1}}")
NPU_JOB = job(resources="{limits: {huawei.com/Ascend910: 8}}")


def test_resources_name_their_device_kind() -> None:
    assert devices.device_kind("nvidia.com/gpu") == "gpu"
    assert devices.device_kind("huawei.com/Ascend910") == "ascend"
    assert devices.device_kind("huawei.com/npu-core") == "ascend"
    assert devices.device_kind("nvidia.com/gpu-shared") is None  # GPUs are named exactly
    assert devices.device_kind("cpu") is None
    assert devices.kinds_used(plan(NPU_JOB)) == {"ascend", "cpu"}


def test_devices_contribute_only_for_the_kinds_a_job_uses() -> None:
    cpu = plan()
    assert devices.contribute(cpu, _slot(cpu, "Worker")) == []
    npu = plan(NPU_JOB)
    assert [p.contributor for p in devices.contribute(npu, _slot(npu, "Worker"))] == ["Ascend"]
    gpus = plan(GPU_JOB)
    assert [p.contributor for p in devices.contribute(gpus, _slot(gpus, "Worker"))] == ["GPU isolation"]


def test_process_contributors_are_chosen_by_device_and_framework() -> None:
    assert launchers.contributors(plan(), Options()) == [mindspore_processes]
    assert launchers.contributors(plan(NPU_JOB), Options()) == [ascend_settings, mindspore_processes]
    # an Ascend option on a job without NPUs loads the Ascend settings, to say they do nothing
    asked = Options(accelerator_type="module-910b-8")
    assert launchers.contributors(plan(), asked) == [ascend_settings, mindspore_processes]


def _slot(made: Plan, role: str) -> PodSlot:
    found = made.role(role)
    assert found is not None
    return PodSlot(found, None)


#: a device quantity as written -> the devices it counts (None: refused), read by Kubernetes'
#: quantity grammar as the API server reads it
DEVICE_COUNTS = {
    "2": 2, "1e0": 1, "1E1": 10, "1000m": 1, "+2": 2, "0": 0, "2.0": 2,
    "1.5": None, "500m": None, "-1": None, "two": None, "1Ki": 1024, "9" * 1001: None,
}


@pytest.mark.parametrize("written", DEVICE_COUNTS, ids=lambda w: w[:12])
def test_a_device_count_is_a_whole_quantity(written: str) -> None:
    text = job(resources=f'{{limits: {{nvidia.com/gpu: "{written}"}}}}')
    (document,) = load_documents(Source("tiny.yaml", text))
    kind = kinds.lookup("mindspore.gitee.com/v1", "MSJob")
    assert kind is not None
    made, _ = kind.to_plan(document, Options())
    assert made is not None
    worker = made.role("Worker")
    assert worker is not None
    refused = [d.message for d in devices.check(made) if "whole number of devices" in d.message]
    expected = DEVICE_COUNTS[written]
    assert bool(refused) == (expected is None), refused
    assert devices.role_request(made, worker).count == (expected or 0)
