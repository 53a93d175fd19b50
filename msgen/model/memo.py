"""Bounded memos, owned by whoever compiles: nothing msgen remembers lives for the process.

Compiling many jobs repeats work whose answer depends on its input alone: how YAML resolves
a short scalar, whether a pod template already checked is valid, how the emitter writes a
scalar. A memo keeps those answers for one compile session (a `driver.Driver`, or one output
stream), so a library user who compiles in a long-lived process holds nothing after the call,
and a session of any length holds at most `bound` answers per memo: a full memo is emptied,
not grown.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar
else:
    from .type_forms import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(dict[K, V]):
    """A dict of answers with a name (what it remembers) and a bound (how many at most).

    Read it as a dict (`get`, `in`: the lookups stay the dict's own, on hot paths); add to it
    with `remember`, which empties it first when it is full.
    """

    __slots__ = ("name", "bound")

    def __init__(self, name: str, bound: int):
        super().__init__()
        self.name = name
        self.bound = bound

    def remember(self, key: K, value: V) -> V:
        if len(self) >= self.bound:
            self.clear()
        self[key] = value
        return value

    def __repr__(self) -> str:
        return f"Memo({self.name!r}, {len(self)}/{self.bound})"


class CompileMemos:
    """What one compile session remembers between its documents (see `driver.Driver`)."""

    __slots__ = ("yaml_tags", "valid_templates")

    def __init__(self) -> None:
        #: (text, (plain, quoted) implicit flags) -> the tag PyYAML's resolver gives a short
        #: scalar: job files repeat the same keys and values (see `yaml_loader`)
        self.yaml_tags: Memo[tuple[str, tuple[bool, bool]], str] = Memo(
            "YAML tags of short scalars", 20_000
        )
        #: (Kubernetes version, target, the template as sorted JSON) of pod templates found
        #: valid: a stream of jobs made from one template checks it once (see `pipeline`)
        self.valid_templates: Memo[tuple[tuple[int, int], str, str], bool] = Memo(
            "pod templates found valid", 1_000
        )
