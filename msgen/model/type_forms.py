"""The few `typing` forms msgen's modules need at run time, without importing `typing`.

Why: a render is a fresh process (Argo CD and kustomize start msgen for every refresh and
build), and `typing` (with `warnings`) was 13 M of a cold render's ~170 M instructions
(bench/README.md, fifth round) although a render uses almost nothing of it. Most of what
msgen's modules take from `typing` is for mypy only: such a module says
`from __future__ import annotations`, and imports those names under `if TYPE_CHECKING:` with
`TYPE_CHECKING = False` defined in the module (mypy takes any name spelled `TYPE_CHECKING` as
true; ruff's TC004 fails a name imported there but used at run time). The forms that *are*
used at run time come from here, under the same test, so that mypy still sees `typing`'s::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import Literal, NamedTuple
    else:
        from msgen.model.type_forms import Literal, NamedTuple

- `NamedTuple`: a record class as `typing.NamedTuple` builds it (fields from the annotations,
  in order, with their defaults; the class body's methods, properties and docstring copied
  over; `_replace`, `_asdict`, `_make`), without evaluating the annotations (typing made each
  string annotation a `ForwardRef`, compiling it) and without compiling a `__new__` per class
  as `collections.namedtuple` does;
- `Literal`: `Literal["a", "b"]` is a `Choices` holding the values (the option table and the
  input-model checker read them with `origin` and `arguments`, as `typing.get_origin` and
  `get_args` do for typing's);
- `Any`: a marker the input-model checker takes as "anything";
- `Generic`, `TypeVar`, `Protocol`: a subscriptable base, a placeholder, a plain base.

`tests/test_model_type_forms.py` holds each form to `typing`'s on what msgen uses of it, and
`tests/test_render_imports.py` fails a render that loads `typing`.
"""

from __future__ import annotations

import sys
import types

try:  # C field accessors, as namedtuple's; `collections` names them so on CPython 3.8 and later
    from collections import _tuplegetter  # type: ignore[attr-defined]
except ImportError:  # a Python whose `collections` does not: namedtuple's own fallback
    from operator import itemgetter

    def _tuplegetter(index: int, doc: str) -> property:
        return property(itemgetter(index), doc=doc)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any as _AnyType

#: What `_replace` raises for a name that is not a field, as namedtuple does on this Python.
_UNEXPECTED_FIELD: type[Exception] = TypeError if sys.version_info >= (3, 13) else ValueError

#: The attributes `typing.NamedTuple` refuses to let a class body set, and those it does not copy.
_PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                         "_field_defaults", "_make", "_replace", "_asdict", "_source"})
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})
_MISSING = object()


class _Record(tuple):  # type: ignore[type-arg]
    """What every record class shares: `collections.namedtuple`'s methods, written once.

    `collections.namedtuple` compiles each class's `__new__` from text (`eval`), about 0.25 M
    instructions a class, ~5 M for the records a render defines; here `__new__` reads the
    class's `_fields` and `_field_defaults` instead.
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _field_defaults: dict[str, _AnyType] = {}

    def __new__(cls, *values: _AnyType, **named: _AnyType) -> _AnyType:
        if not named and len(values) == len(cls._fields):
            return tuple.__new__(cls, values)
        return tuple.__new__(cls, cls._arranged(values, named))

    @classmethod
    def _arranged(cls, values: tuple[_AnyType, ...], named: dict[str, _AnyType]) -> list[_AnyType]:
        """The values of a call with names or defaults, in field order, or namedtuple's TypeError."""
        fields, name = cls._fields, cls.__name__
        if len(values) > len(fields):
            raise TypeError(f"{name}() takes {len(fields)} positional arguments but {len(values)} were given")
        arranged = [*values, *[_MISSING] * (len(fields) - len(values))]
        for key, value in named.items():
            if key not in fields:
                raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
            index = fields.index(key)
            if arranged[index] is not _MISSING:
                raise TypeError(f"{name}() got multiple values for argument '{key}'")
            arranged[index] = value
        for index, value in enumerate(arranged):
            if value is _MISSING:
                if fields[index] not in cls._field_defaults:
                    raise TypeError(f"{name}() missing required argument: '{fields[index]}'")
                arranged[index] = cls._field_defaults[fields[index]]
        return arranged

    @classmethod
    def _make(cls, iterable: _AnyType) -> _AnyType:
        made = tuple.__new__(cls, iterable)
        if len(made) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(made)}")
        return made

    def _replace(self, /, **named: _AnyType) -> _AnyType:
        replaced = self._make(map(named.pop, self._fields, self))
        if named:  # namedtuple's own refusal: a TypeError from Python 3.13, a ValueError before
            raise _UNEXPECTED_FIELD(f"Got unexpected field names: {list(named)!r}")
        return replaced

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({', '.join(f'{n}={v!r}' for n, v in zip(self._fields, self, strict=True))})"

    def _asdict(self) -> dict[str, _AnyType]:
        return dict(zip(self._fields, self, strict=True))

    def __getnewargs__(self) -> tuple[_AnyType, ...]:
        return tuple(self)


