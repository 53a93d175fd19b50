"""The checker that accepts valid input for a declared model without pydantic (see `input_model`).

Built on first use from a declaration's annotations (strict scalars, `extra="forbid"` or
`"allow"`, required fields, literals, unions, lists, maps of strings, `ge`/`le`/`gt`/`lt`/
`min_length`/`max_length`), it turns a valid document into instances of the declared classes,
with the attributes pydantic would give them. It implements less than pydantic on purpose:
whatever it is not sure of, it defers to pydantic (`validate` returns None), so it can never
accept what pydantic refuses; a declaration it cannot check at all raises `Unsupported`.
"""

from __future__ import annotations

from ..model import type_forms
from ..model.type_forms import Literal, Union, arguments, origin
from .input_model import REQUIRED, BaseModel, FieldSpec, config_of, declared_bases, own_fields, resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from .input_model import M

    _Check = Callable[[Any], Any]


class _Defer(Exception):
    """The checker does not accept the value: pydantic decides and explains."""


class Unsupported(Exception):
    """A declaration uses something the checker does not implement (it then always defers)."""


_CHECKERS: dict[type, _Check] = {}
_NUMBER_BOUNDS = {"ge", "le", "gt", "lt"}
_LENGTH_BOUNDS = {"min_length", "max_length"}


def validate(cls: type[M], data: Any) -> M | None:
    """`data` as an instance of `cls` when the checker accepts it; None when pydantic must decide."""
    try:
        check = model_checker(cls)
    except Unsupported:
        return None
    try:
        found: M = check(data)
    except _Defer:
        return None
    return found


def model_checker(cls: type[BaseModel]) -> _Check:  # noqa: C901 - one branch per annotation form the checker reads (the module docstring's list)
    """The checker of one declared model (built on first use, from its annotations)."""
    found = _CHECKERS.get(cls)
    if found is not None:
        return found
    config = config_of(cls)
    if config.get("strict") is not True or config.get("extra", "ignore") not in ("forbid", "allow"):
        raise Unsupported(f"{cls.__name__}: the checker implements strict models only")
    forbid = config.get("extra") == "forbid"
    fields: dict[str, tuple[_Check, bool, Any]] = {}

    def check(value: Any) -> Any:
        if type(value) is not dict:
            raise _Defer
        if forbid:
            for key in value:
                if key not in fields:
                    raise _Defer
        obj = object.__new__(cls)
        attributes = obj.__dict__
        for name, (check_field, required, default) in fields.items():
            if name in value:
                attributes[name] = check_field(value[name])
            elif required:
                raise _Defer
            else:
                attributes[name] = default
        if not forbid:
            for key, item in value.items():
                if key not in fields:
                    if type(key) is not str:
                        raise _Defer
                    attributes[key] = item
        return obj

    _CHECKERS[cls] = check  # before the fields: a model may (indirectly) contain itself
    try:
        for klass in declared_bases(cls):
            for name, annotation in own_fields(klass).items():
                fields[name] = _field(cls, klass, name, annotation)
    except Unsupported:
        del _CHECKERS[cls]
        raise
    return check


def _field(cls: type, klass: type, name: str, annotation: Any) -> tuple[_Check, bool, Any]:
    default = vars(klass).get(name, REQUIRED)  # the default written with this annotation
    arguments: dict[str, Any] = {}
    if isinstance(default, FieldSpec):
        arguments, default = default.arguments, default.default
    if set(arguments) - _NUMBER_BOUNDS - _LENGTH_BOUNDS:
        raise Unsupported(f"{cls.__name__}.{name}: Field arguments {sorted(arguments)}")
    if default is not REQUIRED and not isinstance(default, (type(None), str, int, float, tuple)):
        raise Unsupported(f"{cls.__name__}.{name}: a mutable default")
    check = _checker(resolve(klass, annotation, for_pydantic=False))
    if arguments:
        check = _bounded(check, arguments)
    return check, default is REQUIRED, default


def _bounded(check: _Check, bounds: dict[str, Any]) -> _Check:
    def bounded(value: Any) -> Any:
        value = check(value)
        if value is None:  # `int | None = Field(ge=0)`: bounds apply to numbers only
            return value
        measured = len(value) if _LENGTH_BOUNDS & set(bounds) else value
        for bound, limit in bounds.items():
            if bound in ("ge", "min_length") and not measured >= limit:
                raise _Defer
            if bound in ("le", "max_length") and not measured <= limit:
                raise _Defer
            if bound == "gt" and not measured > limit:
                raise _Defer
            if bound == "lt" and not measured < limit:
                raise _Defer
        return value

    return bounded


def _checker(annotation: Any) -> _Check:
    if annotation is type_forms.Any:  # the run-time forms: see input_model.FORMS
        return _anything
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _lazy_model(annotation)
    kind, args = origin(annotation), arguments(annotation)
    if kind is Literal:
        return _literal(args)
    if kind is Union:
        return _union([_checker(a) for a in args], args)
    if kind is list and len(args) == 1:
        return _list(_checker(args[0]))
    if kind is dict and len(args) == 2 and args[0] is str:
        return _dict(_checker(args[1]))
    raise Unsupported(f"annotation {annotation!r}")


def _anything(value: Any) -> Any:
    return value


def _exact(*accepted: type) -> _Check:
    """Strict scalars: the very types (a bool is not an int, an int not a str)."""

    def check(value: Any) -> Any:
        if type(value) not in accepted:
            raise _Defer
        return value

    return check


_SCALARS: dict[Any, _Check] = {
    str: _exact(str),
    int: _exact(int),
    float: _exact(float),  # pydantic's strict float also takes an int: that case defers
    bool: _exact(bool),
    type(None): _exact(type(None)),
    None: _exact(type(None)),
}


def _lazy_model(cls: type[BaseModel]) -> _Check:
    def check(value: Any) -> Any:
        return model_checker(cls)(value)

    model_checker(cls)  # fail now, at build time, for a model the checker cannot handle
    return check


def _literal(values: tuple[Any, ...]) -> _Check:
    accepted = [(type(v), v) for v in values]

    def check(value: Any) -> Any:
        if (type(value), value) not in accepted:
            raise _Defer
        return value

    return check


def _union(members: list[_Check], args: tuple[Any, ...]) -> _Check:
    models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
    if len(models) > 1:  # pydantic's smart union picks among models by fit: not reproduced here
        raise Unsupported(f"a union of models {models}")

    def check(value: Any) -> Any:
        for member in members:
            try:
                return member(value)
            except _Defer:
                continue
        raise _Defer

    return check


def _list(item: _Check) -> _Check:
    def check(value: Any) -> Any:
        if type(value) is not list:
            raise _Defer
        return [item(v) for v in value]

    return check


def _dict(item: _Check) -> _Check:
    def check(value: Any) -> Any:
        if type(value) is not dict:
            raise _Defer
        out = {}
        for key, v in value.items():
            if type(key) is not str:
                raise _Defer
            out[key] = item(v)
        return out

    return check
