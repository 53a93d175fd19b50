"""No change to an older kind's sample makes msgen crash: output or diagnostics, always."""

from __future__ import annotations

import copy
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msgen import compile_documents
from msgen.hosts.command_line.convert import convert_source
from msgen.model.plan import Options
from msgen.model.source import Source

from .conftest import SAMPLES
from .test_robustness import assert_clean, json_values, paths

SAMPLES_BY_KIND = [
    yaml.safe_load((SAMPLES / name).read_text())
    for name in (
        "mindspore-legacy/msjob-mnist-dist.yaml",
        "mxnet/mx-job-dist.yaml",
        "mxnet/mxjob-gpu-workers.yaml",
        "caffe2/resnet50-redis.yaml",
    )
]
CASES = [(i, p) for i, sample in enumerate(SAMPLES_BY_KIND) for p in paths(sample) if p]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(CASES), json_values, st.sampled_from(["replace", "drop", "rename"]))
def test_any_change_to_an_older_kind(case: tuple[int, tuple[Any, ...]], value: Any, how: str) -> None:
    sample, path = case
    job = copy.deepcopy(SAMPLES_BY_KIND[sample])
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
    text = yaml.safe_dump(job)
    assert_clean(text)
    result = compile_documents(text, options=Options(target="pod"))
    assert result.ok or all(d.message for d in result.diagnostics)
    conversion = convert_source(Source("<input>", text))
    if conversion.text is not None:
        assert not [d for d in conversion.diagnostics or [] if d.is_error]
        converted = compile_documents(conversion.text)
        assert converted.ok or all(d.message for d in converted.diagnostics)


def test_null_ports_get_the_default_port() -> None:
    """`ports: null` is what the API server accepts as no ports, in every kind."""
    texts = [
        (SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml").read_text().replace(
            "              ports:\n                - containerPort: 9991\n                  name: mxjob-port\n",
            "              ports: null\n",
        ),
        "apiVersion: mindspore.gitee.com/v1\nkind: MSJob\nmetadata: {name: a}\nspec:\n"
        "  msReplicaSpecs:\n    Scheduler:\n      template:\n        spec:\n          containers:\n"
        "          - {name: mindspore, image: x, ports: null}\n"
        "    Worker:\n      template:\n        spec:\n          containers:\n"  # (a Scheduler alone is refused)
        "          - {name: mindspore, image: x, ports: null}\n",
    ]
    for text in texts:
        result = compile_documents(text)
        assert result.ok, result.diagnostics
        assert "containerPort" in yaml.safe_dump(result.objects)
