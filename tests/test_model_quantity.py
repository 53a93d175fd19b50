"""msgen.model.quantity: the one quantity grammar, its exact reading, sums, and the size options
that read it (a fixture per row: text, and what each reader makes of it)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from msgen.model import quantity
from msgen.model.quantity import Amount, Sum
from msgen.options import option_table
from msgen.options.text import OptionError, value_of

#: text -> its exact value (numerator, denominator), or None when it is not a quantity
GRAMMAR = {
    "2": (2, 1), "500m": (1, 2), "1.5": (3, 2), ".5": (1, 2), "+1": (1, 1), "-1": (-1, 1),
    "4Gi": (4 << 30, 1), "1.5Ki": (1536, 1), "1e3": (1000, 1), "1E3": (1000, 1),
    "1E": (10**18, 1), "5n": (5, 10**9), "1k": (1000, 1),
    "1K": None, "1e": None, "Gi": None, "1 Gi": None, "": None, "1e1001": None, "1.2.3": None,
}


@pytest.mark.parametrize("text", GRAMMAR)
def test_amount_reads_the_grammar_exactly(text: str) -> None:
    expected = GRAMMAR[text]
    assert quantity.amount(text) == (Amount(*expected) if expected else None)


@pytest.mark.parametrize("text", [t for t, v in GRAMMAR.items() if v and abs(v[0]) < 10**18])
def test_the_decimal_reading_agrees_with_the_exact_one(text: str) -> None:
    exact = quantity.amount(text)
    assert exact is not None
    assert quantity.parse(text)[0] == Decimal(exact.numerator) / Decimal(exact.denominator)


@pytest.mark.parametrize("value, expected", [(2, (2, 1)), (0.5, (1, 2)), (True, None), (None, None)])
def test_yaml_numbers_are_quantities_and_booleans_are_not(value: object, expected: object) -> None:
    assert quantity.amount(value) == (Amount(*expected) if isinstance(expected, tuple) else None)


@pytest.mark.parametrize(
    "added, total",
    [(["4Gi", "512Mi"], "4608Mi"), (["500m", "1500m"], "2"), (["1G", "1"], "1000000001"),
     (["1k", "1k"], "2k"), (["250m"], "250m")],
)
def test_sums_keep_the_suffix_family_of_their_inputs(added: list[str], total: str) -> None:
    summed = Sum()
    for text in added:
        summed.add(text)
    assert summed.text() == total


SHM_SIZE = option_table.BY_NAME["shm-size"]


@pytest.mark.parametrize(
    "text, accepted",
    [("16Gi", True), ("512Mi", True), ("1.5Gi", True), ("1e9", True), ("1G", True),
     ("0", False), ("500m", False), ("-1Gi", False), ("lots", False), ("1 Gi", False)],
)
def test_a_size_option_is_a_quantity_of_whole_bytes_above_zero(text: str, accepted: bool) -> None:
    if accepted:
        assert value_of(SHM_SIZE, "--shm-size", text) == text
    else:
        with pytest.raises(OptionError, match="accepted: a size such as 16Gi or 512Mi"):
            value_of(SHM_SIZE, "--shm-size", text)


def test_numbers_and_exponents_beyond_the_bounds_are_no_quantities() -> None:
    """Python reads no integer of over 4,300 digits from text: the grammar reads numbers up
    to MAX_NUMBER characters and exponents up to MAX_EXPONENT, both readings alike."""
    longest = "9" * quantity.MAX_NUMBER
    assert quantity.amount(longest) == Amount(int(longest), 1)
    assert quantity.amount(f"1e{quantity.MAX_EXPONENT}") == Amount(10**quantity.MAX_EXPONENT, 1)
    for text in (longest + "9", "1e" + "9" * 5000, "1e-1001", "0." + "1" * 5000):
        assert quantity.amount(text) is None
        with pytest.raises(ValueError):
            quantity.parse(text)
