"""Canonical output: the same objects always give the same bytes.

Generated objects get one key order (apiVersion, kind, metadata, spec, then the rest sorted;
in metadata name, namespace, labels, annotations first); lists keep their order, since order
matters there (env `$(VAR)` expansion, containers). Multi-line strings are written as literal
blocks so commands stay readable in review.

The bytes are PyYAML's (`yaml_dumper`: libyaml's CSafeDumper where present, with msgen's
representers): that is msgen's output format. `yaml_writer` writes them without PyYAML's
representer for every node, which would cost most of a large render.
"""

from __future__ import annotations

from .yaml_writer import BlockWriter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TOP = ("apiVersion", "kind", "metadata", "spec")
_META = ("name", "generateName", "namespace", "labels", "annotations")


def canonical(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with msgen's key order, recursively: a new object, sharing no mapping or list
    with `obj` (so stages before may share read-only parts between objects)."""
    return _ordered_mapping(obj, _TOP)


def _ordered_mapping(mapping: dict[str, Any], first: tuple[str, ...]) -> dict[str, Any]:
    if first:
        keys = [k for k in first if k in mapping] + sorted(k for k in mapping if k not in first)
        items = [(key, mapping[key]) for key in keys]
    else:
        items = sorted(mapping.items(), key=_first)
    out = {}
    for key, value in items:
        kind = type(value)
        if kind is not str and kind is not int and kind is not bool and value is not None:
            if isinstance(value, dict):
                value = _ordered_mapping(value, _META if key == "metadata" else ())
            elif isinstance(value, list):
                value = _ordered_list(value)
        out[key] = value
    return out


def _first(item: tuple[str, Any]) -> str:
    return item[0]


def _ordered_list(items: list[Any]) -> list[Any]:
    return [
        _ordered_mapping(item, ()) if isinstance(item, dict)
        else _ordered_list(item) if isinstance(item, list)
        else item
        for item in items
    ]


def to_yaml(objects: list[dict[str, Any]], dumper: type[Any] | None = None) -> str:
    """A multi-document YAML stream, byte for byte what `yaml_dumper.pyyaml_dump` writes with
    libyaml."""
    stream = YamlStream(dumper)
    return stream.piece(objects) + stream.end()


def to_json(objects: list[dict[str, Any]]) -> str:
    """A `v1 List`, which `kubectl apply -f` and Argo CD accept as one JSON document."""
    import json  # only for JSON output

    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=2) + "\n"


class YamlStream:
    """`to_yaml` of many objects, written a few objects at a time: the pieces, then `end()`,
    joined are `to_yaml` of all the objects."""

    def __init__(self, dumper: type[Any] | None = None):
        self._writer = BlockWriter(dumper)
        self._started = False
        self._open_ended = False

    def piece(self, objects: list[dict[str, Any]]) -> str:
        if not objects:
            return ""
        text, self._open_ended = self._writer.documents(objects, first=not self._started)
        self._started = True
        return text

    def end(self) -> str:
        return "...\n" if self._open_ended else ""


class JsonStream:
    """`to_json` of many objects, written a few objects at a time (see YamlStream)."""

    _HEAD = '{\n  "apiVersion": "v1",\n  "kind": "List",\n  "items": ['

    def __init__(self) -> None:
        self._started = False

    def piece(self, objects: list[dict[str, Any]]) -> str:
        import json  # only for JSON output

        parts = []
        for obj in objects:
            parts.append(",\n" if self._started else self._HEAD + "\n")
            self._started = True
            # An item of the List sits two levels deep; JSON strings hold no raw line breaks.
            parts.append("    " + json.dumps(obj, indent=2).replace("\n", "\n    "))
        return "".join(parts)

    def end(self) -> str:
        return "\n  ]\n}\n" if self._started else self._HEAD + "]\n}\n"
