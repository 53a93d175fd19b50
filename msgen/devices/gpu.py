"""NVIDIA GPUs (`nvidia.com/gpu`).

MindSpore picks GPUs from what the container runtime exposes, so a GPU pod needs no extra
environment. A container that asks for no GPU, in a job that uses GPUs, gets
`NVIDIA_VISIBLE_DEVICES` blanked: on nodes whose default runtime is NVIDIA's it would otherwise
see every GPU of the node (kubeflow's MPI launcher does the same).
"""

from __future__ import annotations

from ..model.patch import Patch, literal
from ..model.plan import Plan, Role
from . import container_request

VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"


def contribute(plan: Plan, role: Role) -> list[Patch]:
    """In a job that uses GPUs: GPUs hidden from the containers of `role` that ask for none."""
    return [hide_gpus([c["name"] for c in role.containers() if container_request(c).kind != "gpu"])]


def hide_gpus(container_names: list[str]) -> Patch:
    return Patch(
        contributor="GPU isolation",
        env=tuple((name, VISIBLE_DEVICES, literal("")) for name in container_names),
    )


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from ..model.extension_points import Device
    from . import gpu as _this

    _DEVICE: Device = _this
