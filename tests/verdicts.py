"""How many of a property campaign's inputs msgen accepted, and how many it refused.

A property such as "an accepted job renders valid objects" holds trivially when every
generated input is refused: such a campaign tests the refusals alone and passes however
broken the rest is. So each campaign counts its verdicts and requires a share of accepted
inputs (and, where its point is the refusals, of refused ones) of those it saw; the counts
are printed (`pytest -s` shows them), so a generator that drifted towards one side is seen.
"""

from __future__ import annotations


class Verdicts:
    """The verdicts of one campaign's inputs."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.accepted = 0
        self.refused = 0

    def count(self, accepted: bool) -> bool:
        """Count one input's verdict; `accepted` back, for `if verdicts.count(...)`."""
        if accepted:
            self.accepted += 1
        else:
            self.refused += 1
        return accepted

    def require(self, *, accepted: float = 0.0, refused: float = 0.0) -> None:
        """At least these shares of the inputs seen were accepted and refused (each at least
        one input where its share is not 0)."""
        seen = self.accepted + self.refused
        print(f"{self.name}: {self.accepted} accepted, {self.refused} refused")
        assert seen, f"{self.name}: no input was tried"
        for verdict, share, count in (("accepted", accepted, self.accepted), ("refused", refused, self.refused)):
            wanted = max(1, int(share * seen)) if share else 0
            assert count >= wanted, (
                f"{self.name}: {count} of {seen} inputs {verdict}, fewer than {wanted} "
                f"({share:.0%}): the campaign no longer tests what it is named after"
            )
