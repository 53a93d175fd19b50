"""msgen.devices.ascend: Ascend NPUs, asked for by `huawei.com/Ascend910`-like names or
`huawei.com/npu`; a container sees the NPUs its device plug-in allocated (an annotation)."""

from __future__ import annotations

from typing import Any

import pytest

from msgen import devices
from msgen.devices import ascend
from msgen.model.patch import field_ref


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