class _RecordType(type):
    """Builds each subclass of `NamedTuple` as `typing.NamedTuple` does (fields from the
    annotations, in order, with their defaults; the body's methods, properties and docstring
    copied), on `_Record` instead of through `collections.namedtuple`."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, _AnyType]) -> _AnyType:
        if not bases:  # NamedTuple itself
            return super().__new__(mcls, name, bases, namespace)
        annotations = dict(namespace.get("__annotations__", {}))
        fields = tuple(annotations)
        defaults: dict[str, _AnyType] = {}
        for field in fields:
            if field in namespace:
                defaults[field] = namespace[field]
            elif defaults:
                raise TypeError(f"Non-default namedtuple field {field} cannot follow default field"
                                f"{'s' if len(defaults) > 1 else ''} {', '.join(defaults)}")
        body: dict[str, _AnyType] = {
            "__slots__": (), "_fields": fields, "_field_defaults": defaults, "__match_args__": fields,
            "__module__": namespace["__module__"], "__annotations__": annotations,
            "__doc__": f"{name}({', '.join(fields)})",
        }
        for index, field in enumerate(fields):
            body[field] = _tuplegetter(index, f"Alias for field number {index}")
        for key, value in namespace.items():
            if key in _PROHIBITED:
                raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
            if key not in _SPECIAL and key not in fields:
                body[key] = value
        return type(name, (_Record,), body)


class NamedTuple(metaclass=_RecordType):
    """`class Role(NamedTuple): replicas: int` makes a record class (a tuple, as typing's)."""


class Choices:
    """What `Literal[...]` is at run time: the values, and `|` for `Literal[...] | None`."""

    __slots__ = ("values",)

    def __init__(self, values: tuple[object, ...]):
        self.values = values

    def __or__(self, other: object) -> Union:
        return Union((self, other))

    def __ror__(self, other: object) -> Union:
        return Union((other, self))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Choices) and other.values == self.values

    def __hash__(self) -> int:
        return hash(self.values)

    def __repr__(self) -> str:
        return f"Literal[{', '.join(map(repr, self.values))}]"


class Union:
    """A union one of whose members is a `Choices` (`X | Y` of classes is Python's own)."""

    __slots__ = ("members",)

    def __init__(self, members: tuple[object, ...]):
        self.members = tuple(None.__class__ if m is None else m for m in members)

    def __or__(self, other: object) -> Union:
        return Union((*self.members, other))

    def __ror__(self, other: object) -> Union:
        return Union((other, *self.members))

    def __repr__(self) -> str:
        return " | ".join(map(repr, self.members))


class _LiteralForm:
    """`Literal`: subscripted, it gives the `Choices`."""

    def __getitem__(self, values: object) -> Choices:
        return Choices(values if isinstance(values, tuple) else (values,))

    def __repr__(self) -> str:
        return "Literal"


Literal = _LiteralForm()


class _AnyForm:
    def __repr__(self) -> str:
        return "Any"


Any = _AnyForm()


def origin(annotation: object) -> object:
    """`typing.get_origin` for the forms msgen's declarations use: `list`/`dict` of
    `list[X]`/`dict[K, V]`, `Literal` of `Literal[...]`, `Union` of any union, else None."""
    if isinstance(annotation, Choices):
        return Literal
    if isinstance(annotation, (Union, types.UnionType)):
        return Union
    if isinstance(annotation, types.GenericAlias):
        return annotation.__origin__
    return None


def arguments(annotation: object) -> tuple[object, ...]:
    """`typing.get_args` likewise: the values of a `Literal`, the members of a union, the
    arguments of `list[X]`/`dict[K, V]`, else ()."""
    if isinstance(annotation, Choices):
        return annotation.values
    if isinstance(annotation, Union):
        return annotation.members
    if isinstance(annotation, (types.UnionType, types.GenericAlias)):
        return annotation.__args__
    return ()


class Generic:
    """`Generic[T]` as a base: the class, subscriptable (`InputKind[MSJob]` is `InputKind`)."""

    __slots__ = ()

    def __class_getitem__(cls, item: object) -> type:
        return cls


def TypeVar(name: str, *constraints: object, bound: object = None) -> str:  # noqa: N802 - typing's name
    """A type variable is mypy's: at run time its name."""
    return name


class Protocol:
    """A protocol is mypy's: at run time a plain base."""

    __slots__ = ()
