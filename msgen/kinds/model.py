"""Input models declared once: checked cheaply when the input is valid, explained by pydantic when not.

Why: a render starts a fresh process (Argo CD, kustomize), and importing pydantic and building
the input models cost most of that start-up (about 50 ms and 50-130 ms of a ~200 ms render on
a 2-CPU machine), although nearly every input msgen sees is valid. So the kind modules declare
their models with the classes here, written exactly as pydantic models (`class MSJob(_Model):
spec: MSJobSpec`, `Field(default=None, ge=0)`, `model_config`), and:

- `validate` checks a document against the declaration with a small checker built from the
  same annotations on first use (strict types, `extra="forbid"`, required fields, literals,
  `ge`/`le`/`min_length`); valid input becomes instances of the declared classes, with the
  attributes pydantic would give them, and pydantic is never imported;
- anything the checker does not accept goes to the real pydantic model, built from the same
  declaration (`pydantic_model`), which decides and explains: every error message, position
  and "did you mean" comes from pydantic, as before. The checker only ever accepts less than
  pydantic (when unsure, it defers), so it cannot let through what pydantic would refuse;
- `msgen schema`, `schemas/` and `model_json_schema()` use the pydantic model too.

Because both paths read the one declaration, a field added to a model is checked by both at
once; tests compare their verdicts on every sample and error case, and that every kind is
fully handled by the checker.
"""

from __future__ import annotations

import functools
import sys
import types
import typing
from typing import Any, Callable, ClassVar, Literal, TypeVar, Union

M = TypeVar("M", bound="BaseModel")

_REQUIRED: Any = object()


class FieldSpec:
    """What `Field(...)` returns in a declaration: the default and pydantic's other arguments."""

    __slots__ = ("default", "arguments")

    def __init__(self, default: Any, arguments: dict[str, Any]):
        self.default = default
        self.arguments = arguments


def Field(default: Any = _REQUIRED, **arguments: Any) -> Any:  # noqa: N802 - pydantic's name
    """pydantic's `Field`, recorded for both the checker and the pydantic model."""
    return FieldSpec(default, arguments)


def ConfigDict(**values: Any) -> dict[str, Any]:  # noqa: N802 - pydantic's name
    return dict(values)


class _ModelType(type):
    @property
    def model_fields(cls) -> dict[str, Any]:
        """pydantic's field table (builds the pydantic model: for tests and tools, not renders)."""
        fields: dict[str, Any] = pydantic_model(typing.cast("type[BaseModel]", cls)).model_fields
        return fields


class BaseModel(metaclass=_ModelType):
    """The base of every input model declaration (see the module docstring)."""

    model_config: ClassVar[dict[str, Any]] = {}

    @classmethod
    def model_json_schema(cls, **arguments: Any) -> dict[str, Any]:
        schema: dict[str, Any] = pydantic_model(cls).model_json_schema(**arguments)
        return schema


def create_model(name: str, *, __base__: type[M], **fields: tuple[Any, Any]) -> type[M]:
    """pydantic's `create_model` for declarations: a subclass of `__base__` with `fields`."""
    namespace: dict[str, Any] = {
        "__annotations__": {field: spec[0] for field, spec in fields.items()},
        "__module__": sys._getframe(1).f_globals["__name__"],
        "__qualname__": name,
    }
    namespace.update({field: spec[1] for field, spec in fields.items()})
    return types.new_class(name, (__base__,), {}, lambda ns: ns.update(namespace))


# --- the declaration, read ------------------------------------------------------------------


def _own_fields(cls: type) -> dict[str, Any]:
    """The fields `cls` itself declares: name -> annotation (a string under `from __future__`)."""
    annotations: dict[str, Any] = vars(cls).get("__annotations__", {})
    return {n: a for n, a in annotations.items() if not (isinstance(a, str) and "ClassVar" in a)}


def _declared_bases(cls: type) -> list[type[BaseModel]]:
    """`cls` and its declared bases, base first, as pydantic collects fields."""
    return [k for k in reversed(cls.__mro__) if issubclass(k, BaseModel) and k is not BaseModel]


def field_names(cls: type[BaseModel]) -> list[str]:
    """The fields a declared model has, its bases' first (no pydantic needed)."""
    return list(dict.fromkeys(n for k in _declared_bases(cls) for n in _own_fields(k)))


