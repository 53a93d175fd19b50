"""A target's cell for one MSJob policy: how (or whether) the target expresses it.

Kept apart from `support` (the rows, the warnings, the table), which asks the target
registry for every target's cells: the registry's `Target` protocol names `Cell` too, and
a module of its own keeps the two from importing each other.
"""

# No `from __future__ import annotations`: it slows building NamedTuples (see msgen.model.plan).
from typing import Literal, NamedTuple

Support = Literal["native", "partly", "apply", "no"]


class Cell(NamedTuple):
    support: Support
    #: The Kubernetes feature gate (versions.GATES) the native form needs.
    gate: str | None = None
    #: What happens instead, where the target does not express the policy.
    instead: str = ""
    #: A native form that still differs from the operator's in some cases: what happens
    #: then (the cell reads "partly", with the version its gate needs).
    partly: str = ""
    #: `apply` cells that only `msgen controller` carries out (`msgen apply --wait` ends
    #: with the job, before the policy is due).
    controller_only: bool = False


N = Cell("native")


def na(instead: str) -> Cell:
    return Cell("no", instead=instead)


def partly(instead: str) -> Cell:
    return Cell("partly", instead=instead)


def apply(instead: str) -> Cell:
    return Cell("apply", instead=instead)
