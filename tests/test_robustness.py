"""No input makes msgen crash: whatever the bytes, the result is output or diagnostics.

Property tests feed the loader arbitrary text, and the compiler samples whose fields have been
replaced with arbitrary values, dropped or misspelt. Each counts what was accepted and refused
and requires a share of both (tests/verdicts.py): a campaign of refusals alone would not reach
the stages after the input checks.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msgen import compile_documents
from msgen.yamlio.emit import to_yaml

from .conftest import SAMPLES, msgen
from .verdicts import Verdicts

SAMPLE = yaml.safe_load((SAMPLES / "mindspore" / "widedeep-ps.yaml").read_text())

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += paths(child, prefix + (index,))
    return found


ALL_PATHS = [p for p in paths(SAMPLE) if p]


def assert_clean(text: str) -> bool:
    """`text` compiles to writable output or to diagnostics with messages; whether it compiled."""
    result = compile_documents(text)
    if result.ok:
        to_yaml(result.objects)  # the output itself must be writable
    else:
        assert all(d.message for d in result.diagnostics)
    return result.ok


#: the same inputs on every run: a failure reproduces, and the shares required below hold
CAMPAIGN = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
SAMPLE_LINES = (SAMPLES / "mindspore" / "widedeep-ps.yaml").read_text().splitlines(keepends=True)
#: text a job may hold: arbitrary text, or a job's lines with arbitrary text put among them
TEXTS = st.one_of(
    st.text(max_size=300),
    st.builds(
        lambda at, text: "".join(SAMPLE_LINES[:at]) + text + "".join(SAMPLE_LINES[at:]),
        st.integers(0, len(SAMPLE_LINES)),
        st.text(max_size=40),
    ),
)


@CAMPAIGN
@given(text=TEXTS)
def _any_text(verdicts: Verdicts, text: str) -> None:
    verdicts.count(assert_clean(text))


def test_any_text() -> None:
    verdicts = Verdicts("any text")
    _any_text(verdicts)
    verdicts.require(accepted=0.05, refused=0.3)


@CAMPAIGN
@given(path=st.sampled_from(ALL_PATHS), value=json_values, how=st.sampled_from(["replace", "drop", "rename"]))
def _any_change_to_a_sample(verdicts: Verdicts, path: tuple[Any, ...], value: Any, how: str) -> None:
    job = copy.deepcopy(SAMPLE)
    parent = job
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if how == "replace":
        parent[last] = value
    elif how == "drop":
        del parent[last]
    elif isinstance(parent, dict):
        parent[f"{last}x"] = parent.pop(last)
    verdicts.count(assert_clean(yaml.safe_dump(job)))


def test_any_change_to_a_sample() -> None:
    verdicts = Verdicts("any change to a sample")
    _any_change_to_a_sample(verdicts)
    verdicts.require(accepted=0.1, refused=0.3)


MULTI_DEVICE = [
    yaml.safe_load((SAMPLES / name).read_text())
    for name in ("mindspore/ascend-2x8-rank-table.yaml", "mindspore/gpu-2x8-msrun.yaml", "ascend/mindspore-acjob.yaml")
]
MULTI_DEVICE_PATHS = [(i, p) for i, job in enumerate(MULTI_DEVICE) for p in paths(job) if p]


@CAMPAIGN
@given(where=st.sampled_from(MULTI_DEVICE_PATHS), value=json_values, how=st.sampled_from(["replace", "drop"]))
def _any_change_to_a_multi_device_sample(
    verdicts: Verdicts, where: tuple[int, tuple[Any, ...]], value: Any, how: str
) -> None:
    sample, path = where
    job = copy.deepcopy(MULTI_DEVICE[sample])
    parent = job
    for part in path[:-1]:
        parent = parent[part]
    if how == "replace":
        parent[path[-1]] = value
    else:
        del parent[path[-1]]
    verdicts.count(assert_clean(yaml.safe_dump(job)))


def test_any_change_to_a_multi_device_sample() -> None:
    verdicts = Verdicts("any change to a multi-device sample")
    _any_change_to_a_multi_device_sample(verdicts)
    verdicts.require(accepted=0.1, refused=0.3)


def test_env_listing_every_replica_in_every_pod_is_bounded_in_all() -> None:
    """Each bare pod of a Caffe2Job carries CAFFE2_CONFIG listing every replica: at the
    2000-replica cap that was 173 MB of output. The framework env repeated over all pods is
    bounded (output_size.MAX_REPEATED_ENV_BYTES), an error at `replicas`, found from the
    first pod, before the others are built."""
    from msgen.checks.output_size import MAX_REPEATED_ENV_BYTES

    text = (SAMPLES / "caffe2" / "resnet50-redis.yaml").read_text()
    many = text.replace("replicas: 2", "replicas: 2000")
    run = msgen("render", "-t", "pod", "-", input=many)
    assert run.exit_code == 1 and run.stdout == ""
    assert "<stdin>:12:17: error: spec.replicaSpecs.replicas: 2000 replicas in all: with target " in run.stderr
    assert "CAFFE2_CONFIG, which lists every replica" in run.stderr
    assert msgen("render", "-", input=many).exit_code == 0  # one template per role: linear
    fits = msgen("render", "-t", "pod", "-", input=text.replace("replicas: 2", "replicas: 600"))
    assert fits.exit_code == 0 and len(fits.stdout) < 2 * MAX_REPEATED_ENV_BYTES
