"""Every sample input is valid for its operator's own CRD, where one is known.

`kubeflow.org/v1 MXJob` has two: training-operator's, and kubeflow mxnet-operator's older
`apiextensions/v1beta1` one (whose schema is under `spec.validation`). The 2020 MSJob,
`mlkube.io/v1beta1 MxJob` and `Caffe2Job` had no schema in their CRDs.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from .conftest import msgen, sample_files
from .kube_schemas import OUTPUT_CRDS, crd_validator
from .upstream_crds import crd_file

#: Spread over the Pythons CI runs: its time is jsonschema's, validating bytes the golden tests hold equal on every Python (tests/python_share.py).
pytestmark = pytest.mark.spread

CRDS = {
    ("mindspore.gitee.com/v1", "MSJob"): ["mindspore.gitee.com_msjobs.yaml"],
    ("kubeflow.org/v1", "MXJob"): ["kubeflow.org_mxjobs.yaml", "mxnet-operator_crd-v1.yaml"],
}
WITHOUT_SCHEMA = {
    ("kubeflow.org/v1", "MSJob"),
    ("mlkube.io/v1beta1", "MxJob"),
    ("kubeflow.org/v1alpha1", "Caffe2Job"),
    ("mindxdl.gitee.com/v1", "AscendJob"),  # ascend-operator's CRD is not among ../shared/crds
}


@functools.cache  # a CRD is read once: the larger ones take most of a second to parse
def crd_schema(file_name: str) -> dict[str, Any]:
    crd = yaml.safe_load(crd_file(file_name).read_text())
    spec = crd["spec"]
    if "versions" in spec and "schema" in spec["versions"][0]:
        schema: dict[str, Any] = spec["versions"][0]["schema"]["openAPIV3Schema"]
    else:
        schema = spec["validation"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize("sample", sample_files(), ids=lambda p: p.stem)
def test_sample_is_valid_for_its_crd(sample: Path) -> None:
    for document in yaml.safe_load_all(sample.read_text()):
        key = (document.get("apiVersion"), document.get("kind"))
        if key in WITHOUT_SCHEMA:
            continue
        assert key in CRDS, f"{sample}: no CRD known for {key}"
        for crd in CRDS[key]:
            validator = jsonschema.Draft7Validator(crd_schema(crd))
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
            assert errors == [], crd


def test_crd_validation_can_fail() -> None:
    validator = jsonschema.Draft7Validator(crd_schema("mindspore.gitee.com_msjobs.yaml"))
    bad = {"apiVersion": "mindspore.gitee.com/v1", "kind": "MSJob", "spec": {"msReplicaSpecs": {"Worker": {"replicas": "two"}}}}
    assert list(validator.iter_errors(bad))


def test_old_mxjob_crd_validation_can_fail() -> None:
    validator = jsonschema.Draft7Validator(crd_schema("mxnet-operator_crd-v1.yaml"))
    bad = {"spec": {"mxReplicaSpecs": {"Scheduler": {"replicas": 2}}}}
    assert list(validator.iter_errors(bad))


# ---- outputs: every JobSet, Volcano Job and PodGroup is valid for its upstream CRD ----------

GANG = """
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {name: gang}
spec:
  runPolicy:
    schedulingPolicy: {minAvailable: 3, queue: research, priorityClass: high}
  msReplicaSpecs:
    Scheduler: {template: {spec: {containers: [{name: mindspore, image: ms, resources: {requests: {cpu: 500m}}}]}}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: mindspore, image: ms, resources: {limits: {nvidia.com/gpu: 1, memory: 8Gi}}}]}}
"""


def rendered_crd_objects(*args: str, input: str | None = None) -> list[dict[str, Any]]:
    run = msgen("render", *args, input=input)
    assert run.exit_code == 0, run.stderr
    return [o for o in run.objects() if (o["apiVersion"], o["kind"]) in OUTPUT_CRDS]


# The samples' JobSets and Volcano Jobs are checked at every minor in test_kubernetes_schemas.
OUTPUT_CASES: list[tuple[str, ...]] = [
    ("-", t, "1.37", g)
    for t in ("indexed-job", "pod", "statefulset", "jobset", "volcano")
    for g in ("volcano", "scheduler-plugins")
    if (t, g) != ("volcano", "scheduler-plugins")
]


@pytest.mark.parametrize("case", OUTPUT_CASES, ids=lambda c: "-".join([Path(c[0]).stem or "gang", *c[1:]]))
def test_output_is_valid_for_its_crd(case: tuple[str, ...]) -> None:
    path, target, version, *gang = case
    args = [path, "--target", target, "--kube-version", version]
    if gang:
        args += ["--gang-scheduler", gang[0]]
    objects = rendered_crd_objects(*args, input=GANG)
    assert objects, "rendered no object with an upstream CRD"
    for obj in objects:
        validator = crd_validator(obj["apiVersion"], obj["kind"])
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(obj)]
        assert errors == [], f"{obj['kind']}/{obj['metadata']['name']}"


def test_output_crd_validation_can_fail() -> None:
    validator = crd_validator("jobset.x-k8s.io/v1alpha2", "JobSet")
    bad = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "x"}, "spec": {"startupPolicy": {"startupPolicyOrder": "Sideways"}}}
    assert list(validator.iter_errors(bad))
