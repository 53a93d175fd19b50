"""Every sample input is valid for its operator's own CRD, where one is known.

`kubeflow.org/v1 MXJob` has two: training-operator's, and kubeflow mxnet-operator's older
`apiextensions/v1beta1` one (whose schema is under `spec.validation`). The 2020 MSJob,
`mlkube.io/v1beta1 MxJob` and `Caffe2Job` had no schema in their CRDs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from .conftest import SHARED, sample_files

CRDS = {
    ("mindspore.gitee.com/v1", "MSJob"): ["mindspore.gitee.com_msjobs.yaml"],
    ("kubeflow.org/v1", "MXJob"): ["kubeflow.org_mxjobs.yaml", "mxnet-operator_crd-v1.yaml"],
}
WITHOUT_SCHEMA = {
    ("kubeflow.org/v1", "MSJob"),
    ("mlkube.io/v1beta1", "MxJob"),
    ("kubeflow.org/v1alpha1", "Caffe2Job"),
}


def crd_schema(file_name: str) -> dict[str, Any]:
    crd = yaml.safe_load((SHARED / "crds" / file_name).read_text())
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
