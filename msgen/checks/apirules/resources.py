"""A container's resource requests and limits, as the API server checks them.

Names: `cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>`, or a name with a domain
(`nvidia.com/gpu`); `CPU` or `gpu` are refused. Quantities: Kubernetes' quantity syntax, not
negative. Extended resources (devices) cannot be overcommitted: whole numbers, a limit always
set, and a request equal to it. After `validateResourceRequirements` and
`validateContainerResourceName` of `pkg/apis/core/validation`.
"""

from __future__ import annotations

import math

from ...model import quantity
from ...model.quantity import Amount
from ...model.source import Path
from ...model import names
from .findings import Findings, mapping, shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STANDARD = ("cpu", "memory", "ephemeral-storage")
QUANTITY_WORDS = "a quantity such as 500m, 2, 1.5, 4Gi or 1e3"


def check_quantity(
    found: Findings, path: Path, value: Any, *, what: str = "quantity", in_crd: bool | None = None
) -> Amount | None:
    """A positioned error unless `value` is a non-negative quantity; its value otherwise.
    `in_crd`: the value lands in a custom resource (by default: when the target writes one,
    whose schema types a quantity as an integer or a string, `x-kubernetes-int-or-string`, so
    the number 2.5 is refused there; a float that is a JSON integer, 1e3, is taken as one)."""
    exact = quantity.amount(value)
    if in_crd is None:
        in_crd = found.facts.custom_resource
    too_big = isinstance(value, int) and not -(2**63) <= value < 2**63
    fraction = isinstance(value, float) and not _json_integer(value)
    if exact is not None and in_crd and (fraction or too_big):
        found.refuse(
            path,
            f"{what} {value!r} is not accepted here: it lands in a custom resource, whose"
            " schema takes a quantity as an integer (of 64 bits) or a string; accepted:"
            f" {str(value)!r} (quoted)" + (f", or {_milli(exact)}" if not too_big and _milli(exact) != "nothing else" else ""),
        )
        return None
    if exact is None:
        found.refuse(path, f"{what} {shown(value)} is not accepted; accepted: {QUANTITY_WORDS}")
    elif exact.negative:
        found.refuse(
            path, f"{what} {shown(value)} is not accepted: it is negative; accepted: 0 or more"
        )
        return None
    return exact


def _json_integer(value: float) -> bool:
    """Whether the API server's schema validation takes the number `value` for an integer: a
    whole number within JSON's exact integers, ±(2**53 - 1) (kube-openapi's type check,
    go-openapi's `IsFloat64AJSONInteger`)."""
    return math.isfinite(value) and abs(value) <= 2**53 - 1 and value == round(value)


def _milli(amount: Amount) -> str:
    """The quantity as whole thousandths (`1500m`), when that is an integer of 64 bits (in
    integers: `1e308` made the float division overflow)."""
    milli, rest = divmod(amount.numerator * 1000, amount.denominator)
    return f"{milli}m" if rest == 0 and -(2**63) <= milli < 2**63 else "nothing else"


def is_extended(name: str) -> bool:
    """A resource with a domain outside kubernetes.io (a device): never overcommitted."""
    return "/" in name and "kubernetes.io/" not in name


