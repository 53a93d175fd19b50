"""The block reader gives the documents PyYAML's reading gives, wherever it reads a text at all.

`msgen.yamlio.block_reader` reads the plain block YAML most jobs are written in without
PyYAML; anything else, errors included, goes to `yaml_loader.pyyaml_documents`, the reference.
Held here: every sample is read by the block reader (a render of it loads no PyYAML); on the
samples, golden inputs and overlays, and on line-level mutations of the samples, whatever the
block reader reads is what PyYAML reads: the same data of the same types, the same positions
of every key and value (in the same order), the same documents and `floats`; and what
`iter_documents` gives (either reader) is the reference's, errors and their positions too.
The mutation campaigns count the texts the block reader read and those it left to PyYAML.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from msgen.model.diagnostics import InputError
from msgen.model.source import Document, Source
from msgen.yamlio import block_reader
from msgen.yamlio.yaml_loader import iter_documents, pyyaml_documents

from .conftest import ROOT, sample_files, shared_files
from .verdicts import Verdicts
from .campaign import CAMPAIGN, EXAMPLES

SAMPLES = sample_files()
SEEDS = [*SAMPLES, *sorted((ROOT / "golden").glob("*/input.yaml")), *sorted((ROOT / "overlays").rglob("*.yaml"))]


def typed(value: Any) -> Any:
    """`value` with the type of every part spelt out (1, 1.0 and True are then different)."""
    if isinstance(value, dict):
        return ("map", [(key, typed(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("seq", [typed(item) for item in value])
    return (type(value).__name__, repr(value))


def described(documents: list[Document]) -> list[Any]:
    return [
        (d.index, typed(d.data), list(d.positions.values.items()), list(d.positions.keys.items()), d.floats)
        for d in documents
    ]


def reference(source: Source) -> Any:
    """What PyYAML's reading gives: the documents, or the error's findings."""
    try:
        return described(list(pyyaml_documents(source)))
    except InputError as exc:
        return ("error", [(d.message, d.position) for d in exc.diagnostics])


def through_the_loader(source: Source) -> Any:
    try:
        return described(list(iter_documents(source)))
    except InputError as exc:
        return ("error", [(d.message, d.position) for d in exc.diagnostics])


def judge(name: str, text: str, verdicts: Verdicts) -> None:
    """The block reader reads `text` as PyYAML does, or leaves it to PyYAML; either way the
    loader gives PyYAML's reading."""
    source = Source(name, text)
    read = block_reader.read(source)
    expected = reference(source)
    if verdicts.count(read is not None):
        assert read is not None and described(read) == expected, text
    assert through_the_loader(source) == expected, text


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_every_sample_is_read_by_the_block_reader_as_pyyaml_reads_it(path: Path) -> None:
    source = Source(str(path), path.read_text(encoding="utf-8-sig"))
    read = block_reader.read(source)
    assert read is not None, "the samples are plain block YAML: a render of one needs no PyYAML"
    assert described(read) == reference(source)


def test_the_repositorys_yaml_is_read_alike() -> None:
    verdicts = Verdicts("golden inputs, overlays and samples")
    for path in SEEDS:
        judge(str(path), path.read_text(encoding="utf-8-sig"), verdicts)
    verdicts.require(accepted=0.5)


def test_the_operators_job_files_are_read_alike() -> None:
    files = shared_files("upstream", "**/*.y*ml")
    if not files:
        pytest.skip("../shared/upstream is not here (the operators' job files)")
    verdicts = Verdicts("operators' job files")
    for path in files:
        judge(str(path), path.read_text(encoding="utf-8-sig", errors="replace"), verdicts)
    verdicts.require(accepted=0.2)


#: What a mutation writes in place of a value, a key or a line: plain block YAML and its
#: near misses (indicators, quoting, escapes, flow and block collections, anchors and tags,
#: comments, characters YAML refuses or reads its own way, numbers and words each reader
#: reads its own way).
VALUES = [
    "1", "-1", "+1", "1.5", "1e3", "0o17", "017", "08", "0x1F", "1_000", ".inf", "-.Inf", ".nan",
    "12:30:00", "2024-01-01", "true", "False", "yes", "no", "on", "Off", "y", "~", "null", "",
    '"1"', "'1'", '""', "''", '"a b"', "'it''s'", "'a'' '", '"a\\"b"', '"a\\nb"', '"x" # c', "'x'#c",
    '"open', "'open", '"a" b', "x # comment", "x#y", "a #b: c", "a: b", "a:b", "http://x:80/y",
    "a:", "-", "- x", "--flag=1", "-c", "---", "...", "--- x", "<<", "=", "?x", "? x", ":x", ": x",
    "[]", "[ ]", "{}", "{ }", "[a, b]", '["python", "x.py"]', "['a', 'b''c']", "[1, 2.5, true]",
    "[a, [b]]", "[a,]", "[a", "a]", "[a] x", "[a # c]", "[a:b]", "{a: 1}", "|", "|-", ">", "|\n  x",
    "&a x", "*a", "!!str 1", "!!int x", "!t x", "%x", "@x", "`x", "a,b", "a{b}", "a\tb", "\tx",
    "é", "中文", "😀", "a\u2028b", "a\x85b", "\ufeffx", "a\x07b", "a\x7fb", "x ", "  x", "a  b",
    "$(VAR)", "x" * 1100,
]
KEYS = ["name", "a", "1", "true", "~", '"q k"', "'s k'", '"k"', "<<", "? k", "- k", "k k", "k#x", "k #x",
        "k:x", "é", "x" * 1100, "&a k", "!t k", "[k]", "{k}", '"k" ', "name"]  # fmt: skip
