"""Kubernetes resource quantities (`500m`, `16Gi`, `1e3`): the grammar, once, and two readings.

The grammar is the API server's (`resource.ParseQuantity`): a number, then a binary suffix, a
decimal exponent or an SI suffix. Every check of a quantity reads it from here: the API rules
(`amount`, exact integers, so a plain render loads no `decimal`), the options that take a size
(msgen.options.text) and the sums below.

A PodGroup's `minResources` is the sum of the pods' requests; adding `4Gi` and `512Mi`
must give `4608Mi`, not a float. Sums are kept as `Decimal` (imported when a sum is made) and
written back in the suffix family the inputs used (binary if any input was binary), so sums
read naturally.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
    from decimal import Decimal
else:
    from .type_forms import NamedTuple

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -3, "u": -2, "m": -1, "": 0, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
GRAMMAR = re.compile(
    r"^(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exponent>[eE][+-]?\d+)|(?P<decimal>[numkMGTPE]?))\Z"
)
#: The longest number (in characters: digits, a sign, a point) and the largest decimal
#: exponent read: far beyond any resource, and within what Python reads and writes as an
#: integer (it refuses a text of over 4,300 digits, which would end a render as a bug).
MAX_NUMBER = 1000
MAX_EXPONENT = 1000


class Amount(NamedTuple):
    """A quantity's exact value, numerator / denominator (integers: `decimal` is not loaded
    for a plain render, see tests/test_render_imports.py)."""

    numerator: int
    denominator: int

    def __lt__(self, other: tuple[int, ...]) -> bool:
        assert isinstance(other, Amount)
        return self.numerator * other.denominator < other.numerator * self.denominator

    def __gt__(self, other: tuple[int, ...]) -> bool:
        assert isinstance(other, Amount)
        return other < self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Amount):
            return NotImplemented
        return self.numerator * other.denominator == other.numerator * self.denominator

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        from math import gcd

        common = gcd(self.numerator, self.denominator)
        return hash((self.numerator // common, self.denominator // common))

    @property
    def whole(self) -> bool:
        return self.numerator % self.denominator == 0

    @property
    def negative(self) -> bool:
        return self.numerator < 0


def amount(value: object) -> Amount | None:
    """The exact value of a quantity (a YAML number or a string, as written), None when it
    is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        value = repr(value) if isinstance(value, float) else str(value)
    match = GRAMMAR.match(value) if isinstance(value, str) else None
    if match is None or _too_long(match):
        return None
    number, scale, power = match.group("number"), 1, 0
    if match.group("binary"):
        scale = 1024 ** _BINARY[match.group("binary")]
    elif match.group("exponent"):
        power = int(match.group("exponent")[1:])
    else:
        power = 3 * _DECIMAL[match.group("decimal")]
    whole, _, fraction = number.lstrip("+-").partition(".")
    numerator = int((whole or "0") + fraction) * scale * (-1 if number.startswith("-") else 1)
    denominator = 10 ** len(fraction)
    if power >= 0:
        numerator *= 10**power
    else:
        denominator *= 10**-power
    return Amount(numerator, denominator)


def _too_long(match: re.Match[str]) -> bool:
    """A number longer than MAX_NUMBER, or an exponent beyond MAX_EXPONENT."""
    exponent = match.group("exponent")
    return len(match.group("number")) > MAX_NUMBER or (
        exponent is not None and (len(exponent) > 8 or abs(int(exponent[1:])) > MAX_EXPONENT)
    )


#: From here on a number is not read alike everywhere: go-yaml (kubectl) reads an integer past
#: 64 bits as a float, and a float holds integers exactly only below 2**53.
EXACT_NUMBERS = 2**53


def as_written(value: object) -> object:
    """A quantity as msgen writes it: a YAML number too large to be read alike by every reader
    (`1e308`, `99999999999999999999`) becomes its text, which every reader reads as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= EXACT_NUMBERS:
        return repr(value) if isinstance(value, float) else str(value)
    return value


class Sum:
    """A running total of quantities of one resource, remembering the suffix family used."""

    def __init__(self) -> None:
        from decimal import Decimal

        self.value = Decimal(0)
        self.binary = False
        self.decimal_suffix = False

    def add(self, quantity: object, times: int = 1) -> None:
        """Add `quantity` × `times`; ValueError if it is not a Kubernetes quantity."""
        value, family = parse(quantity)
        self.value += value * times
        self.binary |= family == "binary"
        self.decimal_suffix |= family == "decimal"

    def text(self) -> str:
        return format_quantity(self.value, binary=self.binary, decimal=self.decimal_suffix)


def parse(quantity: object) -> "tuple[Decimal, str]":
    """The value of a quantity and its suffix family: `binary`, `decimal` or `plain`."""
    from decimal import Decimal

    if isinstance(quantity, bool) or not isinstance(quantity, (int, float, str)):
        raise ValueError(f"{quantity!r} is not a quantity")
    match = GRAMMAR.match(str(quantity).strip())
    if match is None or _too_long(match):
        raise ValueError(
            f"{quantity!r} is not a Kubernetes quantity; accepted: a number with an optional "
            "suffix, such as 500m, 2, 16Gi or 1G"
        )
    number = Decimal(match.group("number"))
    if match.group("binary"):
        return number * (Decimal(1024) ** _BINARY[match.group("binary")]), "binary"
    if match.group("exponent"):
        return number * (Decimal(10) ** int(match.group("exponent")[1:])), "plain"
    suffix = match.group("decimal") or ""
    family = "decimal" if suffix and suffix not in ("m", "u", "n") else "plain"
    return number * (Decimal(1000) ** _DECIMAL[suffix]), family


def format_quantity(value: "Decimal", *, binary: bool = False, decimal: bool = False) -> str:
    """The shortest exact text for `value`: the largest suffix of the family that divides it."""
    from decimal import Decimal

    if value == value.to_integral_value():
        whole = int(value)
        if binary and whole:
            for suffix, power in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
                if whole % (1024**power) == 0:
                    return f"{whole // 1024**power}{suffix}"
        if decimal and whole:
            for suffix, power in sorted(_DECIMAL.items(), key=lambda kv: -kv[1]):
                if power > 0 and whole % (1000**power) == 0:
                    return f"{whole // 1000**power}{suffix}"
        return str(whole)
    for suffix, power in (("m", -1), ("u", -2), ("n", -3)):
        scaled = value * (Decimal(1000) ** -power)
        if scaled == scaled.to_integral_value():
            return f"{int(scaled)}{suffix}"
    return format(value.normalize(), "f")
