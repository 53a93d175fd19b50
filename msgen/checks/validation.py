"""Turn pydantic's validation errors into positioned diagnostics people can act on.

pydantic knows what was wrong and where in the data; the document knows where that data was
written. Each error becomes one diagnostic with the offending value and what is accepted.
Valid input never reaches pydantic: the declaration's own checker (`input_model_check.validate`) accepts
it first, so pydantic is imported only to explain a mistake.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic, did_you_mean
from ..model.source import Document, Path
from .input_model import BaseModel as Declared
from .input_model import pydantic_model
from .input_model_check import validate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar
    from pydantic import BaseModel
else:
    from ..model.type_forms import TypeVar

M = TypeVar("M", bound=Declared)

#: Volume sources: one written under `volumeMounts` belongs to a volume, as the errors say
#: (here and in `kinds.shared.check_volumes`).
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "configMap", "secret", "persistentVolumeClaim", "nfs", "projected",
)  # fmt: skip

_TYPE_WORDS = {
    "int_type": "an integer",
    "string_type": "a string (quote values such as \"1\" or \"true\")",
    "bool_type": "true or false",
    "dict_type": "a mapping",
    "list_type": "a list",
    "model_type": "a mapping",
    "float_type": "a number",
}


def validate_model(model: type[M], document: Document) -> tuple[M | None, list[Diagnostic]]:
    """The document as the declared model, or the diagnostics pydantic's errors become."""
    found = validate(model, document.data)
    if found is not None:
        return found, []
    from pydantic import ValidationError

    checked = pydantic_model(model)
    try:
        # Accepted by pydantic where the checker deferred: the same attributes, pydantic's instance.
        accepted: M = checked.model_validate(document.data)
        return accepted, []
    except ValidationError as exc:
        return None, [_diagnostic(checked, document, err) for err in _dedupe(exc.errors(), document.data)]


def _dedupe(errors: list[Any], data: Any) -> list[Any]:
    """A union of types reports one error per member; keep the first per location."""
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for err in errors:
        loc = _data_path(err["loc"], data)
        if loc in seen:
            continue
        seen.add(loc)
        kept.append({**err, "loc": loc})
    return kept


def _data_path(loc: tuple[Any, ...], data: Any) -> tuple[Any, ...]:
    """pydantic's `loc` without the union members' names it adds, walked along the data: a
    part that is a key (or an index) where it stands is the user's, however it is spelt (a
    key `function# ...` is not a union tag)."""
    out = []
    for part in loc:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        elif _is_union_tag(part):
            continue
        else:
            data = None
        out.append(part)
    return tuple(out)


def _is_union_tag(part: Any) -> bool:
    # pydantic adds the union member's name to `loc` ('int', 'str', 'list[...]', 'function-...').
    return isinstance(part, str) and (
        part in ("int", "float", "str", "bool", "none") or "[" in part or part.startswith("function")
    )


def _diagnostic(model: type[BaseModel], document: Document, err: Any) -> Diagnostic:
    path: Path = tuple(err["loc"])
    kind = err["type"]
    value = err.get("input")
    if kind == "extra_forbidden":
        import difflib

        fields = sorted(_fields_at(model, document.data, path[:-1]))
        close = difflib.get_close_matches(str(path[-1]), fields, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        if len(path) > 2 and path[-3] == "volumeMounts" and path[-1] in VOLUME_SOURCES:
            # A volume source written under a mount: the fix is to move it, not rename it.
            hint = f" (a {path[-1]} volume source belongs in the pod's volumes)"
        return document.diagnostic(
            path, f"unknown field {path[-1]!r}{hint}; accepted: {', '.join(fields)}", key=True
        )
    if kind == "missing":
        return document.diagnostic(path[:-1], f"missing required field {path[-1]!r}")
    if kind in _TYPE_WORDS:
        return document.diagnostic(
            path, f"{_show(value)} is not accepted; accepted: {_TYPE_WORDS[kind]}"
        )
    message = err["msg"]
    if message.startswith("Input should be "):
        message = "accepted: " + message[len("Input should be ") :]
    hint = ""
    if kind == "literal_error":  # one of a closed set of values: the one meant, if it is near
        import re

        hint = did_you_mean(value, re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", ""))))
    return document.diagnostic(path, f"{_show(value)} is not accepted{hint}; {message}")


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return repr(value)


def _fields_at(model: type[BaseModel], data: Any, path: Path) -> list[str]:
    """The field names the model accepts at `path` (walking models, lists and maps)."""
    from pydantic import BaseModel

    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        if isinstance(current, _MapOf):
            current = current.value
            continue
        current = _field_model(current, part)
        if current is None:
            return []
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [f.alias or name for name, f in current.model_fields.items()]
    return []


class _MapOf:
    """A `dict[str, Model]` level on the way down: the next path part is a key."""

    def __init__(self, value: Any):
        self.value = value


def _field_model(model: Any, name: str) -> Any:
    from pydantic import BaseModel

    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    field = model.model_fields.get(name)
    if field is None:
        return None
    return _inner_model(field.annotation)


def _inner_model(annotation: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if getattr(annotation, "__origin__", None) is dict:
        inner = _inner_model(annotation.__args__[1])
        return _MapOf(inner) if inner is not None else None
    for arg in getattr(annotation, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
