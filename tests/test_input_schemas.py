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
from msgen.hosts.command_line.schemas import schema_file_name, schema_for

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


def _objects(schema: dict[str, object]) -> list[tuple[str, dict[str, object]]]:
    """The schema's object definitions, the root among them, by name."""
    definitions = schema.get("$defs") or {}
    assert isinstance(definitions, dict)
    return [("<root>", schema), *definitions.items()]


@pytest.mark.parametrize("api_version,kind", kinds.known_kinds())
def test_every_field_a_user_writes_is_described(api_version: str, kind: str) -> None:
    """Editors show `description` while a job file is written; a pydantic title made from the
    field name ("Restartpolicy") would be shown instead and say nothing."""
    job_kind = kinds.lookup(api_version, kind)
    assert job_kind is not None
    schema = json.loads((SCHEMAS / schema_file_name(job_kind)).read_text())
    undescribed, titled = [], []
    for name, definition in _objects(schema):
        properties = definition.get("properties") or {}
        assert isinstance(properties, dict)
        for field, prop in properties.items():
            if len(str(prop.get("description") or "")) < 10:
                undescribed.append(f"{name}.{field}")
            if "title" in prop:
                titled.append(f"{name}.{field}")
    assert undescribed == [] and titled == []


def test_kubernetes_fields_carry_kubernetes_own_words() -> None:
    schema = json.loads((SCHEMAS / "mindspore.gitee.com_v1_msjob.json").read_text())
    definitions = schema["$defs"]
    restart = definitions["PodSpec"]["properties"]["restartPolicy"]["description"]
    assert restart.startswith("Restart policy for all containers within the pod.")
    assert definitions["Container"]["description"] == "A single application container that you want to run within a pod."
    msjob = definitions["MSJobSpec"]["properties"]["msReplicaSpecs"]["description"]
    assert msjob.startswith("The roles, keyed Scheduler, PS and Worker")


def test_the_kubernetes_descriptions_are_those_kubernetes_validate_bundles(update_golden: bool) -> None:
    from .generators import kubernetes_docs_build

    built = kubernetes_docs_build.build()
    if update_golden:
        kubernetes_docs_build.OUTPUT.write_text(built, encoding="utf-8")
    assert kubernetes_docs_build.OUTPUT.read_text(encoding="utf-8") == built, (
        "msgen/checks/kubernetes_docs.json is out of date: run python -m tests.generators.kubernetes_docs_build "
        "(or pytest --update-golden)"
    )


def test_the_schemas_regenerate_without_the_test_dependencies() -> None:
    """`msgen schema` (and so --update-golden in a fresh clone) reads only msgen's own files."""
    code = ("import sys, json; sys.modules['kubernetes_validate'] = None; "
            "from msgen import kinds; from msgen.hosts.command_line.schemas import schema_for; "
            "print(json.dumps(schema_for(kinds.lookup('mindspore.gitee.com/v1', 'MSJob')), indent=2, sort_keys=True))")
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (SCHEMAS / "mindspore.gitee.com_v1_msjob.json").read_text()
