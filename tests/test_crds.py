"""Every sample input is an MSJob that ms-operator's own CRD accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from .conftest import SHARED, sample_files


def crd_schema(file_name: str) -> dict[str, Any]:
    crd = yaml.safe_load((SHARED / "crds" / file_name).read_text())
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


@pytest.mark.parametrize("sample", sample_files(), ids=lambda p: p.stem)
def test_sample_is_valid_for_the_msjob_crd(sample: Path) -> None:
    validator = jsonschema.Draft7Validator(crd_schema("mindspore.gitee.com_msjobs.yaml"))
    for document in yaml.safe_load_all(sample.read_text()):
        if document.get("kind") != "MSJob":
            continue
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]
        assert errors == []


def test_crd_validation_can_fail() -> None:
    validator = jsonschema.Draft7Validator(crd_schema("mindspore.gitee.com_msjobs.yaml"))
    bad = {"apiVersion": "mindspore.gitee.com/v1", "kind": "MSJob", "spec": {"msReplicaSpecs": {"Worker": {"replicas": "two"}}}}
    assert list(validator.iter_errors(bad))
