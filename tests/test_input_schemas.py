"""The JSON Schemas under schemas/ are what the models generate, and the models accept what
Kubernetes accepts in a pod template (no more, no fewer fields)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import kubernetes_validate
import pytest

from msgen import kinds
from msgen.kinds import podtemplate
from msgen.schemas import schema_file_name, schema_for

from .conftest import ROOT, msgen

SCHEMAS = ROOT / "schemas"


@pytest.mark.parametrize("api_version,kind", kinds.known_kinds())
def test_checked_in_schema_matches_model(api_version: str, kind: str, update_golden: bool) -> None:
    job_kind = kinds.lookup(api_version, kind)
    assert job_kind is not None
    path = SCHEMAS / schema_file_name(job_kind)
    generated = json.dumps(schema_for(job_kind), indent=2, sort_keys=True) + "\n"
    if update_golden:
        path.write_text(generated)
        return
    assert path.exists(), f"{path} is missing: run pytest --update-golden"
    assert path.read_text() == generated, f"{path} drifted from the model: pytest --update-golden"


def test_schema_command_prints_the_checked_in_schema() -> None:
    run = msgen("schema", "mindspore.gitee.com/v1/MSJob")
    assert run.exit_code == 0
    assert json.loads(run.stdout) == json.loads(
        (SCHEMAS / "mindspore.gitee.com_v1_msjob.json").read_text()
    )


def _kubernetes_fields(definition: str) -> set[str]:
    base = Path(os.path.dirname(kubernetes_validate.__file__)) / "kubernetes-json-schema"
    latest = kubernetes_validate.utils.latest_version()
    defs = json.loads((base / f"v{latest}-local-strict" / "_definitions.json").read_text())["$defs"]
    return set(defs[definition]["properties"])


@pytest.mark.parametrize(
    "ours,definition",
    [
        (podtemplate.POD_SPEC_FIELDS, "io.k8s.api.core.v1.PodSpec"),
        (podtemplate.CONTAINER_FIELDS, "io.k8s.api.core.v1.Container"),
        (podtemplate.OBJECT_META_FIELDS, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
        (tuple(podtemplate.EnvVar.model_fields), "io.k8s.api.core.v1.EnvVar"),
        (tuple(podtemplate.ContainerPort.model_fields), "io.k8s.api.core.v1.ContainerPort"),
        (tuple(podtemplate.ResourceRequirements.model_fields), "io.k8s.api.core.v1.ResourceRequirements"),
        (tuple(podtemplate.VolumeMount.model_fields), "io.k8s.api.core.v1.VolumeMount"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_field_tables_equal_kubernetes(ours: tuple[str, ...], definition: str) -> None:
    assert set(ours) == _kubernetes_fields(definition)
