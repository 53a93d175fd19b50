"""How MindSpore's processes start in a distributed job: the launcher, cluster tuning, and
resolving the scheduler's name (`launcher`, `cluster`, `resolve`), in that order."""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.patch import Patch
from ..model.plan import Options, Plan, PodSlot
from . import cluster, launcher, resolve


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    out = launcher.check(plan, options) + cluster.check(plan, options)
    return out + resolve.check(plan, options, launcher.wrapped_role(plan, options))


def contribute(plan: Plan, slot: PodSlot, addressing: Addresses, options: Options) -> list[Patch]:
    if not addressing.distributed:
        return []
    patches = launcher.contribute(plan, slot, options) + cluster.contribute(plan, slot, options)
    # Last: the resolver wraps whatever the launcher made the command.
    return patches + resolve.contribute(plan, slot, options)


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from ..model.extension_points import Addresses, ChecksJob, StartsProcesses
    from . import mindspore as _this

    _STARTS: StartsProcesses = _this
    _CHECKS: ChecksJob = _this
