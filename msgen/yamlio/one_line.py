"""How libyaml writes a one-line string as a block value, decided without PyYAML.

`yaml_writer` writes names and paths itself (`_PLAIN`) and asked PyYAML how to write every
other distinct scalar; asking meant importing PyYAML, a fifth of a cold render. For a string
of printable ASCII on one line, libyaml's choice (`yaml_emitter_analyze_scalar` and
`yaml_emitter_select_scalar_style`; PyYAML's pure emitter chooses alike) is one of two:

- plain, where no indicator forbids it in a block (`- ` or `: ` or ` #` in the wrong place, a
  leading indicator, a space at either end, `---` or `...` first) and the resolvers of msgen's
  dumper read it back as a string: PyYAML's YAML 1.1 resolvers (`_YAML11`, PyYAML's
  `yaml.resolver.Resolver` patterns, compiled on first need) and msgen's own
  (`yaml_go.not_a_string_somewhere`);
- else single-quoted, each `'` doubled (single quotes hold any printable one-line text).

Anything else (other characters, line breaks, the empty string) returns None and is still
PyYAML's to write. tests/test_yamlio_one_line.py holds this to PyYAML with libyaml and
without, and holds `_YAML11` to PyYAML's own patterns.
"""

from __future__ import annotations

import re

from .yaml_go import not_a_string_somewhere

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
#: Printable ASCII, one line: what this module decides about.
_SIMPLE = re.compile("[\x20-\x7e]+")
#: Indicators that forbid a plain scalar where they start it.
_FIRST = frozenset("#,[]{}&*!|>'\"%@`")

_COMPILED: dict[str, list[re.Pattern[str]]] = {}


def as_libyaml_writes(text: str) -> str | None:
    """`text` as libyaml writes it as a block mapping's value or a block sequence's item
    (without the line break after it), or None where PyYAML must be asked."""
    if not _SIMPLE.fullmatch(text):
        return "''" if text == "" else None
    if _plain_allowed(text) and not _read_as_other(text):
        return text
    return "'" + text.replace("'", "''") + "'"


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
    if first not in _ASKED:
        return False
    if not _COMPILED:
        for chars, pattern, flags in _YAML11:
            compiled = re.compile(pattern, flags)
            for char in chars:
                _COMPILED.setdefault(char, []).append(compiled)
    return any(pattern.match(text) for pattern in _COMPILED[first])
