"""Strict validation against Kubernetes' own schemas and the upstream CRDs, loaded once.

`kubernetes_validate.validate()` reads its 1.2 MB definitions file and builds a validator on
every call; checking every output at every supported minor that way costs minutes. Here each
(version, apiVersion, kind) validator is built once, from the same files and the same draft
kubernetes-validate uses (`test_cached_validator_agrees_with_kubernetes_validate` keeps the
two equal), and each CRD's schema is read once.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml
from referencing import Registry, Resource

from msgen.model import versions

from .upstream_crds import crd_file

_SCHEMAS = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"

#: Custom resources msgen renders, and the upstream CRD that defines each (`upstream_crds`:
#: ../shared/crds, else the Go module cache).
OUTPUT_CRDS = {
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): "jobset.x-k8s.io_jobsets.yaml",
    ("batch.volcano.sh/v1alpha1", "Job"): "batch.volcano.sh_jobs.yaml",
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "scheduling.volcano.sh_podgroups.yaml",
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): "scheduling.x-k8s.io_podgroups.yaml",
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): "trainer.kubeflow.org_trainjobs.yaml",
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): "trainer.kubeflow.org_trainingruntimes.yaml",
}


def minors() -> list[str]:
    """Every minor version msgen renders for, oldest first: `1.25`, `1.26`, ... `1.37`."""
    (major, oldest), (_, newest) = versions.OLDEST, versions.NEWEST
    return [f"{major}.{minor}" for minor in range(oldest, newest + 1)]


@functools.cache
def _definitions(version: str) -> Resource[Any]:
    return Resource.from_contents(json.loads((_strict_dir(version) / "_definitions.json").read_text()))


def _strict_dir(version: str) -> Path:
    found = _SCHEMAS / f"v{version}.0-local-strict"
    assert found.is_dir(), f"kubernetes-validate has no schemas for Kubernetes {version}"
    return found


@functools.cache
def kubernetes_validator(version: str, api_version: str, kind: str) -> jsonschema.Draft202012Validator:
    """The strict validator kubernetes-validate would build for this kind at `version`."""
    # kubernetes-validate's file naming: rbac.authorization.k8s.io/v1 -> rbac-v1
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema = json.loads((_strict_dir(version) / f"{kind.lower()}-{group_version}.json").read_text())
    registry: Registry[Any] = _definitions(version) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def kubernetes_errors(obj: dict[str, Any], version: str) -> list[str]:
    """Why `obj` is not valid at Kubernetes `version` (strict: unknown fields are errors)."""
    validator = kubernetes_validator(version, obj["apiVersion"], obj["kind"])
    return [_shown(e) for e in validator.iter_errors(obj)]


@functools.cache
def crd_validator(api_version: str, kind: str) -> jsonschema.Draft7Validator:
    """The upstream CRD's schema for this custom resource (skips when neither ../shared nor the
    Go module cache has it)."""
    # libyaml's loader where PyYAML has it: a CRD runs to megabytes, seconds for the pure-Python one.
    crd = yaml.load(crd_file(OUTPUT_CRDS[(api_version, kind)]).read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    version = api_version.split("/")[1]
    found = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    return jsonschema.Draft7Validator(found["schema"]["openAPIV3Schema"])


def crd_errors(obj: dict[str, Any]) -> list[str]:
    """Why `obj` is not valid for its CRD: its schema's rules, and (strict, as `kubectl apply`
    checks fields) every field the schema does not know, which the API server would drop."""
    validator = crd_validator(obj["apiVersion"], obj["kind"])
    found = [_shown(e) for e in validator.iter_errors(obj)]
    return found + [f"{path}: unknown field" for path in unknown_fields(obj, validator.schema)]


def unknown_fields(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """The fields of `value` that a structural schema neither lists nor keeps unknown: the API
    server prunes them, so a misspelt field would vanish silently."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    out: list[str] = []
    if isinstance(value, dict):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if properties is not None and key in properties:
                out += unknown_fields(item, properties[key], where)
            elif isinstance(extra, dict):
                out += unknown_fields(item, extra, where)
            elif properties is not None and path:  # the top's metadata is ObjectMeta's
                out.append(where)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            out += unknown_fields(item, schema["items"], f"{path}.{i}")
    return out


def core_parts(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The core Kubernetes objects in `obj`: itself, or what a JobSet, a Volcano Job or a
    TrainingRuntime embeds.

    A CRD's schema usually waves embedded pod templates through unchecked, and their
    controllers hand them to the API server as they are: a JobSet's replicated Job becomes a
    `batch/v1` Job, a Volcano task's template becomes Pods, and Trainer builds a JobSet (named
    after the TrainJob) from its runtime's template. All must be valid Kubernetes.
    """
    name = obj["metadata"]["name"]
    if (obj["apiVersion"], obj["kind"]) == ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"):
        made = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "trainjob"},
                "spec": obj["spec"]["template"]["spec"]}
        return core_parts(made)
    if obj["apiVersion"] == "jobset.x-k8s.io/v1alpha2":
        return [
            {"apiVersion": "batch/v1", "kind": "Job", **r["template"],
             "metadata": {**(r["template"].get("metadata") or {}), "name": f"{name}-{r['name']}-0"}}
            for r in obj["spec"]["replicatedJobs"]
        ]
    if obj["apiVersion"] == "batch.volcano.sh/v1alpha1":
        return [
            {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"{name}-{t['name']}"}, "template": t["template"]}
            for t in obj["spec"]["tasks"]
        ]
    if (obj["apiVersion"], obj["kind"]) in OUTPUT_CRDS:
        return []  # a CRD only: checked against its schema (Kubernetes' own PodGroup is not one)
    return [obj]


def _shown(error: jsonschema.ValidationError) -> str:
    return f"{'.'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
