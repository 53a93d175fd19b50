"""Plain YAML scalars as Kubernetes' own tools read them, and which text they would not read
back as a string.

kubectl reads YAML with sigs.k8s.io/yaml, which decodes with go-yaml v2 (`resolve.go`):
YAML 1.1's booleans (`y`, `yes`, `on`, ...) and nulls, but numbers as Go parses them
(`0o17` and `1_000` are integers, `1e3`, `08` and `+.5` floats), no sexagesimal numbers
(`12:30:00` is a string) and timestamps kept as the text written. kustomize reads with
go-yaml v3, PyYAML with YAML 1.1's rules, ruamel with YAML 1.2's. msgen reads a job as
kubectl would (`resolve_plain`, `decode`), and writes every string so that each of those
readers reads it back as the same string (`not_a_string_somewhere`): a string any of them
would take for something else is quoted.
"""

from __future__ import annotations

import math
import re

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
MERGE = "tag:yaml.org,2002:merge"

#: go-yaml v2's `resolveMap`: what a plain scalar that is one of these words means.
_WORDS: dict[str, tuple[str, object]] = {}
for _words, _tag, _value in (
    ("y Y yes Yes YES true True TRUE on On ON", BOOL, True),
    ("n N no No NO false False FALSE off Off OFF", BOOL, False),
    ("~ null Null NULL", NULL, None),
    (".nan .NaN .NAN", FLOAT, math.nan),
    (".inf .Inf .INF +.inf +.Inf +.INF", FLOAT, math.inf),
    ("-.inf -.Inf -.INF", FLOAT, -math.inf),
):
    for _word in _words.split():
        _WORDS[_word] = (_tag, _value)
_WORDS[""] = (NULL, None)

#: First characters after which go-yaml v2 looks further (`resolveTable`); any other plain
#: scalar is a string.
_LOOKED_AT = frozenset("+-0123456789yYnNtTfFoO~.")
#: Go's `strconv.ParseInt(text, 0, 64)` syntax (after go-yaml removed every `_`).
_GO_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)")
#: go-yaml's `yamlStyleFloat` (v2.4 and v3): what it hands to `strconv.ParseFloat`.
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
#: go-yaml's timestamps start `YYYY-`; v2 keeps them as text, v3 makes them times.
_GO_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?", re.DOTALL)
#: ruamel's YAML 1.2 numbers (`VersionedResolver`), underscores and all; `re` compiles it
#: where first asked (by a text go-yaml reads as a string, that starts as a number may).
_YAML12_NUMBER = (
    r"[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"
    r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
)


def resolve_plain(text: str) -> str:
    """The tag kubectl gives a plain (unquoted, untagged) scalar: STR, INT, FLOAT, BOOL, NULL,
    or MERGE for `<<` (a merge key where it is a key; as a value kubectl reads the text)."""
    if text == "<<":
        return MERGE
    if text and text[0] not in _LOOKED_AT:
        return STR
    word = _WORDS.get(text)
    if word is not None:
        return word[0]
    if text[0] not in "+-0123456789.":
        return STR
    if _GO_TIMESTAMP.fullmatch(text):
        return STR  # kept as the text written (go-yaml v2 into an interface)
    try:
        return INT if isinstance(_number(text), int) else FLOAT
    except ValueError:
        return STR


def decode(tag: str, text: str) -> object:
    """The value of `text` read as `tag` (INT, FLOAT, BOOL or NULL) as go-yaml does, for a
    plain scalar and for an explicit tag (`!!int 0o17`); ValueError when it is not one."""
    word = _WORDS.get(text)
    if word is not None and word[0] == tag:
        return word[1]
    if tag not in (INT, FLOAT):
        raise ValueError(text)
    number = _number(text)
    if tag == INT and not isinstance(number, int):
        raise ValueError(text)
    return float(number) if tag == FLOAT else number


#: The integers Go's `ParseInt` and `ParseUint` hold; beyond them go-yaml tries a float.
_INT_RANGE = range(-(1 << 63), 1 << 64)


def _number(text: str) -> int | float:
    """The number go-yaml v2 reads in `text` (an int where Go's `ParseInt`/`ParseUint` with
    base 0 take it, else a float where `yamlStyleFloat` and `ParseFloat` do); ValueError."""
    if text[:1] == ".":  # ParseFloat of the text as written
        if _GO_FLOAT.fullmatch(text):
            return float(text)
        raise ValueError(text)
    plain = text.replace("_", "")
    if _GO_INT.fullmatch(plain):
        try:
            number = _go_int(plain)
        except ValueError:
            number = None
        if number is not None and number in _INT_RANGE:
            return number
    if _GO_FLOAT.fullmatch(plain):
        value = float(plain)
        if not math.isinf(value):  # ParseFloat's range error: go-yaml keeps the text
            return value
    raise ValueError(text)


def _go_int(text: str) -> int:
    """`strconv.ParseInt(text, 0, 64)`'s syntax: a leading 0 means octal, as in Go."""
    sign = -1 if text[:1] == "-" else 1
    digits = text[1:] if text[:1] in "+-" else text
    prefix = digits[:2].lower()
    if prefix in ("0x", "0o", "0b"):
        return sign * int(digits[2:], {"0x": 16, "0o": 8, "0b": 2}[prefix])
    if len(digits) > 1 and digits[0] == "0":
        return sign * int(digits, 8)  # `08` raises: a float to go-yaml (`yamlStyleFloat`)
    return sign * int(digits)


#: What follows the sign of a number in every grammar here and in PyYAML's YAML 1.1 resolvers:
#: a digit, `.` (`-.5`, `-.inf`) or `_` (ruamel's `-_1`).
_AFTER_A_SIGN = frozenset("0123456789._")


def signed_non_number(text: str) -> bool:
    """Whether `text` starts with a sign no number's digits follow (`-c`, `--epochs=2`, a lone
    `-`): a string to every reader, told without compiling their number patterns (three
    patterns for the `-c` of a typical job's command, 4 % of a cold render)."""
    return text[:1] in ("+", "-") and text[1:2] not in _AFTER_A_SIGN


def not_a_string_somewhere(text: str) -> bool:
    """Whether some YAML reader msgen's output meets takes this plain text for something other
    than a string (PyYAML's own YAML 1.1 rules aside: its emitter already quotes those)."""
    if not text:
        return False
    if text[0] not in _LOOKED_AT or signed_non_number(text):
        return False
    return (
        resolve_plain(text) != STR
        or bool(_GO_TIMESTAMP.fullmatch(text))
        or bool(re.fullmatch(_YAML12_NUMBER, text))
        or bool(_GO_FLOAT.fullmatch(text.replace("_", "")))
    )


class NotAStringSomewhere:
    """`not_a_string_somewhere` in the shape PyYAML's resolver asks of a pattern (`match`)."""

    def match(self, text: str) -> bool:
        return not_a_string_somewhere(text)


#: The first characters of the texts `not_a_string_somewhere` may hold to be no string.
FIRST_CHARACTERS = sorted(_LOOKED_AT)
