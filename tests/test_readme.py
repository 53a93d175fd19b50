"""The README's generated blocks equal what the code says (`--update-golden` rewrites them)."""

from __future__ import annotations

import re

import pytest

from msgen.reference import BLOCKS

from .conftest import ROOT

README = ROOT / "README.md"


def block(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- msgen:{re.escape(name)} -->\n)(.*?)(<!-- /msgen:{re.escape(name)} -->)", re.S)


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_readme_block_matches_the_code(name: str, update_golden: bool) -> None:
    text = README.read_text()
    found = block(name).search(text)
    assert found is not None, f"README.md has no <!-- msgen:{name} --> block"
    expected = BLOCKS[name]() + "\n"
    if update_golden:
        README.write_text(text[: found.start(2)] + expected + text[found.end(2) :])
        return
    assert found.group(2) == expected, f"README.md block {name} is stale; run pytest --update-golden"
