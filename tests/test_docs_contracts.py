"""docs/contracts.md against the code that cites it.

The code cites the contracts page as "contracts §N" (or "§N-M", "§N, §M"). Each cited section
must exist and keep its topic, so renumbering the page cannot silently re-point a citation;
and the page's version-gate table must equal `msgen.model.versions.GATES`, the one table the
code reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from msgen.model import versions

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = ROOT / "docs" / "contracts.md"

#: What each section is about: a word its heading must keep.
TOPICS = {
    1: "MSJob",
    2: "MindSpore",
    3: "Ascend",
    4: "GPU",
    5: "MXNet",
    6: "Caffe2Job",
    7: "2020 MSJob",
    8: "Kubernetes",
}

_HEADING = re.compile(r"^## (\d+)\. (.+)$", re.MULTILINE)
_CITATION = re.compile(r"contracts(?:\.md)?\s+(§\d+(?:\s*(?:-|–|,\s*§)\s*\d+)*)")


def _sections() -> dict[int, str]:
    return {int(n): title for n, title in _HEADING.findall(CONTRACTS.read_text(encoding="utf-8"))}


def _cited() -> dict[int, list[str]]:
    """Section number → where it is cited (`path:line`)."""
    cited: dict[int, list[str]] = {}
    for folder in ("msgen", "tests"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".sh") or not path.is_file():
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for match in _CITATION.finditer(line):
                    for part in _numbers(match.group(1)):
                        cited.setdefault(part, []).append(f"{path.relative_to(ROOT)}:{number}")
    return cited


def _numbers(text: str) -> list[int]:
    """`§1-2` → [1, 2]; `§1, §8` → [1, 8]; `§2-4` → [2, 3, 4]."""
    out: list[int] = []
    for part in re.split(r",\s*", text):
        bounds = [int(n) for n in re.findall(r"\d+", part)]
        out += range(bounds[0], bounds[-1] + 1)
    return out


def test_the_sections_keep_their_numbers_and_topics() -> None:
    sections = _sections()
    assert sorted(sections) == sorted(TOPICS), f"docs/contracts.md sections: {sections}"
    for number, word in TOPICS.items():
        assert word in sections[number], f"§{number} is {sections[number]!r}, expected {word!r}"


def test_every_cited_section_exists() -> None:
    cited = _cited()
    assert cited, "no 'contracts §N' citation found: the pattern no longer matches the code"
    sections = _sections()
    missing = {n: where for n, where in cited.items() if n not in sections}
    assert not missing, f"cited sections missing from docs/contracts.md: {missing}"


@pytest.mark.parametrize(
    "text,numbers",
    [("§8", [8]), ("§1-2", [1, 2]), ("§2-4", [2, 3, 4]), ("§1, §8", [1, 8]), ("§5-7", [5, 6, 7])],
)
def test_citation_forms(text: str, numbers: list[int]) -> None:
    match = _CITATION.search(f"(contracts {text}).")
    assert match is not None and _numbers(match.group(1)) == numbers


def _gate_rows() -> dict[str, tuple[str, str, str]]:
    """The §8 table's rows: gate name → (alpha, beta, GA) cells."""
    text = CONTRACTS.read_text(encoding="utf-8")
    section = text[text.index("## 8. ") :]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        gate = re.fullmatch(r"`(\w+)`", cells[1]) if len(cells) == 5 else None
        if gate:
            rows[gate.group(1)] = (cells[2], cells[3], cells[4])
    return rows


def _cell(version: tuple[int, int] | None, cell: str) -> bool:
    """A gate version equals its cell; `None` (not recorded) stands for a stage msgen never
    meets: none at all, or one before the oldest version msgen supports."""
    if version is None:
        return cell in ("", "—") or tuple(int(n) for n in cell.split(".")) < versions.OLDEST
    return cell in (versions.show(version), f"{versions.show(version)}, off by default")


def test_the_betas_that_are_off_by_default_say_so() -> None:
    rows = _gate_rows()
    off = {gate for gate, (_, beta, _) in rows.items() if beta.endswith(", off by default")}
    assert off == set(versions.OFF_BY_DEFAULT)


def test_the_version_gate_table_equals_the_code() -> None:
    rows = _gate_rows()
    assert set(rows) == set(versions.GATES), f"gates in docs/contracts.md §8: {sorted(rows)}"
    for gate, stages in versions.GATES.items():
        for stage, version, cell in zip(("alpha", "beta", "GA"), stages, rows[gate], strict=True):
            assert _cell(version, cell), f"{gate} {stage}: GATES {version}, docs/contracts.md {cell!r}"


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_links_point_at_headings_that_exist() -> None:
    text = CONTRACTS.read_text(encoding="utf-8")
    links = re.findall(r"\]\(((?:\.\./README\.md|[\w-]+\.md)?)#([^)]+)\)", text)
    assert links
    pages = {page for page, _ in links if page}
    assert pages, "no link to another page: the pattern no longer matches them"
    anchors = {"": _anchors(text)}
    for page in pages:
        path = CONTRACTS.parent / page
        anchors[page] = _anchors(path.read_text(encoding="utf-8")) if path.is_file() else set()
    broken = [f"{page}#{anchor}" for page, anchor in links if anchor not in anchors[page]]
    assert not broken, f"links in docs/contracts.md to no heading: {broken}"
