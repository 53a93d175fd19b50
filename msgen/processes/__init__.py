"""How the processes of a pod start, and the pod settings they need (options-driven).

The core contract (frameworks/) says what each pod's environment is. This stage adds what the
run's options choose on top: who starts one MindSpore process per device (`launcher`), the
Ascend rank table, Ascend pod settings (`/dev/shm`, the chip's node selector), disaster
recovery and timeouts for large clusters, and resolving the scheduler's name in `dns` mode. Each part returns `Patch`es; `apply_patches` merges
them with the same conflict rules as the core's env.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..patch import Patch
from ..plan import Options, Plan, PodSlot
from ..targets.addressing import Addressing
from .. import devices
from . import cluster, launcher, resolve


def _ascend_work(plan: Plan, options: Options) -> bool:
    """Whether `msgen.processes.ascend` has work (an Ascend role, or an Ascend option given);
    other jobs do not load it (nor `msgen.devices.ascend`)."""
    return (
        options.rank_table != "none"
        or options.accelerator_type is not None
        or options.shm_size is not None
        or any(devices.role_request(plan, r).kind == "ascend" for r in plan.roles)
    )


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if _ascend_work(plan, options):
        from . import ascend

        out = ascend.check(plan, options)
    if plan.framework == "mindspore":
        out += launcher.check(plan, options) + cluster.check(plan, options)
        out += resolve.check(plan, options, launcher.wrapped_role(plan, options))
    return out


def contribute(
    plan: Plan, slot: PodSlot, addressing: Addressing, options: Options
) -> list[Patch]:
    patches: list[Patch] = []
    if _ascend_work(plan, options):
        from . import ascend

        patches = ascend.contribute(plan, slot, options)
    if plan.framework == "mindspore" and addressing.distributed:
        patches += launcher.contribute(plan, slot, options)
        patches += cluster.contribute(plan, slot, options)
        # Last: the resolver wraps whatever the launcher made the command.
        patches += resolve.contribute(plan, slot, options)
    return patches


def finish_objects(plan: Plan, options: Options, objects: list[dict[str, Any]]) -> None:
    """What the options add to the rendered workloads themselves (in place)."""
    if _ascend_work(plan, options):
        from . import ascend

        ascend.mark_rank_table_workload(plan, options, objects)