LINES = ["", "# comment", "key: |", "key: |-", "  literal line", "   deeper literal", "key: |+", "- |", "  # comment", "---", "--- # c", "...", "%YAML 1.1", "- x", "-", "key:", "  key: v",
         "key: v", "\tkey: v", "key: &a [1]", "other: *a", "    deeper: x", "  - item", "k: v # c", "k:v",
         "\ufeff", "x\r", "text without colon", "- - x", "-   spaced: item", "  -", "? complex"]  # fmt: skip


def mutate(text: str, choose: Any) -> str:
    """`text` with a few line-level edits."""
    lines = text.split("\n")
    for _ in range(choose(range(1, 4))):
        at = choose(range(len(lines)))
        line = lines[at]
        indent = len(line) - len(line.lstrip(" "))
        body = line[indent:]
        edit = choose(["value", "key", "indent", "insert", "delete", "comment", "copy"])
        if edit == "value" and ": " in body:
            lines[at] = line[: line.index(": ") + 2] + choose(VALUES)
        elif edit == "value" and body.startswith("- "):
            lines[at] = line[: indent + 2] + choose(VALUES)
        elif edit == "key" and ":" in body:
            lines[at] = " " * indent + (body[:2] if body.startswith("- ") else "") + choose(KEYS) + body[body.index(":") :]
        elif edit == "indent":
            lines[at] = " " * max(0, indent + choose([-2, -1, 1, 2])) + body
        elif edit == "insert":
            lines.insert(at, " " * choose([0, indent]) + choose(LINES))
        elif edit == "delete" and len(lines) > 1:
            del lines[at]
        elif edit == "comment":
            lines[at] = line + choose([" # note", "  #", "#x", " # é"])
        elif edit == "copy":
            lines.insert(at, line)
    return "\n".join(lines)


@CAMPAIGN
@given(st.data())
def test_mutated_samples_are_read_alike(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(SAMPLES))
    text = mutate(path.read_text(encoding="utf-8-sig"), lambda options: data.draw(st.sampled_from(list(options))))
    judge(str(path), text, _HYPOTHESIS)


_HYPOTHESIS = Verdicts("mutated samples (hypothesis)")


def test_the_hypothesis_campaign_tried_both_readers() -> None:
    # runs after the campaign above (tests run in file order)
    _HYPOTHESIS.require(accepted=0.2, refused=0.2)


def test_many_seeded_mutations_are_read_alike() -> None:
    rng = random.Random(46)
    verdicts = Verdicts("mutated samples, golden inputs and overlays (seeded)")
    texts = [p.read_text(encoding="utf-8-sig") for p in SEEDS]
    for number in range(max(EXAMPLES * 5, 1500)):
        judge(f"mutation-{number}.yaml", mutate(rng.choice(texts), lambda options: rng.choice(list(options))), verdicts)
    verdicts.require(accepted=0.2, refused=0.25)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n---\nb: [x, 'y']\n",  # two documents
        "---\na: {}\n# trailing comment\n",
        "# only a comment\n---\nk: v\n",
        "a:\n- 1\n- -2\nb:\n  - c: d\n    e:\n  -\n  - # c\n    f: g\n",  # indentless and nested sequences, nulls
        "k: v # c\nq: 'it''s' # c\nd: \"x y\"\nn:\ne: ~\n",
        "é: ü\nk: 中文 # 注释\n",  # non-ASCII: columns count characters, as libyaml's do
        "a:\n  b:\n    c:\n      d: 1.5\n",
        "k: [1, 2.5, true, ~, x y]\n",
        "a: |\n  x\n  # not a comment\n\n    y\nb: |-\n  z\n\n\nc: 1\n",  # literal blocks
        "a:\n- |\n  sh -c 'x'\n- |-\n   y\n  # a comment\nb: 2\n",
        "k: | # a comment\n  x\n",
    ],
)
def test_corner_cases_are_read_by_the_block_reader(text: str) -> None:
    source = Source("case.yaml", text)
    read = block_reader.read(source)
    assert read is not None
    assert described(read) == reference(source)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # a duplicate key: PyYAML's error, at its position
        "a: b: c\n",
        "a: 'open\n",
        "a:\n\t- x\n",
        "a: &x 1\nb: *x\n",
        "a: |+\n  text\n\n",  # a kept block, an indentation indicator, a folded one
        "a: |2\n   text\n",
        "a: >\n  text\n",
        "a: |\n\n  text\n",  # a first line that is empty
        "a: |\n  text",  # the end of the text without a line break
        "a: 1\n---\n",  # an empty document
        "- a\n",  # a root that is a sequence
        "a: \x07\n",
        "a: x\n  y\n",  # a scalar on two lines
    ],
)
def test_what_the_block_reader_leaves_is_pyyamls(text: str) -> None:
    source = Source("case.yaml", text)
    assert block_reader.read(source) is None
    assert through_the_loader(source) == reference(source)


#: Every ASCII character alone, between letters and after a line break, and the non-ASCII
#: characters at the edges of `_OUTSIDE`'s ranges and beside them.
_CHARACTER_CASES = [
    *(text for code in range(128) for text in (chr(code), f"a{chr(code)}b", f"a\n{chr(code)}")),
    *"\x80\x9f\xa0\xe9\u2027\u2028\u2029\u202a\ud7ff\ud800\udfff\ue000\ufefe\ufeff\ufffd\ufffe\uffff\U00010000\u4e2d",
    "", "\n", "\n\n", "a: b\n", "a: é\n",
]


def test_the_ascii_check_finds_what_the_pattern_finds() -> None:
    # `_holds_outside` answers an ASCII text with str's tests, any other with the pattern.
    for text in _CHARACTER_CASES:
        assert block_reader._holds_outside(text) == (re.search(block_reader._OUTSIDE, text) is not None), repr(text)
