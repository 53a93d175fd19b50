"""Bounds a host's administrator sets, which the places below may lower and never raise.

In the Argo CD sidecar a repository's function config, the Application's env and its
parameters come from whoever may push to a repository or create an Application; the
sidecar's memory limit and Argo CD's timeout are the administrator's. Before this,
`max-output-size: 1Gi` in a repository's msgen.yaml was obeyed (a 60 KB job then wrote 609 MB
with 1.27 GB of peak memory, above the sidecar's 1 GiB limit). So the administrator's value of
a bounded option is a ceiling: it is the option's value where nobody sets one, and a value
above it from any layer is an error naming both (`resolve` in msgen.options.option_layers
checks every layer against the ceilings the host hands it).
"""

from __future__ import annotations

from collections.abc import Mapping

from . import text as option_text
from .option_table import BY_NAME

#: A layer's values (option name → (text, how its name was written)): `option_layers.Layer.values`,
#: taken apart so this module needs nothing of option_layers, which calls it.
Values = Mapping[str, tuple[str, str]]


def magnitude(option: str, shown: str, text: str) -> int:
    """The value of a bounded option (a size in bytes, a count); raises OptionError naming
    `shown` when `text` is not one the option accepts."""
    from ..model.quantity import amount

    row = BY_NAME[option]
    value = option_text.value_of(row, shown, text)
    if row.check == "count":
        return int(value)
    exact = amount(value)
    assert exact is not None and row.check == "quantity", (option, text)
    return exact.numerator // exact.denominator


def check(layers: list[Values], ceilings: Values) -> None:
    """Raise OptionError at the first value of `layers` above its ceiling (or not accepted)."""
    for values in layers:
        for option, (text, shown) in values.items():
            if option not in ceilings:
                continue
            limit, variable = ceilings[option]
            if magnitude(option, shown, text) > magnitude(option, variable, limit):
                raise option_text.OptionError(
                    shown,
                    f"{shown}={text!r} is above the ceiling {variable}={limit!r} that the "
                    f"sidecar's administrator set; accepted: at most {limit} (a repository or an "
                    "Application may lower this bound: it may be lowered, never raised)",
                )


def checked(ceilings: Values) -> Values:
    """`ceilings` with each value checked as its option's: raises OptionError naming the
    variable that holds a value the option does not accept."""
    for option, (text, variable) in ceilings.items():
        magnitude(option, variable, text)
    return ceilings
