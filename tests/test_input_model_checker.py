"""The input models' fast checker against pydantic, which explains errors from the same declarations.

A render accepts valid input through `msgen.checks.input_model`'s checker without importing pydantic;
anything the checker does not accept goes to pydantic. These tests hold the two in step, for
every kind and whatever fields the models gain: the checker accepts every sample, never accepts
what pydantic refuses (on the samples and hundreds of mutations of them), and gives to_plan the
same values pydantic would.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, cast

import pytest
import yaml

from msgen import kinds
from msgen.checks.input_model import BaseModel, field_names, pydantic_model
from msgen.checks.input_model_check import model_checker, validate
from msgen.model.extension_points import JobKind

from .conftest import needs_shared, sample_files, shared_files


def _model(job_kind: JobKind | None) -> type[BaseModel]:
    """A kind's input model, as the checker and pydantic read it (every kind declares its model
    with checks.input_model's BaseModel)."""
    assert job_kind is not None
    return cast("type[BaseModel]", job_kind.model())


def _kind_models() -> list[type[BaseModel]]:
    return [_model(kinds.lookup(api, kind)) for api, kind in kinds.known_kinds()]


def _sample_documents() -> list[tuple[type[BaseModel], dict[str, Any]]]:
    out = []
    for path in sample_files():
        for data in yaml.safe_load_all(path.read_text()):
            job_kind = kinds.lookup(data.get("apiVersion"), data.get("kind"))
            if job_kind is not None:
                out.append((_model(job_kind), data))
    return out


def _dump(value: Any) -> Any:
    """A declared or pydantic instance as plain data: its attributes, recursively."""
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    if hasattr(value, "__dict__") and not isinstance(value, type):
        attributes = dict(vars(value))
        attributes.update(getattr(value, "__pydantic_extra__", None) or {})
        return {k: _dump(v) for k, v in attributes.items() if not k.startswith("__")}
    return value


def _mutations(data: Any) -> Iterator[Any]:
    """Copies of `data` with one thing changed: a value of another type, an unknown or missing key."""
    wrong: dict[type, list[Any]] = {str: [1, True, None, []], int: ["1", True, -1, 1.5, 70000], bool: ["true", 0],
                                    float: ["x"], dict: [[], "x", None], list: [{}, "x", None, []]}
    paths: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        paths.append(path)
        if isinstance(value, dict):
            stack.extend((v, path + (k,)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(value))
    for path in paths:
        target = _at(data, path)
        for replacement in wrong.get(type(target), []):
            yield _replaced(data, path, lambda _old, new=replacement: new)
        if isinstance(target, dict):
            yield _replaced(data, path, lambda old: {**old, "unknownField": 1})
            for key in target:
                yield _replaced(data, path, lambda old, key=key: {k: v for k, v in old.items() if k != key})


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _replaced(data: Any, path: tuple[Any, ...], change: Any) -> Any:
    if not path:
        return change(data)
    copied = copy.deepcopy(data)
    parent = _at(copied, path[:-1])
    parent[path[-1]] = change(parent[path[-1]])
    return copied


@pytest.mark.parametrize("model", _kind_models(), ids=lambda m: m.__name__)
def test_every_kind_is_fully_handled_by_the_checker(model: type[BaseModel]) -> None:
    # Raises `Unsupported` when a model uses something the checker does not implement: every
    # render of that kind would then import pydantic. Extend the checker when this fails.
    model_checker(model)


def test_the_checker_accepts_every_sample_with_pydantics_values() -> None:
    documents = _sample_documents()
    assert documents
    for model, data in documents:
        fast = validate(model, data)
        assert fast is not None, f"the checker defers on a valid {model.__name__}"
        assert type(fast) is model
        assert _dump(fast) == _dump(pydantic_model(model).model_validate(data))


def test_the_checker_never_accepts_what_pydantic_refuses() -> None:
    from pydantic import ValidationError

    checked = 0
    for model, data in _sample_documents():
        for mutated in _mutations(data):
            checked += 1
            fast = validate(model, mutated)
            try:
                slow = pydantic_model(model).model_validate(mutated)
            except ValidationError:
                assert fast is None, f"the checker accepts what pydantic refuses: {mutated}"
                continue
            if fast is not None:
                assert _dump(fast) == _dump(slow)
    assert checked > 1000


def test_the_pydantic_model_has_the_declared_fields() -> None:
    for model in _kind_models():
        assert list(pydantic_model(model).model_fields) == field_names(model)


class _Ratio(BaseModel):
    """A declaration with a float field: pydantic's strict float takes an int, the checker defers."""

    model_config = {"extra": "forbid", "strict": True}
    value: float


def test_where_the_checker_defers_pydantic_decides() -> None:
    from msgen.checks.validation import validate_model
    from msgen.model.source import Source
    from msgen.yamlio.yaml_loader import load_documents

    for text, accepted in (("value: 1.5\n", True), ("value: 2\n", True), ("value: x\n", False)):
        document = load_documents(Source("ratio.yaml", text))[0]
        found, diagnostics = validate_model(_Ratio, document)
        assert (found is not None) == accepted, text
        if accepted:
            assert found is not None and float(found.value) == float(text.split()[1])
            assert diagnostics == []
        else:
            assert [d.message for d in diagnostics] == ["'x' is not accepted; accepted: a number"]
    assert validate(_Ratio, {"value": 2}) is None  # deferred: pydantic accepted it above


@needs_shared("upstream")
def test_the_checker_agrees_with_pydantic_on_the_operators_own_job_files() -> None:
    from pydantic import ValidationError

    checked = 0
    for path in shared_files("upstream", "**/*.yaml"):
        try:
            documents = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError:
            continue
        for data in documents:
            job_kind = kinds.lookup(data.get("apiVersion"), data.get("kind")) if isinstance(data, dict) else None
            if job_kind is None:
                continue
            checked += 1
            model = _model(job_kind)
            fast = validate(model, data)
            try:
                slow = pydantic_model(model).model_validate(data)
            except ValidationError:
                assert fast is None, path
                continue
            assert fast is not None, f"the checker defers on {path}, which pydantic accepts"
            assert _dump(fast) == _dump(slow)
    assert checked
