"""`scalar_styles` writes strings as PyYAML (with libyaml, and without) writes them.

`msgen.yamlio.scalar_styles` decides, without PyYAML, how a string of printable ASCII is
written as a block value: on one line plain or single-quoted, on several lines as a literal
block. Held here against PyYAML with msgen's dumper (libyaml's emitter, and PyYAML's pure
one) on indicators in every place, YAML 1.1 and 1.2 numbers, words and dates, quotes and
spaces, and on line breaks, indented, empty and final lines; the campaigns count the strings
decided and those left to PyYAML. Its copy of PyYAML's resolvers is PyYAML's own.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from msgen.yamlio import emit, scalar_styles, yaml_dumper

from .verdicts import Verdicts
from .campaign import EXAMPLES, campaign

CAMPAIGN = campaign(EXAMPLES * 3)
PURE = yaml_dumper.make_dumper(yaml.SafeDumper)
LIBYAML = yaml_dumper.make_dumper(yaml.CSafeDumper) if yaml.__with_libyaml__ else None


def written_by_pyyaml(text: str, dumper: Any) -> str:
    out = yaml_dumper.pyyaml_dump([{"k": text}], dumper)
    assert out.startswith("k: ") and out.endswith("\n")
    return out[3:-1]


def test_its_resolvers_are_pyyamls() -> None:
    theirs: dict[str, list[tuple[str, int]]] = {}
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items():
        if first:  # the empty string's (null) is never asked: one_line writes "" itself
            theirs[first] = [(pattern.pattern, pattern.flags) for _tag, pattern in resolvers]
    mine: dict[str, list[tuple[str, int]]] = {}
    for chars, pattern, flags in scalar_styles._YAML11:
        for char in chars:
            mine.setdefault(char, []).append((pattern, re.compile(pattern, flags).flags))
    assert mine == theirs


# Pieces that exercise the emitter's choices: indicators first, inside and last, spaces around
# them, YAML 1.1 and 1.2 numbers, booleans, nulls, dates, sexagesimals, quotes.
_PIECES = st.sampled_from(
    [
        "a", "Z", "x", "0", "1", "7", "8", "9", "1.5", "e", "E", "b", "o", "x1", "_", "-", "+", ".",
        ":", " ", "  ", "#", "'", '"', "\\", "&", "*", "!", "%", "@", "`", "|", ">", "?", "[", "]",
        "{", "}", ",", "~", "=", "<<", "/", "$(V)", "null", "Null", "NULL", "yes", "No", "on",
        "OFF", "y", "n", "true", "False", ".inf", ".NaN", "0x1F", "0o17", "0b1", "1e3", "1_0",
        "2024-01-01", "12:30", "1:2.5", "---", "...", "- ", ": ", " #", "http://h:80",
    ]
)
_TEXTS = st.one_of(
    st.lists(_PIECES, min_size=1, max_size=6).map("".join),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=12),
    st.text(max_size=6),  # other characters and line breaks: left to PyYAML
)
_VERDICTS = Verdicts("one-line strings")


@CAMPAIGN
@given(_TEXTS)
def test_one_line_writes_as_pyyaml_writes(text: str) -> None:
    written = scalar_styles.one_line(text)
    if _VERDICTS.count(written is not None):
        assert written == written_by_pyyaml(text, PURE)
        if LIBYAML is not None:
            assert written == written_by_pyyaml(text, LIBYAML)


def test_the_campaign_decided_and_left_strings() -> None:
    # runs after the campaign above (tests run in file order)
    _VERDICTS.require(accepted=0.5, refused=0.05)


@pytest.mark.parametrize(
    "text",
    ["", "0", "08", "2222", "true", "false", "-c", "/bin/bash", "a b", "'x'", '{"a":"b"}', "x: y",
     "a #b", "a#b", "- x", "-x", "--flag=1", "? x", "?x", "1:30", "190:20:30.15", "=", "<<", "~",
     "2001-12-14 21:59:43.10", "metadata.annotations['a/b']", " x", "x ", "x" * 5000],  # fmt: skip
)
def test_strings_a_render_writes(text: str) -> None:
    assert scalar_styles.one_line(text) == written_by_pyyaml(text, PURE)
    if LIBYAML is not None:
        assert scalar_styles.one_line(text) == written_by_pyyaml(text, LIBYAML)


# Lines and what breaks them: indented, empty and final lines, spaces at either end of a
# line, indicators, quotes, other characters (left to PyYAML).
_LINE_PIECES = st.sampled_from(
    ["a", "b c", "x: y", "# c", "- z", "'", '"', "|", "\\", " ", "  ", "\n", "\n\n", "  indented",
     "end ", "\t", "é", "\r", "1", "true", "---"]
)
_BLOCK_VERDICTS = Verdicts("multi-line strings")


@CAMPAIGN
@given(st.lists(_LINE_PIECES, min_size=2, max_size=8).map("".join))
def test_literal_blocks_are_written_as_pyyaml_writes_them(text: str) -> None:
    if "\n" not in text.rstrip("\n"):
        return  # one line (and its final breaks): not a literal block msgen's dumper asks for
    documents = [{"k": text, "l": [text, {"m": text}], "n": {"o": [[text]]}}]
    if _BLOCK_VERDICTS.count(scalar_styles.literal_block(text) is not None):
        assert emit.to_yaml(documents, PURE) == yaml_dumper.pyyaml_dump(documents, PURE)
        if LIBYAML is not None:
            assert emit.to_yaml(documents) == yaml_dumper.pyyaml_dump(documents, LIBYAML)


def test_the_block_campaign_decided_and_left_strings() -> None:
    # runs after the campaign above (tests run in file order)
    _BLOCK_VERDICTS.require(accepted=0.3, refused=0.1)


@pytest.mark.parametrize(
    "text",
    ["a\nb", "a\nb\n", "a\nb\n\n", "a\n\nb\n", " a\nb\n", "\na\nb", "exec:\n  path: ./fn.sh\n",
     "#!/bin/sh\nset -e\n\nexec \"$@\"\n"],  # fmt: skip
)
def test_blocks_a_render_writes(text: str) -> None:
    assert scalar_styles.literal_block(text) is not None
    documents = [{"k": text, "l": [text]}]
    assert emit.to_yaml(documents, PURE) == yaml_dumper.pyyaml_dump(documents, PURE)
    if LIBYAML is not None:
        assert emit.to_yaml(documents) == yaml_dumper.pyyaml_dump(documents, LIBYAML)


def test_printable_ascii_is_the_pattern_it_replaces() -> None:
    # one_line decided on `[\x20-\x7e]+` and literal_block on `[\x20-\x7e\n]+`, matched whole
    cases = [*(chr(code) for code in range(160)), *(f"a{chr(code)}b" for code in range(160)), "", "ab", "\n", "a\nb\n", "\u4e2d", "a\u2028"]
    for text in cases:
        assert scalar_styles._printable_ascii(text) == bool(re.fullmatch("[\x20-\x7e]+", text)), repr(text)
        assert scalar_styles._printable_ascii(text, lines=True) == bool(re.fullmatch("[\x20-\x7e\n]+", text)), repr(text)


def test_a_sign_no_digits_follow_makes_a_string_to_every_reader() -> None:
    # `signed_non_number` spares the number patterns for `-c` and `--flag`: every text of a sign
    # and up to three characters it calls a string is one to PyYAML's resolvers and to each
    # grammar of msgen.yamlio.yaml_go (go-yaml v2's and v3's numbers and timestamps, ruamel's).
    import itertools

    from msgen.yamlio import yaml_go

    implicit = yaml.resolver.Resolver.yaml_implicit_resolvers  # PyYAML's, by first character
    alphabet = "019._exboinfIN:-+c =/"
    strings = 0
    for sign in "+-":
        for count in range(4):
            for chosen in itertools.product(alphabet, repeat=count):
                text = sign + "".join(chosen)
                if not yaml_go.signed_non_number(text):
                    continue
                strings += 1
                assert not any(pattern.match(text) for _tag, pattern in implicit.get(text[0], [])), text
                assert yaml_go.resolve_plain(text) == yaml_go.STR, text
                assert not yaml_go._GO_TIMESTAMP.fullmatch(text), text
                assert not re.fullmatch(yaml_go._YAML12_NUMBER, text), text
                assert not yaml_go._GO_FLOAT.fullmatch(text.replace("_", "")), text
    assert strings > 10_000  # most of the 2 * 10,648 texts: those whose sign no digit, `.` or `_` follows
