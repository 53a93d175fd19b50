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

from .conftest import SAMPLES, msgen
from .multi_device_pods import ACJOB, GPU
from .test_errors import GOOD_WORKER, fails, job


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


def test_name_that_is_not_a_dns_label() -> None:
    err = fails(job(GOOD_WORKER, name="Wide_Deep"))
    assert (
        "<stdin>:4:9: error: metadata.name: job name 'Wide_Deep' is not accepted: must be a DNS-1035 "
        "label: lower-case letters, digits and '-', starting with a letter and ending with a letter or digit"
    ) in err


def test_missing_name() -> None:
    text = job(GOOD_WORKER).replace("metadata:\n  name: demo\n", "metadata:\n  labels: {a: b}\n")
    assert "<stdin>:4:3: error: metadata: missing required field 'name'" in fails(text)


#: kinds whose operators accept replica keys in any letter case: (sample, its replica types)
CASES = {
    "AscendJob": (SAMPLES / "ascend" / "mindspore-acjob.yaml", ("Scheduler", "Worker")),
    "MXJob": (SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml", ("Scheduler", "Server", "Worker")),
}


@pytest.mark.parametrize("kind", CASES)
@pytest.mark.parametrize("spell", [str.lower, str.upper])
def test_replica_keys_in_any_case_render_the_same(kind: str, spell: object) -> None:
    path, types = CASES[kind]
    text = path.read_text()
    changed = text
    for name in types:
        changed = changed.replace(f"\n    {name}:\n", f"\n    {spell(name)}:\n")  # type: ignore[operator]
    assert changed != text
    expected = msgen("render", "-", input=text)
    run = msgen("render", "-", input=changed)
    assert run.exit_code == 0, run.stderr
    assert run.stdout == expected.stdout and run.stdout


@pytest.mark.parametrize("kind", CASES)
def test_two_keys_for_one_replica_type_are_an_error(kind: str) -> None:
    path, _ = CASES[kind]
    text = path.read_text()
    block = text[text.index("\n    Worker:\n"):]  # the last replica spec runs to the end
    doubled = text.rstrip("\n") + block.replace("    Worker:", "    worker:", 1)
    line = doubled.count("\n", 0, doubled.index("\n    worker:\n")) + 2
    run = msgen("render", "-", input=doubled)
    assert run.exit_code == 1 and run.stdout == ""
    assert f"<stdin>:{line}:5: error: " in run.stderr
    assert "more than one Worker: keys 'Worker' and 'worker' name the same replica type; accepted: one key per replica type" in run.stderr








def test_null_ports_get_the_default_port() -> None:
    for text, port in ((ACJOB, "ascendjob-port"), (GPU, "msjob-port")):
        text = text.replace("              ports:\n                - containerPort: 2222\n                  name: ascendjob-port\n", "              ports: null\n", 1)
        text = text.replace("              command: [\"python\", \"/data/resnet/train.py\", \"--device_target=GPU\", \"--run_distribute=True\"]\n              volumeMounts", "              command: [\"python\", \"/data/resnet/train.py\", \"--device_target=GPU\", \"--run_distribute=True\"]\n              ports: null\n              volumeMounts", 1)
        assert "ports: null" in text
        run = msgen("render", "-", input=text)
        assert run.exit_code == 0, run.stderr
        scheduler = next(o for o in run.objects() if o["kind"] == "Job" and o["metadata"]["name"].endswith("-scheduler"))
        assert scheduler["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 2222, "name": port}]
