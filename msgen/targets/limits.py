"""How many replicas of one role each target can carry.

Replica counts become int32 fields (Job `completions` and `parallelism`, StatefulSet and
JobSet `replicas`, Volcano `minAvailable`), and the API server refuses some values well below
2^31: an Indexed Job's `parallelism` may be at most 100,000. A count above the limit is an error
at the role's `replicas`, not an object the cluster rejects (or a render that never ends).
"""

from __future__ import annotations

from ..diagnostics import Diagnostic
from ..plan import Plan

#: The API server's own limit on an Indexed Job's parallelism (and its completions).
INDEXED_JOB_LIMIT = 100_000

#: Per target, the most replicas one role may have, and why. Kubernetes supports clusters of
#: at most 150,000 pods, so no target goes beyond the Indexed Job's limit. Target `pod` writes
#: one object per pod and checks its own limit, 10,000 pods in all (`pod.MAX_PODS`).
MAX_REPLICAS = {
    "indexed-job": (INDEXED_JOB_LIMIT, "a role is an Indexed Job, whose parallelism the API "
                    "server limits"),
    "jobset": (INDEXED_JOB_LIMIT, "each replicated Job is an Indexed Job, whose parallelism "
               "the API server limits"),
    "statefulset": (INDEXED_JOB_LIMIT, "more would be most of the 150000 pods a Kubernetes "
                    "cluster supports"),
    "volcano": (INDEXED_JOB_LIMIT, "more would be most of the 150000 pods a Kubernetes "
                "cluster supports"),
}  # fmt: skip


def replica_problems(plan: Plan, target: str) -> list[Diagnostic]:
    """Each role with more replicas than `target` can carry, at its `replicas`."""
    if target not in MAX_REPLICAS:
        return []
    limit, why = MAX_REPLICAS[target]
    return [
        plan.document.diagnostic(
            role.path + ("replicas",),
            f"{role.replicas} replicas of {role.replica_type} are too many for target "
            f"{target} ({why}); accepted: at most {limit}",
        )
        for role in plan.roles
        if role.replicas > limit
    ]