def _config(cls: type[BaseModel]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for klass in _declared_bases(cls):
        config.update(vars(klass).get("model_config", {}))
    return config


class _Declared(dict[str, Any]):
    """A module's names, with declared models swapped for their pydantic models on lookup."""

    def __init__(self, module_globals: dict[str, Any]):
        super().__init__()
        self.module_globals = module_globals

    def __missing__(self, name: str) -> Any:
        value = self.module_globals[name]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return pydantic_model(value)
        return value


def _resolve(cls: type, annotation: Any, *, for_pydantic: bool) -> Any:
    if not isinstance(annotation, str):
        return _swap(annotation) if for_pydantic else annotation
    module_globals = vars(sys.modules[cls.__module__])
    if for_pydantic:
        return eval(annotation, module_globals, _Declared(module_globals))  # noqa: S307
    return _evaluated(cls.__module__, annotation)


@functools.lru_cache(maxsize=None)
def _evaluated(module: str, annotation: str) -> Any:
    """A module's annotation text as an object; cached, as most (`str | None`) recur often."""
    return eval(annotation, vars(sys.modules[module]))  # noqa: S307 - the module's own text


def _swap(annotation: Any) -> Any:
    """An annotation object with declared models replaced by pydantic models (create_model)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pydantic_model(annotation)
    return annotation


# --- the pydantic model, for errors and schemas ---------------------------------------------

_PYDANTIC: dict[type, Any] = {}


def pydantic_model(cls: type[BaseModel]) -> Any:
    """The pydantic model a declaration stands for (built once, on first need)."""
    found = _PYDANTIC.get(cls)
    if found is not None:
        return found
    import pydantic

    bases = tuple(
        pydantic_model(base) if base is not BaseModel and issubclass(base, BaseModel)
        else pydantic.BaseModel
        for base in cls.__bases__
    )
    own = vars(cls)
    namespace: dict[str, Any] = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "__annotations__": {},
    }
    if "model_config" in own:
        namespace["model_config"] = pydantic.ConfigDict(**own["model_config"])  # type: ignore[typeddict-item]
    for name, annotation in _own_fields(cls).items():
        namespace["__annotations__"][name] = _resolve(cls, annotation, for_pydantic=True)
        if name in own:
            default = own[name]
            if isinstance(default, FieldSpec):
                arguments = dict(default.arguments)
                if default.default is not _REQUIRED:
                    arguments["default"] = default.default
                default = pydantic.Field(**arguments)
            namespace[name] = default
    metaclass: Any = type(pydantic.BaseModel)
    model = metaclass(cls.__name__, bases, namespace)
    _PYDANTIC[cls] = model
    return model


# --- the checker, for valid input -----------------------------------------------------------


class _Defer(Exception):
    """The checker does not accept the value: pydantic decides and explains."""


class Unsupported(Exception):
    """A declaration uses something the checker does not implement (it then always defers)."""


_Check = Callable[[Any], Any]
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


def model_checker(cls: type[BaseModel]) -> _Check:
    """The checker of one declared model (built on first use, from its annotations)."""
    found = _CHECKERS.get(cls)
    if found is not None:
        return found
    config = _config(cls)
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
        for klass in _declared_bases(cls):
            for name, annotation in _own_fields(klass).items():
                fields[name] = _field(cls, klass, name, annotation)
    except Unsupported:
        del _CHECKERS[cls]
        raise
    return check


def _field(cls: type, klass: type, name: str, annotation: Any) -> tuple[_Check, bool, Any]:
    default = vars(klass).get(name, _REQUIRED)  # the default written with this annotation
    arguments: dict[str, Any] = {}
    if isinstance(default, FieldSpec):
        arguments, default = default.arguments, default.default
    if set(arguments) - _NUMBER_BOUNDS - _LENGTH_BOUNDS:
        raise Unsupported(f"{cls.__name__}.{name}: Field arguments {sorted(arguments)}")
    if default is not _REQUIRED and not isinstance(default, (type(None), str, int, float, tuple)):
        raise Unsupported(f"{cls.__name__}.{name}: a mutable default")
    check = _checker(_resolve(klass, annotation, for_pydantic=False))
    if arguments:
        check = _bounded(check, arguments)
    return check, default is _REQUIRED, default


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
    if annotation is Any:
        return _anything
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _lazy_model(annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return _literal(args)
    if origin in (Union, types.UnionType):
        return _union([_checker(a) for a in args], args)
    if origin is list and len(args) == 1:
        return _list(_checker(args[0]))
    if origin is dict and len(args) == 2 and args[0] is str:
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
