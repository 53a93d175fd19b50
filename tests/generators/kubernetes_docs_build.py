"""Build `kubernetes_docs.json`: Kubernetes' own descriptions of the pod-template types.

The JSON Schemas of the input kinds (`msgen schema`, `schemas/`) describe every field a user
writes. For the parts of a job that are Kubernetes' own (the pod template, its containers, the
job's metadata) the best words are Kubernetes' own, which `kubernetes-validate` (a test
dependency) bundles with the OpenAPI schemas of each release. They are copied into a checked-in
file so that `msgen schema` needs no test dependency and a fresh clone regenerates the same
schemas. Regenerate after updating kubernetes-validate with

    python -m tests.generators.kubernetes_docs_build

(`pytest --update-golden` does the same); a test fails while the file is out of date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from msgen.checks import field_docs

OUTPUT = Path(field_docs.KUBERNETES_DOCS)

#: The input models that are Kubernetes types (their `$defs` names), and which type each is.
KUBERNETES_TYPES = {
    "PodTemplateSpec": "io.k8s.api.core.v1.PodTemplateSpec",
    "PodSpec": "io.k8s.api.core.v1.PodSpec",
    "Container": "io.k8s.api.core.v1.Container",
    "ContainerPort": "io.k8s.api.core.v1.ContainerPort",
    "EnvVar": "io.k8s.api.core.v1.EnvVar",
    "ResourceRequirements": "io.k8s.api.core.v1.ResourceRequirements",
    "VolumeMount": "io.k8s.api.core.v1.VolumeMount",
    "Volume": "io.k8s.api.core.v1.Volume",
    "ObjectMeta": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
}


def build(version: str | None = None) -> str:
    """The file's text, from the schemas of `version` (default: the newest bundled)."""
    import kubernetes_validate.utils as kv_utils

    from .pod_schema_build import _definitions

    version = version or kv_utils.latest_version()
    definitions = _definitions(version)
    types = {}
    for name, kubernetes_name in sorted(KUBERNETES_TYPES.items()):
        definition = definitions[kubernetes_name]
        types[name] = {
            "description": definition.get("description", ""),
            "properties": {
                field: schema["description"]
                for field, schema in sorted(definition.get("properties", {}).items())
                if schema.get("description")
            },
        }
    document = {"kubernetes": kv_utils.major_minor(version), "types": types}
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    OUTPUT.write_text(build(sys.argv[1] if len(sys.argv) > 1 else None), encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
