"""Targets: the Kubernetes workload shape a job is rendered as, chosen by `--target`.

A target decides names and addressing (`naming`), which pod templates exist (`slots`: one per
role for controllers that stamp pods from a template, one per replica for bare pods) and
builds the objects (`render`), and checks that every name it made, pod host names included,
is one Kubernetes accepts (`check_names`). Nothing else in msgen formats a target's names.

What is true of a target (how many replicas it carries, whether its pods sit in a custom
resource, which MSJob policies it expresses, what the reconciler must do for it) is declared
on the target itself, in its `facts` and `support` (`msgen.model.target_facts`); the rest of
msgen asks the target rather than comparing target names. Adding a target is one module in
this package, named in `_REGISTRY`, whose `TARGET` implements `Target`
(`msgen.model.extension_points`, where every extension point is named; tests/test_target_plugins.py
checks its facts against what it renders).
"""

from __future__ import annotations

import sys

from ..model.target_facts import (
    INDEXED_POD as INDEXED_POD,
    ORDINAL as ORDINAL,
    RENDERED as RENDERED,
    REPLICATED_JOB as REPLICATED_JOB,
    SAME_NAME as SAME_NAME,
    TASK_INDEX as TASK_INDEX,
    Facts as Facts,
    Link as Link,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable
    from ..model.extension_points import Target


#: `--target` name → module; the order is the order help, tables and tests list targets in.
_REGISTRY = {
    "indexed-job": "msgen.targets.indexed_job",
    "pod": "msgen.targets.pod",
    "statefulset": "msgen.targets.statefulset",
    "jobset": "msgen.targets.jobset",
    "volcano": "msgen.targets.volcano",
    "trainjob": "msgen.targets.trainjob",
}
NAMES = tuple(_REGISTRY)


def lookup(name: str) -> Target:
    __import__(_REGISTRY[name])  # import_module without loading importlib's package
    target: Target = sys.modules[_REGISTRY[name]].TARGET
    return target


def facts_of(name: str) -> Facts:
    """What is true of the target `name`; nothing for a name this msgen does not know (a
    policy read back from the cluster may have been written by another release)."""
    return lookup(name).facts if name in _REGISTRY else Facts()


def having(fact: Callable[[Target], bool]) -> list[str]:
    """The names of the targets of which `fact` is true, in registry order (for messages
    that list the accepted targets; this imports every target)."""
    return [name for name in NAMES if fact(lookup(name))]