def check_requirements(found: Findings, requirements: Any, path: Path) -> None:
    requirements = mapping(requirements)
    limits = mapping(requirements.get("limits"))
    requests = mapping(requirements.get("requests"))
    amounts: dict[tuple[str, str], Amount] = {}
    for section, values in (("limits", limits), ("requests", requests)):
        for name, value in values.items():
            where = path + (section, name)
            if _check_name(found, where, str(name)):
                continue
            amount = check_quantity(found, where, value)
            if amount is None:
                continue
            amounts[section, name] = amount
            if is_extended(name) and not amount.whole:
                found.refuse(
                    where,
                    f"{shown(value)} is not accepted: {name} counts whole devices;"
                    " accepted: a whole number",
                )
    for name in requests:
        request, limit = amounts.get(("requests", name)), amounts.get(("limits", name))
        if request is None:
            continue
        where = path + ("requests", name)
        if is_extended(name) or name.startswith("hugepages-"):
            if name not in limits:
                found.refuse(
                    where,
                    f"{name} is requested without a limit, which Kubernetes does not accept for a"
                    f" resource it cannot overcommit; accepted: limits.{name} (alone, or equal to"
                    " the request)",
                )
            elif limit is not None and request != limit:
                found.refuse(
                    where,
                    f"{name} requests ({requests[name]}) differ from limits ({limits[name]});"
                    " accepted: equal values, or limits alone",
                )
        elif limit is not None and request > limit:
            found.refuse(
                where,
                f"the {name} request {shown(requests[name])} is more than its limit"
                f" {shown(limits[name])}; accepted: a request no more than the limit",
            )
    for (section, name), amount in amounts.items():
        if str(name).startswith("hugepages-"):
            _check_huge_pages(
                found,
                path + (section, name),
                str(name),
                amount,
                (limits if section == "limits" else requests)[name],
            )
    names = {*limits, *requests}
    if any(str(n).startswith("hugepages-") for n in names) and not names & {"cpu", "memory"}:
        found.refuse(path, "hugepages are not accepted without a cpu or memory request or limit")


def _check_huge_pages(found: Findings, path: Path, name: str, amount: Amount, value: Any) -> None:
    """A hugepages amount is a whole number of pages of the size the name gives."""
    size = quantity.amount(name[len("hugepages-") :])
    if size is None or size.numerator <= 0 or not size.whole:
        found.refuse(
            path,
            f"{name} names no page size; accepted: hugepages-2Mi, hugepages-1Gi, ...",
            key=True,
        )
        return
    pages = -(-amount.numerator // amount.denominator)  # Kubernetes rounds the amount up
    if pages % (size.numerator // size.denominator):
        page = name[len("hugepages-") :]
        found.refuse(
            path,
            f"{shown(value)} is not a whole number of {page} pages; accepted: a multiple of {page}",
        )


def _check_name(found: Findings, path: Path, name: str) -> bool:
    """True (and an error at the name) when `name` is not a container resource name."""
    problems = names.qualified_name(name)
    if (
        not problems
        and "/" not in name
        and name not in STANDARD
        and not name.startswith("hugepages-")
    ):
        problems = [
            f"must be one of {', '.join(STANDARD)}, hugepages-<size>, or a name with a domain "
            "such as nvidia.com/gpu"
        ]
    elif not problems and is_extended(name) and names.qualified_name("requests." + name):
        problems = ["an extended resource's domain and name must also form a valid quota name"]
    found.check(path, "resource name", name, problems, key=True)
    return bool(problems)


_DIVISORS = {
    "cpu": ("1m", "1"),
    "memory": ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"),
}


def check_divisor(found: Findings, resource: str, divisor: Any, path: Path) -> None:
    """A downward-API divisor: one unit of the resource's family (1m or 1 for cpu).

    The server compares the quantity as it writes it back (`1000` becomes `1k`; `1e3`, `1.`
    and `+1` stay as written, and are refused): one of the listed units, or a whole number of
    the same value, is accepted."""
    amount = check_quantity(found, path, divisor, what="divisor")
    if amount is None or amount.numerator == 0:
        return
    family = "cpu" if resource.endswith(".cpu") else "memory"
    units = _DIVISORS[family]
    written = repr(divisor) if isinstance(divisor, float) else str(divisor)
    plain = written.isdecimal() and amount in [  # digits only, as `\d+` matches them
        quantity.amount(u) for u in units if u[-1].isdigit() or u[-1] in "kMGTPE"
    ]
    if written not in units and not plain:
        found.refuse(
            path,
            f"divisor {shown(divisor)} is not accepted for {resource or 'this resource'}; accepted:"
            f" {', '.join(units)}",
        )
