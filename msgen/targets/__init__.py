"""Targets: the Kubernetes workload shape a job is rendered as, chosen by `--target`.

A target decides names and addressing (`naming`), which pod templates exist (`slots`: one per
role for controllers that stamp pods from a template, one per replica for bare pods) and
builds the objects (`render`), and checks that every name it made, pod host names included,
is one Kubernetes accepts (`check_names`). Nothing else in msgen formats a target's names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic
    from ..plan import Options, Plan, PodSlot
    from .addressing import Addressing, Naming


class Target(Protocol):
    name: str
    summary: str

    def naming(self, plan: Plan, options: Options) -> Naming: ...

    def slots(self, plan: Plan) -> list[PodSlot]: ...

    def render(
        self,
        plan: Plan,
        pods: list[tuple[PodSlot, dict[str, Any]]],
        addressing: Addressing,
        options: Options,
    ) -> tuple[list[dict[str, Any]], list[Diagnostic]]: ...

    def check_names(self, plan: Plan, objects: list[dict[str, Any]]) -> list[Diagnostic]:
        """Errors for names in `objects` (the job's whole output) and the pod host names the
        target's controllers derive from them that are not DNS-1035 labels."""
        ...


_REGISTRY = {
    "indexed-job": "msgen.targets.indexed_job",
    "pod": "msgen.targets.pod",
    "statefulset": "msgen.targets.statefulset",
    "jobset": "msgen.targets.jobset",
    "volcano": "msgen.targets.volcano",
}
NAMES = tuple(_REGISTRY)


def lookup(name: str) -> Target:
    target: Target = importlib.import_module(_REGISTRY[name]).TARGET
    return target
