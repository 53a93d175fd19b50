"""Build `pod_template_schema.json` from Kubernetes' own OpenAPI schemas.

The schemas come from `kubernetes-validate` (a test dependency), which bundles the JSON Schema
form of the OpenAPI document every Kubernetes release publishes. Only the definitions a pod
template reaches are kept, without descriptions and the `x-kubernetes-*` merge hints, so the
checked-in file stays small and loads in about a millisecond. Fields that older releases
msgen supports do not know are listed under `since` with the first release that has them, so
a template is checked as the cluster's own API server would check it. Regenerate after updating
kubernetes-validate with

    python -m tests.generators.pod_schema_build

(`pytest --update-golden` does the same); a test fails while the file is out of date.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = "io.k8s.api.core.v1.PodTemplateSpec"
OUTPUT = Path(__file__).resolve().parents[2] / "msgen" / "checks" / "pod_template_schema.json"
#: The keywords the validator in `pod_schema` understands; the bundled schemas use no others
#: below a pod template (the build fails on any it does not know).
_KEPT = {
    "type", "$ref", "properties", "additionalProperties", "items", "required", "format", "oneOf",
    "enum",
}  # fmt: skip
_DROPPED_PREFIX = "x-kubernetes-"
_REF = re.compile(r"^#/\$defs/(.+)$")


def _definitions(version: str) -> dict[str, Any]:
    import kubernetes_validate.utils as kv_utils

    text = kv_utils.schema_contents(
        f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version
    )
    document = text if isinstance(text, dict) else json.loads(text)
    found: dict[str, Any] = document.get("$defs") or document["definitions"]
    return found


def build(version: str | None = None) -> str:
    """The artefact's text, from the schemas of `version` (default: the newest bundled)."""
    import kubernetes_validate.utils as kv_utils

    from msgen.model import versions

    version = version or kv_utils.latest_version()
    definitions = _definitions(version)
    kept: dict[str, Any] = {}
    todo = [ROOT]
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        kept[name] = _compact(definitions[name], todo)
    # One definition per line: compact, yet a schema update reads as a short diff.
    lines = [f"{json.dumps(_short(name))}:{_dumps(kept[name])}" for name in sorted(kept, key=_short)]
    older = sorted(
        {v for v in kv_utils.all_versions() if versions.parse(v) < versions.parse(version)},
        key=versions.parse,
    )
    since = _since(kept, older, version)
    head = f'{{"kubernetes":{json.dumps(kv_utils.major_minor(version))},'
    head += f'"root":{json.dumps(_short(ROOT))},"since":{_dumps(since)},\n'
    return head + '"definitions":{\n' + ",\n".join(lines) + "\n}}\n"


def _since(kept: dict[str, Any], older: list[str], newest: str) -> dict[str, dict[str, str]]:
    """Per definition, the fields missing from the oldest supported release: the first with them."""
    from msgen.model import versions

    first: dict[str, dict[str, str]] = {}
    pending = {name: set(schema.get("properties", {})) for name, schema in kept.items()}
    if not older:
        return {}
    for index, version in enumerate(older + [newest]):
        definitions = _definitions(version) if version != newest else None
        for name, fields in pending.items():
            known = fields if definitions is None else set(
                definitions.get(name, {}).get("properties", {})
            )
            for field in sorted(fields & known):
                if index > 0:
                    shown = versions.show(versions.parse(version))
                    first.setdefault(_short(name), {})[field] = shown
            fields -= known
    return first


def _compact(schema: Any, todo: list[str]) -> Any:
    if isinstance(schema, list):
        return [_compact(item, todo) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description" or key.startswith(_DROPPED_PREFIX):
            continue
        if key not in _KEPT:
            raise ValueError(f"schema keyword {key!r} is not understood by msgen's validator")
        if key == "$ref":
            match = _REF.match(value)
            if match is None:
                raise ValueError(f"unexpected $ref {value!r}")
            todo.append(match.group(1))
            out[key] = _short(match.group(1))
        elif key == "properties":
            out[key] = {name: _compact(sub, todo) for name, sub in value.items()}
        else:
            out[key] = _compact(value, todo)
    return out


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _short(name: str) -> str:
    """`io.k8s.api.core.v1.Volume` → `core.v1.Volume`: the names stay unique and readable."""
    return name.removeprefix("io.k8s.api.").removeprefix("io.k8s.apimachinery.pkg.")


def main() -> None:
    OUTPUT.write_text(build(sys.argv[1] if len(sys.argv) > 1 else None))
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
