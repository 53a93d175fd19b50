"""Whether a target can carry a job's per-pod values, asked of the target rather than named.

A plan whose pods need values computed from a static index (`Plan.static_indexes`) needs a
target that renders a workload per pod (`Facts.static_indexes`); a framework that needs each
pod's index needs a target that can tell it (a static index, or one read at run time). The
refusal lists the targets that can, in registry order.
"""

from __future__ import annotations

from ..model import versions
from ..model.plan import Options, Plan, PodSlot
from ..model.addresses import Naming
from . import NAMES, having, lookup

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..model.extension_points import Target


def unsupported(
    plan: Plan,
    options: Options,
    target: Target,
    naming: Naming,
    slots: list[PodSlot],
    needs_index: bool,
) -> str | None:
    """Why `target` cannot carry this job's per-pod values, or None when it can."""
    if plan.static_indexes and not target.facts.static_indexes:
        accepted = having(lambda t: t.facts.static_indexes)
        return (
            f"{plan.kind} gives each pod values computed from its index (such as a rank "
            f"counted across roles), which target {target.name} cannot render; "
            f"accepted: --target {_either(accepted)}"
        )
    if needs_index and not _tells_index(naming, slots):
        accepted = having(lambda t: _tells_index(t.naming(plan, options), t.slots(plan)))
        later = ", ".join(
            f"{name} can from Kubernetes {versions.show(since)}"
            for name, since in _later(plan, options, [n for n in NAMES if n not in accepted])
        )
        return (
            f"target {target.name} cannot tell a pod its index at Kubernetes "
            f"{versions.show(options.kube_version)}" + (f" ({later})" if later else "")
            + f"; accepted: --target {_either(accepted)}"
        )
    return None


def _later(plan: Plan, options: Options, names: list[str]) -> list[tuple[str, tuple[int, int]]]:
    """The targets of `names` that can tell a pod its index on a newer Kubernetes, and from
    which version."""
    out = []
    for name in names:
        target = lookup(name)
        for minor in range(options.kube_version[1] + 1, versions.NEWEST[1] + 1):
            newer = options._replace(kube_version=(options.kube_version[0], minor))
            if _tells_index(target.naming(plan, newer), target.slots(plan)):
                out.append((name, newer.kube_version))
                break
    return out


def _tells_index(naming: Naming, slots: list[PodSlot]) -> bool:
    """Whether every pod learns its index: from its own template, or at run time."""
    return naming.dynamic_index is not None or all(slot.index is not None for slot in slots)


def _either(names: list[str]) -> str:
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
