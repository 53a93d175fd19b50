"""The README and the docs/ pages point at each other, and at headings, that exist.

The README names the reference pages as plain paths (`docs/targets.md`: a relative link
would break on a package index page, see tests/test_package_contents.py) and links only its
own headings, from its contents list; the pages link each other relatively, since they are
read in the source tree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_readmes_own_anchors_name_its_headings() -> None:
    links = re.findall(r"\]\(#([^)]+)\)", README.read_text(encoding="utf-8"))
    assert len(links) >= 5, "the contents list links the README's sections"
    missing = [link for link in links if link not in anchors(README)]
    assert missing == [], f"README links to no heading: {missing}"


def test_the_readme_names_every_docs_page_and_only_pages_that_exist() -> None:
    named = set(re.findall(r"`docs/([\w-]+\.md)`", README.read_text(encoding="utf-8")))
    assert named == {page.name for page in PAGES}, (
        f"named but missing: {sorted(named - {p.name for p in PAGES})}; "
        f"pages the README does not name: {sorted({p.name for p in PAGES} - named)}"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_pages_links_reach_a_file_and_heading(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\((?!https?://)([^)\s]+)\)", text):
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.is_file():
            broken.append(f"{target} (no file)")
        elif anchor and anchor not in anchors(path):
            broken.append(f"{target} (no heading)")
    assert broken == [], f"{page.name}: {broken}"
