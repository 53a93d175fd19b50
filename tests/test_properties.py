"""Property-based campaign: whatever the bytes, msgen answers with output or positioned errors.

Generated YAML uses the features that broke msgen before: explicit tags on scalars that do not
fit them, anchors, aliases and merge keys, deep nesting, byte-order marks, other encodings and
control characters; generated text is also spliced into a valid job at any field, so the later
stages (input models, the pod template schema, targets, the emitter) see it, and into KRM
ResourceList envelopes. The properties: no exception escapes, the exit status is 0 or 1, an
error run writes nothing to stdout, and what is written parses (JSON strictly). Each campaign
counts what msgen accepted and refused, and requires a share of each (tests/verdicts.py): one
that only ever saw refusals would not test the stages after them.

Bounded for CI: MSGEN_PROPERTY_EXAMPLES (default 300) examples per test, about 15 s in all on
one core. Run with a larger value to search harder; `-s` shows how many inputs were tried.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from msgen.hosts.kustomize import krm
from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen
from .verdicts import Verdicts
from .campaign import CAMPAIGN

JOB_TEXT = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
JOB_LINES = JOB_TEXT.splitlines(keepends=True)
VALUE_LINES = [i for i, line in enumerate(JOB_LINES) if ": " in line and not line.lstrip().startswith("#")]

#: How many inputs this module generated in this run (printed in pytest's summary).
generated = {"count": 0}


@pytest.fixture(autouse=True, scope="module")
def _report_count(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"property campaign: {generated['count']} generated inputs")


TAGS = ["", "!!int ", "!!float ", "!!bool ", "!!str ", "!!null ", "!!binary ", "!!timestamp ",
        "!custom ", "!!set ", "!!map ", "!!seq "]  # fmt: skip
SCALARS = ["abc", "", "maybe", "yes", "~", "null", ".nan", "-.Inf", ".inf", "0x1F", "0o17",
           "1_000", "1:30", "2024-01-01", "true", "2147483648", "-1", "0", "1e400", "'quoted'",
           '"\\x07"', '"\\0"', "1Gi", "Always"]  # fmt: skip


@st.composite
def flow_node(draw: st.DrawFn, anchors: list[str], depth: int = 0) -> str:
    """One flow-style YAML node: tagged scalars, collections, anchors, aliases, merge keys."""
    choice = draw(st.integers(0, 9 if depth < 4 else 3))
    if choice <= 2:
        text = draw(st.sampled_from(TAGS)) + draw(
            st.one_of(st.sampled_from(SCALARS), st.integers().map(str))
        )
    elif choice == 3 and anchors:
        return "*" + draw(st.sampled_from(anchors))
    elif choice <= 5:
        items = draw(st.lists(flow_node(anchors, depth + 1), max_size=4))
        text = "[" + ", ".join(items) + "]"
    elif choice == 6 and anchors:
        text = "{<<: *" + draw(st.sampled_from(anchors)) + ", k: 1}"
    elif choice == 7:
        deep = draw(st.one_of(st.integers(1, 140), st.integers(300, 700)))
        text = "[" * deep + "]" * deep
    else:
        keys = draw(st.lists(st.sampled_from(["a", "b", "name", "path", "<<", "?"]), max_size=4))
        values = [draw(flow_node(anchors, depth + 1)) for _ in keys]
        text = "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, values, strict=True)) + "}"
    if draw(st.integers(0, 4)) == 0:
        name = f"a{len(anchors)}"
        anchors.append(name)
        text = f"&{name} {text}"
    return text


#: plain scalars a YAML 1.1 or 1.2 reader takes for another type than a string
_NOT_WORDS = re.compile(r"(?i:true|false|yes|no|on|off|y|n|null|~)\Z|[-+.\d]")


@st.composite
def respelled(draw: st.DrawFn, value: str) -> str:
    """`value`, spelled another way that YAML reads alike: with an anchor, a comment after it,
    or a word quoted or tagged as the string it is (so that part of a campaign is accepted)."""
    forms = [f"&same {value}", f"{value}  # a comment"]
    if re.fullmatch(r"[A-Za-z/][-A-Za-z0-9_./:]*", value) and not _NOT_WORDS.match(value):
        forms += [f'"{value}"', f"'{value}'", f"!!str {value}"]
    return draw(st.sampled_from(forms))


@st.composite
def encoded(draw: st.DrawFn, text: str) -> bytes:
    """`text` as bytes, sometimes with a BOM, in another encoding, or with a control character."""
    how = draw(st.integers(0, 5))
    if how == 1:
        return "\ufeff".encode() + text.encode()
    if how == 2:
        return text.encode("utf-16")
    if how == 3:
        return text.encode("utf-8") + b"\xff\xfe"
    if how == 4 and text:
        at = draw(st.integers(0, len(text)))
        char = draw(st.sampled_from(["\x00", "\x07", "\x1b", "\x7f", "\u2028", "\x85"]))
        return (text[:at] + char + text[at:]).encode()
    return text.encode()


def check_render(verdicts: Verdicts, data: bytes, *args: str) -> None:
    generated["count"] += 1
    run = msgen("render", *args, "-", input=data)  # an exception fails the test here
    assert run.exit_code in (0, 1), run.stderr
    assert "internal error" not in run.stderr
    if not verdicts.count(run.exit_code == 0):
        assert run.stdout == "" and "error" in run.stderr
    elif "--format" in args:
        json.loads(run.stdout, parse_constant=_no_constant)
    else:
        list(yaml.safe_load_all(run.stdout))


def _no_constant(name: str) -> Any:
    raise AssertionError(f"{name} in JSON output")


@CAMPAIGN
@given(data=st.data())
def _any_yaml_document(verdicts: Verdicts, data: st.DataObject) -> None:
    anchors: list[str] = []
    body = data.draw(flow_node(anchors))
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: {body}\n"
    if data.draw(st.booleans()):
        text = body + "\n"
    check_render(verdicts, data.draw(encoded(text)), *data.draw(st.sampled_from([(), ("--format", "json")])))


def test_any_yaml_document_is_rendered_or_refused() -> None:
    verdicts = Verdicts("any YAML document")
    _any_yaml_document(verdicts)
    verdicts.require(accepted=0.05, refused=0.3)


@CAMPAIGN
@given(data=st.data())
def _any_value_anywhere(verdicts: Verdicts, data: st.DataObject) -> None:
    anchors: list[str] = []
    line_index = data.draw(st.sampled_from(VALUE_LINES))
    lines = list(JOB_LINES)
    key, _, value = lines[line_index].partition(": ")
    new = data.draw(st.one_of(flow_node(anchors), respelled(value.strip())))
    lines[line_index] = f"{key}: {new}\n"
    text = "".join(lines)
    if data.draw(st.booleans()):  # a second job, maybe of the same name
        text += "---\n" + text.replace("msjob-mnist", data.draw(st.sampled_from(["msjob-mnist", "other"])))
    target = data.draw(st.sampled_from(TARGETS))
    output = data.draw(st.sampled_from([(), ("--format", "json")]))
    check_render(verdicts, data.draw(encoded(text)), "--target", target, *output)


def test_a_job_with_any_value_anywhere_is_rendered_or_refused() -> None:
    verdicts = Verdicts("a job with any value anywhere")
    _any_value_anywhere(verdicts)
    verdicts.require(accepted=0.05, refused=0.3)


def resource_list_value() -> st.SearchStrategy[Any]:
    job = yaml.safe_load(JOB_TEXT)
    leaves = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.booleans(), st.just(job))
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(["data", "metadata", "items", "name", "target"]), inner, max_size=3),
        ),
        max_leaves=8,
    )


@CAMPAIGN
@given(
    items=st.one_of(resource_list_value(), st.lists(resource_list_value(), max_size=3)),
    config=resource_list_value(),
    drop=st.sampled_from([None, "items", "functionConfig", "kind"]),
)
def _any_resource_list(verdicts: Verdicts, cwd: str, items: Any, config: Any, drop: str | None) -> None:
    generated["count"] += 1
    envelope = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                "functionConfig": config}  # fmt: skip
    if drop:
        del envelope[drop]
    status, output, messages = krm.run_bytes(yaml.safe_dump(envelope).encode(), cwd)
    reply = yaml.safe_load(output)
    assert reply["kind"] == "ResourceList" and isinstance(reply["items"], list)
    assert status in (0, 1)
    if not verdicts.count(status == 0):
        assert reply["results"] and reply["items"] == [] and "error(s)" in messages[-1]


def test_any_resource_list_gets_a_resource_list_back(tmp_path_factory: Any) -> None:
    verdicts = Verdicts("any ResourceList")
    _any_resource_list(verdicts, str(tmp_path_factory.getbasetemp()))
    verdicts.require(accepted=0.05, refused=0.3)
