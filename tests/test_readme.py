"""The README's generated blocks equal what the code says (`python -m tests.generators.reference --write`
rewrites them; `pytest --update-golden` does not: it rewrites golden/ and schemas/ only)."""

from __future__ import annotations

import pytest

from .generators import reference
from .generators.reference import BLOCKS, block

from .conftest import ROOT

README = ROOT / "README.md"


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_readme_block_matches_the_code(name: str) -> None:
    text = README.read_text()
    found = block(name).search(text)
    assert found is not None, f"README.md has no <!-- msgen:{name} --> block"
    expected = BLOCKS[name]() + "\n"
    assert found.group(2) == expected, (
        f"README.md block {name} is stale; run python -m tests.generators.reference --write"
    )


def test_the_generator_rewrites_a_stale_block_and_nothing_else() -> None:
    text = README.read_text()
    stale = text.replace("| `--gitops` |", "| `--gitops-by-hand` |")
    assert stale != text
    assert reference.with_blocks(stale) == text
    assert reference.with_blocks(text) == text
