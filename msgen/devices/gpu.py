"""NVIDIA GPUs (`nvidia.com/gpu`).

MindSpore picks GPUs from what the container runtime exposes, so a GPU pod needs no extra
environment. A container that asks for no GPU, in a job that uses GPUs, gets
`NVIDIA_VISIBLE_DEVICES` blanked: on nodes whose default runtime is NVIDIA's it would otherwise
see every GPU of the node (kubeflow's MPI launcher does the same).
"""

from __future__ import annotations

from ..patch import Patch, literal

RESOURCE = "nvidia.com/gpu"
VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"


def hide_gpus(container_names: list[str]) -> Patch:
    return Patch(
        contributor="GPU isolation",
        env=tuple((name, VISIBLE_DEVICES, literal("")) for name in container_names),
    )
