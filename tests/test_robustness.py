"""No input makes msgen crash: whatever the bytes, the result is output or diagnostics.

Property tests feed the loader arbitrary text, and the compiler samples whose fields have been
replaced with arbitrary values, dropped or misspelt.
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


def assert_clean(text: str) -> None:
    result = compile_documents(text)
    if result.ok:
        to_yaml(result.objects)  # the output itself must be writable
    else:
        assert all(d.message for d in result.diagnostics)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_any_text(text: str) -> None:
    assert_clean(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALL_PATHS), json_values, st.sampled_from(["replace", "drop", "rename"]))
def test_any_change_to_a_sample(path: tuple[Any, ...], value: Any, how: str) -> None:
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
    assert_clean(yaml.safe_dump(job))


MULTI_DEVICE = [
    yaml.safe_load((SAMPLES / name).read_text())
    for name in ("mindspore/ascend-2x8-rank-table.yaml", "mindspore/gpu-2x8-msrun.yaml", "ascend/mindspore-acjob.yaml")
]
MULTI_DEVICE_PATHS = [(i, p) for i, job in enumerate(MULTI_DEVICE) for p in paths(job) if p]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MULTI_DEVICE_PATHS), json_values, st.sampled_from(["replace", "drop"]))
def test_any_change_to_a_multi_device_sample(where: tuple[int, tuple[Any, ...]], value: Any, how: str) -> None:
    sample, path = where
    job = copy.deepcopy(MULTI_DEVICE[sample])
    parent = job
    for part in path[:-1]:
        parent = parent[part]
    if how == "replace":
        parent[path[-1]] = value
    else:
        del parent[path[-1]]
    assert_clean(yaml.safe_dump(job))


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
