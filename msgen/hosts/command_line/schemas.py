"""JSON Schemas of the input kinds, generated from their models and described for editors.

The same schemas are checked in under `schemas/` (a test fails when they drift), so editors
and CI pipelines can validate job files without installing msgen. Editors show a field's
`description` as the user types, so every property gets one: Kubernetes' own words for the
Kubernetes types (`kinds/kubernetes_docs.json`), msgen's for the job-level fields
(`kinds/field_docs.py`). pydantic's per-property titles ("Restartpolicy", made from the field
name) are dropped: they would be shown instead of the description and say nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...kinds import JobKind


def schema_for(job_kind: JobKind) -> dict[str, Any]:
    schema = job_kind.model().model_json_schema()
    _describe(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{job_kind.api_version} {job_kind.kind}",
        **{k: v for k, v in schema.items() if k != "title"},
    }


def _describe(schema: dict[str, Any]) -> None:
    from ...checks.field_docs import FIELDS, ROOT, TYPES, kubernetes_docs

    kubernetes = kubernetes_docs()
    for name, definition in schema.get("$defs", {}).items():
        if name in kubernetes:
            definition["description"] = kubernetes[name]["description"]
            fields: Any = kubernetes[name]["properties"]
        else:
            fields = FIELDS.get(name, {})
        if name in TYPES:
            definition["description"] = TYPES[name]
        _describe_properties(definition, fields)
    _describe_properties(schema, ROOT)


def _describe_properties(definition: dict[str, Any], fields: dict[str, str]) -> None:
    for field, prop in definition.get("properties", {}).items():
        prop.pop("title", None)
        if field in fields:
            prop["description"] = fields[field]


def schema_file_name(job_kind: JobKind) -> str:
    """`schemas/<group>_<version>_<kind>.json`, e.g. mindspore.gitee.com_v1_msjob.json."""
    group_version = job_kind.api_version.replace("/", "_")
    return f"{group_version}_{job_kind.kind.lower()}.json"
