"""msgen.model.type_forms: the run-time stand-ins for `typing` behave as typing's do where msgen uses them."""

from __future__ import annotations

import importlib
import pkgutil
import types
import typing

import pytest

import msgen
from msgen.model import type_forms
from msgen.model.type_forms import Choices, Literal, arguments, origin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from msgen.model.type_forms import NamedTuple  # as msgen's modules declare records


class _Record(NamedTuple):
    """A record."""

    name: str
    size: int = 1
    tags: tuple[str, ...] = ()

    @property
    def twice(self) -> int:
        return self.size * 2

    def label(self) -> str:
        return f"{self.name}:{self.size}"


class _TypingRecord(typing.NamedTuple):
    """A record."""

    name: str
    size: int = 1
    tags: tuple[str, ...] = ()

    @property
    def twice(self) -> int:
        return self.size * 2

    def label(self) -> str:
        return f"{self.name}:{self.size}"


def test_a_record_is_built_as_typings_namedtuple_builds_it() -> None:
    ours, theirs = _Record("a", 2), _TypingRecord("a", 2)
    assert ours._fields == theirs._fields == ("name", "size", "tags")
    assert ours._field_defaults == theirs._field_defaults
    assert tuple(ours) == tuple(theirs) and isinstance(ours, tuple)
    assert repr(ours) == repr(theirs).replace("_TypingRecord", "_Record")
    assert ours._replace(size=5) == _Record("a", 5) and ours._asdict() == theirs._asdict()
    assert (ours.twice, ours.label()) == (theirs.twice, theirs.label())
    assert _Record.__doc__ == _TypingRecord.__doc__
    assert _Record.__module__ == _TypingRecord.__module__ and _Record.__qualname__ == "_Record"
    assert list(_Record.__annotations__) == list(_TypingRecord.__annotations__)
    assert _Record("b") == ("b", 1, ()) and hash(_Record("b")) == hash(("b", 1, ()))
    with pytest.raises(AttributeError):
        ours.size = 3  # type: ignore[misc]


def test_a_record_refuses_what_typing_refuses() -> None:
    for base in (NamedTuple, typing.NamedTuple):
        with pytest.raises(TypeError, match="Non-default namedtuple field late cannot follow default field"):
            _declare(base, {"__annotations__": {"early": int, "late": int}, "early": 0})
        with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):
            _declare(base, {"__annotations__": {"a": int}, "_replace": lambda self: self})


def _declare(base: object, body: dict[str, object]) -> type:
    return types.new_class("Bad", (base,), {}, lambda ns: ns.update({"__module__": __name__, **body}))


def test_a_record_does_not_evaluate_its_annotations() -> None:
    # typing made each string annotation a ForwardRef, compiling its text
    record: typing.Any = _declare(NamedTuple, {"__annotations__": {"a": "NoSuchName"}})
    assert record._fields == ("a",) and record.__annotations__ == {"a": "NoSuchName"}


@pytest.mark.parametrize("form", [
    '"a"', '"a", "b"', '1, True, None',
])
def test_literal_values_and_unions_read_as_typings(form: str) -> None:
    ours, theirs = eval(f"Literal[{form}]"), eval(f"typing.Literal[{form}]")  # noqa: S307 - test text
    assert origin(ours) is Literal and typing.get_origin(theirs) is typing.Literal
    assert arguments(ours) == typing.get_args(theirs)
    for combine in (lambda x: x | None, lambda x: None | x, lambda x: int | x | str, lambda x: types.GenericAlias(list, (x,))):
        assert arguments(combine(ours))[0:1] != () and [
            arguments(a) if isinstance(a, Choices) else a for a in arguments(combine(ours))
        ] == [typing.get_args(a) if typing.get_origin(a) is typing.Literal else a
              for a in typing.get_args(combine(theirs))]


