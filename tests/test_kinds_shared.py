"""msgen.kinds.shared: the one skeleton of every input kind's `to_plan` (validate, name, roles,
fields, then the Plan when none of them found an error) and the operators' shared checks."""

from __future__ import annotations

import pytest

from msgen import kinds
from msgen.kinds import shared
from msgen.model.diagnostics import Diagnostic
from msgen.model.plan import Options
from msgen.model.source import Source
from msgen.yamlio.yaml_loader import load_documents


def compiled(text: str) -> tuple[object, list[Diagnostic]]:
    (document,) = load_documents(Source("job.yaml", text))
    kind = kinds.lookup(document.data["apiVersion"], document.data["kind"])
    assert kind is not None
    return kind.to_plan(document, Options())


@pytest.mark.parametrize("api_version, kind", kinds.known_kinds())
def test_every_kind_follows_the_one_skeleton(api_version: str, kind: str) -> None:
    found = kinds.lookup(api_version, kind)
    assert isinstance(found, shared.InputKind)
    assert (found.api_version, found.kind) == (api_version, kind)
    assert "to_plan" not in vars(type(found)), "the skeleton's to_plan is the kind's"


MSJOB = """apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {name: Bad_Name}
spec:
  runPolicy: {cleanPodPolicy: None}
  msReplicaSpecs:
    Worker:
      template:
        spec:
          containers: [{name: trainer, image: x}]
    worker:
      template:
        spec:
          containers: [{name: mindspore}]
    Master:
      template:
        spec:
          containers: [{name: mindspore, image: x}]
"""


def test_one_run_reports_the_name_and_every_role_and_makes_no_plan() -> None:
    made, found = compiled(MSJOB)
    assert made is None
    messages = sorted(d.message for d in found)
    assert [m.split(":")[0].split(" ")[0] for m in messages] == ["Worker", "job", "more", "unknown"]
    assert "job name 'Bad_Name' is not accepted" in messages[1]
    assert "keys 'Worker' and 'worker' name the same replica type" in messages[2]
    assert "unknown replica type 'Master'; accepted: Scheduler, PS, Worker" in messages[3]


def test_an_ascendjob_of_another_framework_is_refused_once_without_reading_its_roles() -> None:
    made, found = compiled(
        "apiVersion: mindxdl.gitee.com/v1\nkind: AscendJob\n"
        "metadata: {name: a, labels: {framework: pytorch}}\n"
        "spec:\n  replicaSpecs:\n    Master:\n      template:\n        spec:\n"
        "          containers: [{name: ascend, image: x}]\n"
    )
    assert made is None
    assert [d.message.split(":")[0] for d in found] == ["framework 'pytorch'"]
