"""How many replicas of one role a target can carry (each target's `Facts.max_replicas`).

Replica counts become int32 fields (Job `completions` and `parallelism`, StatefulSet and
JobSet `replicas`, Volcano `minAvailable`), and the API server refuses some values well below
2^31: an Indexed Job's `parallelism` may be at most 100,000. A count above the limit is an error
at the role's `replicas`, not an object the cluster rejects (or a render that never ends).
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.plan import Plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..model.extension_points import Target

#: The API server's own limit on an Indexed Job's parallelism (and its completions).
#: Kubernetes supports clusters of at most 150,000 pods, so no target goes beyond it.
INDEXED_JOB_LIMIT = 100_000
#: Why targets other than Jobs stop at the same number.
MOST_OF_A_CLUSTER = "more would be most of the 150000 pods a Kubernetes cluster supports"


def replica_problems(plan: Plan, target: Target) -> list[Diagnostic]:
    """Each role with more replicas than `target` can carry, at its `replicas`."""
    if target.facts.max_replicas is None:
        return []
    limit, why = target.facts.max_replicas
    return [
        plan.document.diagnostic(
            role.path + ("replicas",),
            f"{role.replicas} replicas of {role.replica_type} are too many for target "
            f"{target.name} ({why}); accepted: at most {limit}",
        )
        for role in plan.roles
        if role.replicas > limit
    ]
