"""Check pod templates as the API server does, with Kubernetes' own published schema.

The input models type only the fields msgen reads; everything else in a pod template (volume
sources, affinity, probes, security contexts, ...) passes through to the output. Unchecked,
`hostPathx:`, `emptyDir: {sizeLimt: 1Gi}` or `imagePullPolicy: 0` would render with exit 0 and be
refused by the cluster. Here every field is checked against `pod_template_schema`, the
definitions a pod template reaches in the OpenAPI schema of the newest Kubernetes msgen supports
(built from kubernetes-validate by `pod_schema_build`, never written by hand): unknown fields
(and fields newer than the cluster's `--kube-version`), wrong types, missing required fields and
integers beyond their int32/int64 format, each at its position. The data is loaded on first
use, not at import, so start-up does not pay for it.
"""

from __future__ import annotations

from functools import lru_cache

from ..model import versions
from ..model.diagnostics import Diagnostic
from ..model.plan import Plan
from ..model.source import Document, Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    _Pending = tuple[Any, dict[str, Any], Path, str]

_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_WORDS = {
    "string": 'a string (quote values such as "1" or "true")',
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
}


@lru_cache(maxsize=1)
def _schema() -> tuple[str, dict[str, Any], dict[str, dict[str, tuple[int, int]]]]:
    """(the pod template's definition name, every definition by name, fields' first release)."""
    from . import pod_template_schema as document

    releases: dict[str, tuple[int, int]] = {}  # a few releases, named by ~80 fields
    since = {
        name: {
            field: releases.get(version) or releases.setdefault(version, versions.parse(version))
            for field, version in fields.items()
        }
        for name, fields in document.SINCE.items()
    }
    return document.ROOT, document.DEFINITIONS, since


def check_plan(plan: Plan, kube_version: tuple[int, int]) -> list[Diagnostic]:
    """Every schema error in the plan's pod templates, positioned in its document."""
    out: list[Diagnostic] = []
    for role in plan.roles:
        path = role.path + ("template",)
        out.extend(check_template(role.template, plan.document, path, kube_version))
    return out


def check_template(
    template: Any, document: Document, path: Path, kube_version: tuple[int, int]
) -> list[Diagnostic]:
    """Errors in one pod template, as the API server of `kube_version` would find them."""
    root, definitions, since = _schema()
    checker = _Checker(document, definitions, since, kube_version)
    checker.check(template, {"$ref": root}, path)
    return checker.errors


class _Checker:
    def __init__(
        self,
        document: Document,
        definitions: dict[str, Any],
        since: dict[str, dict[str, tuple[int, int]]],
        kube_version: tuple[int, int],
    ):
        self.document = document
        self.definitions = definitions
        self.since = since
        self.kube_version = kube_version
        self.errors: list[Diagnostic] = []

    def check(self, value: Any, schema: dict[str, Any], path: Path) -> None:
        # An explicit loop, not recursion per level: the loader bounds the depth anyway.
        stack: list[_Pending] = [(value, schema, path, "")]
        while stack:
            value, schema, path, name = stack.pop()
            while "$ref" in schema:
                name = schema["$ref"]
                schema = self.definitions[name]
            if "oneOf" in schema:
                if not any(_type_ok(value, option.get("type")) for option in schema["oneOf"]):
                    words = " or ".join(_accepted(o.get("type")) for o in schema["oneOf"])
                    self._error(path, f"{_show(value)} is not accepted; accepted: {words}")
                continue
            if not _type_ok(value, schema.get("type")):
                self._error(
                    path, f"{_show(value)} is not accepted; accepted: {_accepted(schema['type'])}"
                )
                continue
            if value is None:
                continue
            if "format" in schema and isinstance(value, int) and schema["format"] in _RANGES:
                low, high = _RANGES[schema["format"]]
                if not low <= value <= high:
                    self._error(
                        path,
                        f"{value} is not accepted: it is an {schema['format']}; accepted: "
                        f"{low} to {high}",
                    )
            if "enum" in schema and value not in schema["enum"]:
                shown = ", ".join(str(e) for e in schema["enum"])
                self._error(path, f"{_show(value)} is not accepted; accepted: {shown}")
            if isinstance(value, dict):
                stack.extend(self._members(value, schema, path, name))
            elif isinstance(value, list) and "items" in schema:
                items = schema["items"]
                stack.extend((item, items, path + (i,), name) for i, item in enumerate(value))

    def _members(
        self, value: dict[str, Any], schema: dict[str, Any], path: Path, name: str
    ) -> list[_Pending]:
        properties: dict[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        newer = self.since.get(name, {})
        children: list[_Pending] = []
        for key, item in value.items():
            if key in properties and newer.get(key, self.kube_version) > self.kube_version:
                fields = sorted(f for f in properties if newer.get(f, (0, 0)) <= self.kube_version)
                self._error(
                    path + (key,),
                    f"field {key!r} needs Kubernetes {versions.show(newer[key])} or newer, and "
                    f"the cluster is {versions.show(self.kube_version)} (--kube-version); "
                    f"accepted: {', '.join(fields)}",
                    key=True,
                )
            elif key in properties:
                children.append((item, properties[key], path + (key,), name))
            elif isinstance(extra, dict):
                children.append((item, extra, path + (key,), name))
            elif extra is False:
                import difflib  # only for a mistake: keeps valid renders' start-up lean

                fields = sorted(f for f in properties if newer.get(f, (0, 0)) <= self.kube_version)
                close = difflib.get_close_matches(str(key), fields, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self._error(
                    path + (key,),
                    f"unknown field {key!r}{hint}; accepted: {', '.join(fields)}",
                    key=True,
                )
        for name in schema.get("required", ()):
            if value.get(name) is None:
                self._error(path, f"missing required field {name!r}")
        # Reverse: the stack pops the first field first, so errors come out in written order.
        return children[::-1]

    def _error(self, path: Path, message: str, *, key: bool = False) -> None:
        self.errors.append(self.document.diagnostic(path, message, key=key))


def _type_ok(value: Any, expected: str | list[str] | None) -> bool:
    if expected is None:
        return True
    names = [expected] if isinstance(expected, str) else expected
    return any(_is(value, name) for name in names)


def _is(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    return False


def _accepted(expected: str | list[str] | None) -> str:
    names = [expected] if isinstance(expected, str) else list(expected or [])
    words = [_WORDS[n] for n in names if n in _WORDS]
    return " or ".join(words) or "any value"


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return repr(value)
