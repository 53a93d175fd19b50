"""The run-policy annotation's JSON is json's compact, sorted JSON, written without json.

`msgen.model.run_policy.compact_json` writes what the annotation holds itself, so a render
loads no `json`; held here to `json.dumps(..., sort_keys=True, separators=(",", ":"))` on
generated data (text with quotes, escapes, controls and non-ASCII, integers, flags, null,
nested mappings and lists, floats it leaves to json), and read back by `parse`.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from msgen import compile_documents
from msgen.model import run_policy

from .conftest import SAMPLES
from .campaign import CAMPAIGN


_TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["Worker", "ms-job", "a\"b", "a\\b", "\n", "\x7f", "é", "😀", "", "indexed-job"]),
)
_DATA = st.recursive(
    st.one_of(_TEXT, st.integers(-(2**70), 2**70), st.booleans(), st.none(), st.floats(allow_nan=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=20,
)


@CAMPAIGN
@given(_DATA)
def test_compact_json_is_jsons(value: Any) -> None:
    assert run_policy.compact_json(value) == json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_the_typical_jobs_annotation_reads_back() -> None:
    text = (SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml").read_text()
    result = compile_documents(text)
    assert result.ok, result.diagnostics
    written = {obj["metadata"]["annotations"][run_policy.ANNOTATION] for obj in result.objects
               if run_policy.ANNOTATION in obj["metadata"].get("annotations", {})}
    assert len(written) == 1
    (annotation,) = written
    assert annotation == json.dumps(json.loads(annotation), sort_keys=True, separators=(",", ":"))
    assert run_policy.parse(annotation).job == "ms-widedeep-dataparallel"
