"""Input models declared once: checked cheaply when the input is valid, explained by pydantic when not.

Why: a render starts a fresh process (Argo CD, kustomize), and importing pydantic and building
the input models cost most of that start-up (bench/README.md has the figures), although nearly every input msgen sees is valid. So the kind modules declare
their models with the classes here, written exactly as pydantic models (`class MSJob(_Model):
spec: MSJobSpec`, `Field(default=None, ge=0)`, `model_config`), and:

- `input_model_check.validate` checks a document against the declaration with a small checker built
  from the same annotations on first use (strict types, `extra="forbid"`, required fields, literals,
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

from ..model import type_forms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeVar
    M = TypeVar("M", bound="BaseModel")
else:
    from ..model.type_forms import Any

#: The names of `typing` a declaration's annotations may use, as the checker reads them (a
#: declaring module imports them for mypy only; `msgen.model.type_forms` has their run-time
#: forms, and `_for_pydantic` turns them into typing's for pydantic).
FORMS = {"Any": type_forms.Any, "Literal": type_forms.Literal}

REQUIRED: Any = object()


class FieldSpec:
    """What `Field(...)` returns in a declaration: the default and pydantic's other arguments."""

    __slots__ = ("default", "arguments")

    def __init__(self, default: Any, arguments: dict[str, Any]):
        self.default = default
        self.arguments = arguments


def Field(default: Any = REQUIRED, **arguments: Any) -> Any:  # noqa: N802 - pydantic's name
    """pydantic's `Field`, recorded for both the checker and the pydantic model."""
    return FieldSpec(default, arguments)


def ConfigDict(**values: Any) -> dict[str, Any]:  # noqa: N802 - pydantic's name
    return dict(values)


class _ModelType(type):
    @property
    def model_fields(cls) -> dict[str, Any]:
        """pydantic's field table (builds the pydantic model: for tests and tools, not renders)."""
        declared: Any = cls
        fields: dict[str, Any] = pydantic_model(declared).model_fields
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


def own_fields(cls: type) -> dict[str, Any]:
    """The fields `cls` itself declares: name -> annotation (a string under `from __future__`)."""
    annotations: dict[str, Any] = vars(cls).get("__annotations__", {})
    return {n: a for n, a in annotations.items() if not (isinstance(a, str) and "ClassVar" in a)}


def declared_bases(cls: type) -> list[type[BaseModel]]:
    """`cls` and its declared bases, base first, as pydantic collects fields."""
    return [k for k in reversed(cls.__mro__) if issubclass(k, BaseModel) and k is not BaseModel]


def field_names(cls: type[BaseModel]) -> list[str]:
    """The fields a declared model has, its bases' first (no pydantic needed)."""
    return list(dict.fromkeys(n for k in declared_bases(cls) for n in own_fields(k)))


def config_of(cls: type[BaseModel]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for klass in declared_bases(cls):
        config.update(vars(klass).get("model_config", {}))
    return config


class _Declared(dict[str, Any]):
    """A module's names, with declared models swapped for their pydantic models on lookup."""

    def __init__(self, module_globals: dict[str, Any]):
        import typing

        super().__init__(Any=typing.Any, Literal=typing.Literal)
        self.module_globals = module_globals

    def __missing__(self, name: str) -> Any:
        return _for_pydantic(self.module_globals[name])


def resolve(cls: type, annotation: Any, *, for_pydantic: bool) -> Any:
    if not isinstance(annotation, str):
        return _for_pydantic(annotation) if for_pydantic else annotation
    module_globals = vars(sys.modules[cls.__module__])
    if for_pydantic:
        return eval(annotation, module_globals, _Declared(module_globals))  # noqa: S307
    return _evaluated(cls.__module__, annotation)


@functools.lru_cache(maxsize=None)
def _evaluated(module: str, annotation: str) -> Any:
    """A module's annotation text as an object; cached, as most (`str | None`) recur often."""
    return eval(annotation, vars(sys.modules[module]), FORMS)  # noqa: S307 - the module's own text


def _for_pydantic(annotation: Any) -> Any:
    """An annotation object as pydantic reads it: declared models replaced by pydantic models
    (create_model), `msgen.model.type_forms`' forms (plan.py's `Literal` aliases, a passed-through
    field's `Any`) by typing's."""
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pydantic_model(annotation)
    if annotation is type_forms.Any:
        return typing.Any
    if isinstance(annotation, type_forms.Choices):
        return typing.Literal[annotation.values]
    if isinstance(annotation, type_forms.Union):
        return typing.Union[tuple(_for_pydantic(member) for member in annotation.members)]
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
    for name, annotation in own_fields(cls).items():
        namespace["__annotations__"][name] = resolve(cls, annotation, for_pydantic=True)
        if name in own:
            default = own[name]
            if isinstance(default, FieldSpec):
                arguments = dict(default.arguments)
                if default.default is not REQUIRED:
                    arguments["default"] = default.default
                default = pydantic.Field(**arguments)
            namespace[name] = default
    metaclass: Any = type(pydantic.BaseModel)
    model = metaclass(cls.__name__, bases, namespace)
    _PYDANTIC[cls] = model
    return model
