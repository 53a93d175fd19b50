"""JSON Schemas of the input kinds, generated from their models.

The same schemas are checked in under `schemas/` (a test fails when they drift), so editors
and CI pipelines can validate job files without installing msgen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .kinds import JobKind


def schema_for(job_kind: JobKind) -> dict[str, Any]:
    schema = job_kind.model().model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{job_kind.api_version} {job_kind.kind}",
        **{k: v for k, v in schema.items() if k != "title"},
    }


def schema_file_name(job_kind: JobKind) -> str:
    """`schemas/<group>_<version>_<kind>.json`, e.g. mindspore.gitee.com_v1_msjob.json."""
    group_version = job_kind.api_version.replace("/", "_")
    return f"{group_version}_{job_kind.kind.lower()}.json"
