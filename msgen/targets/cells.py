"""A target's cell for one MSJob policy: how (or whether) the target expresses it; the
short forms its module writes its `support` with (`Cell` itself is a declared value,
`msgen.model.target_facts`)."""

from ..model.target_facts import Cell as Cell
from ..model.target_facts import Support as Support

N = Cell("native")


def na(instead: str) -> Cell:
    return Cell("no", instead=instead)


def partly(instead: str) -> Cell:
    return Cell("partly", instead=instead)


def apply(instead: str) -> Cell:
    return Cell("apply", instead=instead)
