"""Canonical output: the same objects always give the same bytes.

Generated objects get one key order (apiVersion, kind, metadata, spec, then the rest sorted;
in metadata name, namespace, labels, annotations first); lists keep their order, since order
matters there (env `$(VAR)` expansion, containers). Multi-line strings are written as literal
blocks so commands stay readable in review.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

try:
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]

_TOP = ("apiVersion", "kind", "metadata", "spec")
_META = ("name", "generateName", "namespace", "labels", "annotations")


def canonical(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with msgen's key order, recursively."""
    ordered: dict[str, Any] = _ordered(obj, _TOP)
    return ordered


def _ordered(value: Any, first: tuple[str, ...]) -> Any:
    if isinstance(value, list):
        return [_ordered(item, ()) for item in value]
    if not isinstance(value, dict):
        return value
    keys = [k for k in first if k in value] + sorted(k for k in value if k not in first)
    return {key: _ordered(value[key], _META if key == "metadata" else ()) for key in keys}


class _Dumper(_BaseDumper):
    pass


def _represent_str(dumper: _Dumper, text: str) -> yaml.Node:
    if "\n" in text.rstrip("\n"):
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", text)


def _represent_list(dumper: _Dumper, items: list[Any]) -> yaml.Node:
    # Lists of numbers (exit codes) read best on one line; everything else stays in blocks.
    numbers = bool(items) and all(isinstance(i, int) and not isinstance(i, bool) for i in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=numbers or None)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)


def to_yaml(objects: list[dict[str, Any]]) -> str:
    if not objects:
        return ""
    return yaml.dump_all(
        objects,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 16,
    )


def to_json(objects: list[dict[str, Any]]) -> str:
    """A `v1 List`, which `kubectl apply -f` and Argo CD accept as one JSON document."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=2) + "\n"