def test_generic_aliases_and_python_unions_read_as_typings() -> None:
    expected: dict[object, object] = {
        list[int]: list, dict[str, list[str]]: dict, int | None: type_forms.Union,
        str | int | None: type_forms.Union, int: None, str: None,
    }
    for annotation, kind in expected.items():
        assert origin(annotation) is kind
        assert arguments(annotation) == typing.get_args(annotation)


def test_generic_typevar_and_protocol_are_plain_at_run_time() -> None:
    class Box(type_forms.Generic):
        pass

    assert typing.cast(typing.Any, Box)[int] is Box and type_forms.TypeVar("T", bound=int) == "T"
    assert type_forms.Protocol.__mro__ == (type_forms.Protocol, object)


def _render_path_modules() -> list[str]:
    """msgen's modules that use a form of type_forms at run time (the render path's)."""
    found = []
    for module in pkgutil.walk_packages(msgen.__path__, "msgen."):
        if module.name.startswith(("msgen.reconcile", "msgen.hosts.command_line.reconcile", "msgen.model.type_forms")):
            continue
        source = importlib.util.find_spec(module.name)
        assert source is not None and source.origin is not None
        with open(source.origin, encoding="utf-8") as text:
            if "from .type_forms import" in (body := text.read()) or "model.type_forms import" in body:
                found.append(module.name)
    return found


def test_every_record_of_msgen_has_its_declared_fields_and_defaults() -> None:
    # Each record class built by type_forms.NamedTuple has every annotated name as a field, in
    # order, its defaults on the last fields, and its class body's other attributes.
    modules = _render_path_modules()
    records: list[typing.Any] = [
        value for name in modules for value in vars(importlib.import_module(name)).values()
        if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")
        and value.__module__ == name
    ]
    assert len(records) >= 15, [r.__qualname__ for r in records]
    for record in records:
        body = {k: v for k, v in vars(record).items() if k not in record._fields and not k.startswith("_")}
        assert list(record._field_defaults) == list(record._fields)[len(record._fields) - len(record._field_defaults):]
        assert all(getattr(record, k) is v for k, v in body.items())
        assert record.__annotations__.keys() == dict.fromkeys(record._fields).keys()


@pytest.mark.parametrize("call", [
    lambda record: record("a", size=2, tags=("x",)), lambda record: record(name="a"),
    lambda record: record(tags=("y",), name="b"), lambda record: record._make(["a", 2, ()]),
    lambda record: record("a")._replace(name="b", size=3), lambda record: record(),
    lambda record: record("a", name="b"), lambda record: record("a", sizes=2),
    lambda record: record("a", 1, (), 4), lambda record: record._make(["a"]),
    lambda record: record("a")._replace(sizes=2),
])
def test_a_records_calls_build_or_refuse_as_typings(call: typing.Callable[[typing.Any], typing.Any]) -> None:
    # `__new__` is written once for every record (collections.namedtuple compiles one per class)
    outcomes: list[object] = []
    for record in (_Record, _TypingRecord):
        try:
            outcomes.append(tuple(call(record)))
        except (TypeError, ValueError) as refused:
            outcomes.append(type(refused))
    assert outcomes[0] == outcomes[1]


def test_records_work_where_collections_has_no_private_field_accessor(monkeypatch: pytest.MonkeyPatch) -> None:
    """`collections._tuplegetter` is CPython's private name: without it, fields are properties."""
    import collections
    import importlib.util

    monkeypatch.delattr(collections, "_tuplegetter")
    spec = importlib.util.find_spec("msgen.model.type_forms")
    assert spec is not None and spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)

    base: typing.Any = fresh.NamedTuple

    class Point(base):  # type: ignore[misc]
        x: int
        y: int = 2

    point = Point(1)
    assert (point.x, point.y, point) == (1, 2, (1, 2))
    assert isinstance(vars(Point)["x"], property) and vars(Point)["x"].__doc__ == "Alias for field number 0"
    with pytest.raises(AttributeError):
        point.x = 3
