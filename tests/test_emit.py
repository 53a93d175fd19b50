"""msgen's own YAML writer gives PyYAML's bytes: on every golden file and on generated data.

`to_yaml` lays out mappings and sequences itself and asks PyYAML only how to write each scalar;
these tests hold it to `pyyaml_dump` (PyYAML with libyaml, what msgen wrote before), and hold the
same writer on PyYAML's pure-Python emitter (what runs where libyaml is missing) to the same
bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from msgen.yamlio import emit, yaml_dumper

from .golden_cases import EXPECTED, discover
from .campaign import CAMPAIGN

PURE = yaml_dumper.make_dumper(yaml.SafeDumper)
LIBYAML = yaml_dumper.make_dumper(yaml.CSafeDumper) if yaml.__with_libyaml__ else None
needs_libyaml = pytest.mark.skipif(LIBYAML is None, reason="PyYAML is built without libyaml here")


GOLDEN_FILES = [case.folder / EXPECTED for case in discover() if (case.folder / EXPECTED).is_file()]


def _reference(objects: list[Any]) -> str:
    """What msgen wrote before it had its own writer: PyYAML with libyaml."""
    return yaml_dumper.pyyaml_dump(objects, LIBYAML)


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=[p.parent.name for p in GOLDEN_FILES])
def test_golden_files_are_written_back_byte_for_byte(path: Path) -> None:
    text = path.read_text()
    objects = [o for o in yaml.safe_load_all(text) if o is not None]
    assert emit.to_yaml(objects) == text
    assert emit.to_yaml(objects, PURE) == text  # without libyaml, the same bytes


# Text that exercises PyYAML's quoting rules: indicators, YAML 1.1 booleans and numbers,
# leading and trailing spaces and line breaks, tabs, control and non-ASCII characters.
_PIECES = st.sampled_from(
    [
        "a", "Z", "0", "1.5", "-", "- ", ":", ": ", " #", "#", "'", '"', "\\", "&x", "*x", "!t",
        "%", "@", "`", "|", ">", "?", "[", "]", "{", "}", ",", "~", "null", "yes", "No", "on",
        "0x1F", "1e3", ".inf", "2024-01-01", " ", "  ", "\t", "\n", "\n\n", "\r", "\x85",
        "\u2028", "\ufeff", "\x07", "é", "中", "😀", "$(VAR)", "---", "...", "=",
    ]
)
_TEXT = st.one_of(st.lists(_PIECES, max_size=6).map("".join), st.text(max_size=12))
_KEYS = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\x85\u2028\u2029"),
    max_size=10,
)
_SCALARS = st.one_of(
    _TEXT,
    st.integers(-(10**20), 10**20),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
)
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(st.integers(-5, 300), min_size=1, max_size=4),
        st.dictionaries(_KEYS, inner, max_size=4),
    ),
    max_leaves=25,
)
_DOCUMENTS = st.lists(st.dictionaries(_KEYS, _DATA, min_size=1, max_size=4), min_size=1, max_size=3)
# Any root, not only the mappings msgen emits: lists, scalars and empty collections go
# through PyYAML, and a later document's start line depends on its root.
_ANY_DOCUMENTS = st.lists(st.one_of(_DATA, st.dictionaries(_KEYS, _DATA, max_size=4)), min_size=1, max_size=3)


@needs_libyaml
@CAMPAIGN
@given(_ANY_DOCUMENTS)
def test_generated_objects_are_written_as_libyaml_writes_them(documents: list[Any]) -> None:
    assert emit.to_yaml(documents, LIBYAML) == _reference(documents)


@needs_libyaml
@CAMPAIGN
@given(_DOCUMENTS)
def test_without_libyaml_the_bytes_are_the_same(documents: list[Any]) -> None:
    assert emit.to_yaml(documents, PURE) == _reference(documents)


@needs_libyaml
@pytest.mark.parametrize(
    "documents",
    [
        [{"a": "x\ny\n\n"}, {"b": 1}],  # a literal keeping its breaks, then another document
        [{"b": 1}, {"a": "x\ny\n\n", "c": 1}],  # ... in the last document: libyaml ends with ...
        [{"a": ["x\ny\n\n"]}],
        [{"a": " x\ny\n"}],  # a block needing an indentation indicator
        [{"a": [{"b": ["c\nd", [1, 2], [], {}]}], "e": [["f", "g\nh"]]}],
        [{"a\u2028b": "\U0001f600 and \x85"}],
        [{"k": "x" * 20_000}],  # long enough to reach PyYAML's folding: PyYAML writes it
        [{"k" * 200: 1}],  # a key too long to be simple: PyYAML writes it
    ],
)
def test_corner_cases(documents: list[Any]) -> None:
    assert emit.to_yaml(documents) == _reference(documents)
    assert emit.to_yaml(documents, PURE) == _reference(documents)


def test_a_container_met_twice_keeps_pyyaml_anchors() -> None:
    shared = {"name": "x"}
    documents = [{"a": shared, "b": shared}]
    assert "&id001" in emit.to_yaml(documents)
    assert emit.to_yaml(documents) == yaml_dumper.pyyaml_dump(documents)


def test_a_type_pyyaml_refuses_is_still_refused() -> None:
    with pytest.raises(yaml.representer.RepresenterError):
        emit.to_yaml([{"a": object()}])


@pytest.mark.parametrize(
    "word",
    [
        "on", "On", "oN", "ON", "off", "Off1", "yes", "Yes", "y", "Y", "n", "N", "No", "NO",
        "no.", "true", "TRUE", "tRue", "True_", "false", "Null", "nULL", "null", "e1", "E1",
        "inf", "nan", "x1e3", "a.b/c-d_e", "x" * 201, "image:tag", "a-", "a/", "a.",
        "a:", "a::b", "a:b:", "http://x:80/y", "a:-", "a:.", "x" * 127, "x" * 128, "y" * 129,
    ],
)
def test_words_written_plain_without_asking_pyyaml(word: str) -> None:
    documents = [{"k": word, "l": [word], word: 1}]
    assert emit.to_yaml(documents) == yaml_dumper.pyyaml_dump(documents)
    assert emit.to_yaml(documents, PURE) == yaml_dumper.pyyaml_dump(documents)


# Words made of the characters the plain fast path takes, and of its neighbours (`:` at the end,
# `#`, a space, digits first): each written as key, value and list item, as PyYAML writes it.
_WORDS = st.text(alphabet="aZyn0_./:-# e", min_size=1, max_size=12)


@CAMPAIGN
@given(_WORDS)
def test_plain_looking_words_are_written_as_pyyaml_writes_them(word: str) -> None:
    documents = [{"k": word, "l": [word], word: 1}]
    assert emit.to_yaml(documents) == yaml_dumper.pyyaml_dump(documents)
    assert emit.to_yaml(documents, PURE) == yaml_dumper.pyyaml_dump(documents)
