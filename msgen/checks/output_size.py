"""A bound on the env msgen repeats in every pod, which would otherwise grow as replicas squared.

The older kinds' frameworks list every replica in every pod's env (`MX_CONFIG`,
`CAFFE2_CONFIG`, the 2020 MSJob's `MS_CONFIG`), as their operators did. A target with one
template per role writes that list once per role; a target with one object per pod (`pod`,
or any target for a job whose pods need static values) writes it once per pod: 2,000
replicas of an 886-byte Caffe2Job made 173 MB of YAML in 10-17 s. Kubernetes has no way to
share one value between pods' env (a ConfigMap key could, but then the process's env would
differ from the operator's contract), so the total is bounded instead: at most
MAX_REPEATED_ENV_BYTES of framework env in all, an error at the largest role's `replicas`
beyond it, measured on each role's first pod before the others are built.
"""

from __future__ import annotations

from .. import targets
from ..model.diagnostics import Diagnostic
from ..model.patch import Patch
from ..model.plan import Plan, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The most bytes of framework env values one render may write across all its pods.
MAX_REPEATED_ENV_BYTES = 32 * 2**20


class RepeatedEnv:
    """The framework env a render writes, summed role by role as its first pod is built."""

    def __init__(self, plan: Plan, target: str):
        self.plan = plan
        self.target = target
        self.total = 0
        self.largest: tuple[int, str] = (0, "")

    def add(self, role: Role, framework_patch: Patch, pods: int) -> Diagnostic | None:
        """Count `pods` pods of `role` carrying `framework_patch`'s env; an error past the bound."""
        sizes = [(len(_text(value)), name) for _container, name, value in framework_patch.env]
        per_pod = sum(size for size, _ in sizes)
        self.largest = max([self.largest, *sizes])
        self.total += per_pod * pods
        if self.total <= MAX_REPEATED_ENV_BYTES:
            return None
        biggest = max(self.plan.roles, key=lambda r: r.replicas)
        replicas = sum(r.replicas for r in self.plan.roles)
        return self.plan.document.diagnostic(
            biggest.path + ("replicas",),
            f"{replicas} replicas in all: with target {self.target} every pod carries its own "
            f"{self.largest[1]}, which lists every replica ({self.largest[0]} bytes in "
            f"{role.replica_type} pods), so the output grows as replicas squared and would hold "
            f"more than {MAX_REPEATED_ENV_BYTES // 2**20} MiB of it; accepted: fewer replicas"
            + (
                ""
                if self.plan.static_indexes
                else (
                    ", or a target that writes one pod template per role ("
                    + ", ".join(targets.having(lambda t: not t.facts.bare_pods))
                    + ")"
                )
            ),
        )


def _text(value: Any) -> str:
    text = getattr(value, "value", None)
    return text if isinstance(text, str) else ""
