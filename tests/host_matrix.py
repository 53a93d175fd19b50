"""How much of a matrix of real-binary builds a test run covers.

Each row of the kustomize / Argo CD matrices is a real `kustomize build` running msgen in
subprocesses (seconds each), and the suite runs on every Python msgen claims. By default a
matrix keeps every value of its leading dimensions and takes the values of the trailing ones
in turn, so every value of every dimension is built at least once (every target, every host,
both address modes) without building every combination; `MSGEN_FULL_MATRIX=1` builds them all.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from typing import Any

FULL = os.environ.get("MSGEN_FULL_MATRIX") == "1"


def in_turn(kept: Sequence[Sequence[Any]], turned: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Rows of the product of `kept` (every combination) and `turned`: with FULL, every
    combination of `turned` per kept row too; by default, one combination of `turned` per kept
    row, taken in turn from their product, so each value of a turned dimension appears once
    there are at least as many kept rows as it has values."""
    turns = list(itertools.product(*turned))
    rows = []
    for i, head in enumerate(itertools.product(*kept)):
        if FULL:
            rows += [head + tail for tail in turns]
        else:
            rows.append(head + turns[i % len(turns)])
    return rows
