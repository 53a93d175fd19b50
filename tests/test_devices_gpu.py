"""msgen.devices.gpu: NVIDIA GPUs, asked for by `nvidia.com/gpu`; containers that ask for none
are kept from seeing the node's GPUs."""

from __future__ import annotations

import pytest

from msgen import devices
from msgen.devices import gpu
from msgen.model.patch import literal
from .plugin_plans import scheduler_and_worker
from .test_device_plugins import GPU_JOB


@pytest.mark.parametrize(
    "resource, kind", [("nvidia.com/gpu", "gpu"), ("cpu", None), ("example.com/gpu", None)]
)
def test_the_resources_that_ask_for_a_gpu(resource: str, kind: str | None) -> None:
    assert devices.device_kind(resource) == kind


def test_it_is_the_registered_gpu_device() -> None:
    assert devices.lookup("gpu") is gpu


@pytest.mark.parametrize("names", [[], ["sidecar"], ["a", "b"]])
def test_each_named_container_gets_an_empty_visible_devices(names: list[str]) -> None:
    assert gpu.hide_gpus(names).env == tuple((n, gpu.VISIBLE_DEVICES, literal("")) for n in names)


def test_gpu_hides_gpus_from_containers_that_ask_for_none() -> None:
    made, scheduler, worker = scheduler_and_worker(GPU_JOB)
    (hidden,) = gpu.contribute(made, scheduler)
    assert hidden.env == (("mindspore", gpu.VISIBLE_DEVICES, literal("")),)
    (nothing,) = gpu.contribute(made, worker)
    assert nothing.env == ()
