"""How the processes of a pod start, and the pod settings they need (options-driven).

The core contract (frameworks/) says what each pod's environment is. This stage adds what the
run's options choose on top: who starts one MindSpore process per device (`launcher`), the
Ascend rank table, Ascend pod settings (`/dev/shm`, the chip's node selector), disaster
recovery and timeouts for large clusters. Each part returns `Patch`es; `apply_patches` merges
them with the same conflict rules as the core's env.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..patch import Patch
from ..plan import Options, Plan, PodSlot
from ..targets.addressing import Addressing
from . import ascend, cluster, launcher


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    out = ascend.check(plan, options)
    if plan.framework == "mindspore":
        out += launcher.check(plan, options) + cluster.check(plan, options)
    return out


def contribute(
    plan: Plan, slot: PodSlot, addressing: Addressing, options: Options
) -> list[Patch]:
    patches = ascend.contribute(plan, slot, options)
    if plan.framework == "mindspore" and addressing.distributed:
        patches += launcher.contribute(plan, slot, options)
        patches += cluster.contribute(plan, slot, options)
    return patches


def finish_objects(plan: Plan, options: Options, objects: list[dict[str, Any]]) -> None:
    """What the options add to the rendered workloads themselves (in place)."""
    ascend.mark_rank_table_workload(plan, options, objects)
