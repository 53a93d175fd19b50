"""How libyaml writes a string as a block value, decided without PyYAML.

`yaml_writer` writes names and paths itself (`_PLAIN`) and asked PyYAML how to write every
other distinct scalar; asking meant importing PyYAML, a fifth of a cold render. For text of
printable ASCII, libyaml's choice (`yaml_emitter_analyze_scalar`,
`yaml_emitter_select_scalar_style` and the writers; PyYAML's pure emitter chooses alike) is
decided here:

- one line (`one_line`): plain, where no indicator forbids it in a block (`- ` or `: ` or
  ` #` in the wrong place, a leading indicator, a space at either end, `---` or `...`
  first) and the resolvers of msgen's dumper read it back as a string: PyYAML's YAML 1.1
  resolvers (`_YAML11`, PyYAML's `yaml.resolver.Resolver` patterns, compiled on first
  need) and msgen's own (`yaml_go.not_a_string_somewhere`); else single-quoted, each `'`
  doubled (single quotes hold any printable one-line text);
- several lines (`literal_block`): the literal block msgen's dumper asks for (`|`, with
  libyaml's chomping indicator and, for a first line that starts with a space, its
  indentation indicator), each line indented under its key, an empty line left empty.

Anything else (other characters, a line ending in a space, the empty string's cousins) is
None here and still PyYAML's to write. tests/test_yamlio_scalar_styles.py holds this to PyYAML
with libyaml and without, and holds `_YAML11` to PyYAML's own patterns.
"""

from __future__ import annotations

import re

from .yaml_go import not_a_string_somewhere, signed_non_number

#: PyYAML's implicit resolvers (`yaml/resolver.py`, `Resolver`): the first characters each
#: is asked for, the pattern, its flags. A string one of them reads is no string to PyYAML.
_YAML11 = (
    ("yYnNtTfFoO",
     r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""", re.X),
    ("-+0123456789.",
     r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", re.X),
    ("-+0123456789",
     r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""", re.X),
    ("<", r"^(?:<<)$", 0),
    ("~nN",
     r"""^(?: ~
                    |null|Null|NULL
                    | )$""", re.X),
    ("0123456789",
     r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", re.X),
    ("=", r"^(?:=)$", 0),
    ("!&*", r"^(?:!|&|\*)$", 0),
)
#: The first characters some pattern of `_YAML11` is asked for.
_ASKED = frozenset("".join(first for first, _pattern, _flags in _YAML11))
#: Indicators that forbid a plain scalar where they start it.
_FIRST = frozenset("#,[]{}&*!|>'\"%@`")

#: The patterns of `_YAML11` each first character asks, compiled when it is first met.
_COMPILED: dict[str, list[re.Pattern[str]]] = {}


def one_line(text: str) -> str | None:
    """`text` (one line) as libyaml writes it as a block mapping's value or a block
    sequence's item (without the line break after it), or None where PyYAML must be asked."""
    if not _printable_ascii(text):
        return "''" if text == "" else None
    if _plain_allowed(text) and not _read_as_other(text):
        return text
    return "'" + text.replace("'", "''") + "'"


def _printable_ascii(text: str, *, lines: bool = False) -> bool:
    """Whether `text` is not empty and holds only printable ASCII, "\\x20" to "\\x7e" (and
    `\\n` where `lines`): the patterns `[\\x20-\\x7e]+` and `[\\x20-\\x7e\\n]+` as str's own
    tests, which compile nothing."""
    return text != "" and text.isascii() and (text.replace("\n", "") if lines else text).isprintable()


def _plain_allowed(text: str) -> bool:
    """libyaml's `block_plain_allowed` for printable ASCII on one line."""
    if text[0] == " " or text[-1] == " " or text.startswith(("---", "...")):
        return False
    first, second = text[0], text[1:2]
    if first in _FIRST or first in "?:-" and second in ("", " "):
        return False
    if ": " in text or text.endswith(":") or " #" in text:
        return False
    return True


def _read_as_other(text: str) -> bool:
    """Whether a resolver of msgen's dumper reads `text`, written plain, as no string."""
    if not_a_string_somewhere(text):
        return True
    first = text[0]
    if first not in _ASKED or signed_non_number(text):
        return False
    patterns = _COMPILED.get(first)
    if patterns is None:  # compiled for the first characters met: most renders meet few
        patterns = _COMPILED[first] = [re.compile(p, flags) for chars, p, flags in _YAML11 if first in chars]
    return any(pattern.match(text) for pattern in patterns)


def literal_block(text: str) -> tuple[str, list[str], bool] | None:
    """`text` (a line break inside it) as libyaml writes the literal block msgen's dumper
    asks for, as the value of a block mapping at column 0: what follows `key: `, the lines
    after it, and whether the block keeps its final line breaks (`|+`: the stream then ends
    with `...`); None where PyYAML must be asked."""
    if not _printable_ascii(text, lines=True) or " \n" in text or text.endswith(" "):
        return None  # a space before a line break: libyaml writes it double-quoted
    hints = "2" if text[0] in " \n" else ""  # the indentation a first line's spaces hide
    keep = False
    if not text.endswith("\n"):
        hints += "-"
    elif text.endswith("\n\n") or text == "\n":
        hints += "+"
        keep = True
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()  # the final line break ends the last line
    rest = ["  " + line + "\n" if line else "\n" for line in lines]
    return f"|{hints}\n", rest, keep
