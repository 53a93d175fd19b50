"""Property campaign, without a server: each class of the second hostile-input round.

Inputs come from `tests/mutations.py` (the differential test's generator), with the choices
drawn by hypothesis, which shrinks a failure to a small input. The properties:

- render: no traceback; exit 1 writes nothing and every error has a position; exit 0 writes
  objects the offline judge (`kube_oracle`) finds nothing wrong with, at the --kube-version
  and target given (pod-template values, job metadata, msgen's own objects, StatefulSet
  names, device requests);
- convert: a file render accepts, with tabs between its tokens, converts (no exit 70);
- msgen-krm: every error on stderr is among `results`; two items making the same object fail;
- input without documents: the error names the file and line 1;
- the env repeated in every pod stays within its bound, whatever the replicas.

Bounded for CI by MSGEN_PROPERTY_EXAMPLES (default 300) examples per test, as
tests/test_properties.py. Each campaign counts what msgen accepted and refused and requires a
share of the verdict its property is about (tests/verdicts.py): a property of accepted jobs
that saw none tested nothing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from msgen import compile_documents
from msgen.hosts.kustomize import krm
from msgen.model.plan import Options

from . import kube_oracle
from .conftest import SAMPLES, msgen
from . import mutations
from .mutation_classes import TARGETED
from .mutations import DrawChooser, generate, seeds
from .verdicts import Verdicts
from .campaign import CAMPAIGN, EXAMPLES

POOL = seeds()


@CAMPAIGN
@given(data=st.data())
def _generated_jobs(verdicts: Verdicts, data: st.DataObject) -> None:
    seed, text, options = generate(DrawChooser(data), POOL)
    compilation = compile_documents(text, "job.yaml", options)  # a traceback fails here
    if not verdicts.count(compilation.ok):
        errors = [d for d in compilation.diagnostics if d.is_error]
        assert errors and all(d.position is not None for d in errors), errors
        return
    found = kube_oracle.problems(compilation.objects, options.kube_version, options.target)
    assert not found, f"{seed} {options}:\n{text}\n{found}"


def test_generated_jobs_render_valid_objects_or_positioned_errors() -> None:
    verdicts = Verdicts("generated jobs")
    _generated_jobs(verdicts)
    verdicts.require(accepted=0.1, refused=0.1)


#: at least 100 per edit whatever MSGEN_PROPERTY_EXAMPLES says: below that, an edit that is
#: mostly refused (two devices) may see no accepted input (EDIT_SHARES)
@settings(CAMPAIGN, max_examples=max(100, EXAMPLES // 3))
@given(data=st.data())
def _class_of_the_round(verdicts: Verdicts, edit: str, data: st.DataObject) -> None:
    chooser = DrawChooser(data)
    seed, job = chooser.choice(POOL)
    job = copy.deepcopy(job)
    TARGETED[edit](chooser, job)
    options = mutations.options(chooser)
    text = yaml.safe_dump(job, sort_keys=False)
    compilation = compile_documents(text, "job.yaml", options)
    if verdicts.count(compilation.ok):
        found = kube_oracle.problems(compilation.objects, options.kube_version, options.target)
        assert not found, f"{edit} on {seed} {options}:\n{text}\n{found}"
    else:
        errors = [d for d in compilation.diagnostics if d.is_error]
        assert errors and all(d.position is not None for d in errors), errors


#: the shares of accepted and refused inputs each edit must see (most of its inputs are refused
#: by design where the edit is mostly a mistake: two kinds of device in one container)
EDIT_SHARES = {"two devices": (0.01, 0.5)}


@pytest.mark.parametrize("edit", sorted(TARGETED))
def test_each_class_of_the_round_is_refused_or_valid(edit: str) -> None:
    """The generator above finds the rare classes (a port named twice, a StatefulSet name of 53,
    two devices) once in thousands of inputs; here each is the edit, on any seed and target."""
    verdicts = Verdicts(f"the edit {edit}")
    _class_of_the_round(verdicts, edit)
    accepted, refused = EDIT_SHARES.get(edit, (0.05, 0.1))
    verdicts.require(accepted=accepted, refused=refused)


@CAMPAIGN
@given(data=st.data())
def _tabs(verdicts: Verdicts, data: st.DataObject) -> None:
    text = (SAMPLES / "mxnet" / "mx-job-dist.yaml").read_text()
    lines = text.splitlines(keepends=True)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        if ": " in line and not line.lstrip().startswith("#"):
            how = data.draw(st.sampled_from(["after-colon", "after-value"]))
            lines[i] = line.replace(": ", ":\t", 1) if how == "after-colon" else line.rstrip("\n") + "\t\n"
    mutated = "".join(lines)
    if not verdicts.count(msgen("render", "-", input=mutated).exit_code == 0):
        return
    run = msgen("convert", "-", input=mutated)
    assert run.exit_code == 0, run.stderr
    assert msgen("render", "-", input=run.stdout).exit_code == 0


def test_tabs_render_accepts_do_not_stop_convert() -> None:
    verdicts = Verdicts("tabs between tokens")
    _tabs(verdicts)
    verdicts.require(accepted=0.2)


JOB = yaml.safe_load((SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text())


@CAMPAIGN
@given(
    names=st.lists(st.sampled_from(["a", "b", "a"]), min_size=1, max_size=3),
    namespaces=st.lists(st.sampled_from([None, "x", "Bad_NS"]), min_size=3, max_size=3),
    option=st.sampled_from([{}, {"target": "pod"}, {"target": "bogus"}, {"kube-version": "1.2"}]),
    break_one=st.booleans(),
)
def _krm_results(
    verdicts: Verdicts, cwd: str, names: list[str], namespaces: list[str | None], option: dict[str, str], break_one: bool
) -> None:
    items = []
    for name, namespace in zip(names, namespaces, strict=False):
        metadata: dict[str, Any] = {"name": name, **({"namespace": namespace} if namespace else {})}
        items.append({**JOB, "metadata": metadata})
    if break_one:
        items[0] = {**items[0], "spec": {**items[0]["spec"], "runPolicy": {"backoffLimit": -1}}}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "f"}, "data": option}
    envelope = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items, "functionConfig": config}
    status, output, messages = krm.run(yaml.safe_dump(envelope), cwd)
    reply = yaml.safe_load(output)
    keys = [(i["metadata"]["name"], i["metadata"].get("namespace")) for i in items]
    if len(keys) != len(set(keys)):
        assert status == 1  # the same objects twice
    if not verdicts.count(status == 0):
        results = [_as_on_stderr(r) for r in reply["results"] if r["severity"] == "error"]
        first_lines = [m.split("\n", 1)[0] for m in messages]  # without the excerpt
        shown = [m.split(": error: ", 1)[1] for m in first_lines if ": error: " in m]
        shown += [m.split("error: ", 1)[1] for m in first_lines if m.startswith("error: ")]
        for message in shown:
            assert any(message in r for r in results), (message, results)
        assert reply["items"] == []


def test_krm_results_hold_every_error_and_duplicates_fail(tmp_path_factory: Any) -> None:
    verdicts = Verdicts("ResourceLists of jobs")
    _krm_results(verdicts, str(tmp_path_factory.getbasetemp()))
    verdicts.require(accepted=0.05, refused=0.3)


def _as_on_stderr(result: dict[str, Any]) -> str:
    """A result's message as stderr words it: `field: message`, without `line:column: `."""
    message = result["message"].split(": ", 1)[1] if "file" in result else result["message"]
    return f"{result['field']['path']}: {message}" if "field" in result else message


@CAMPAIGN
@given(parts=st.lists(st.sampled_from(["", "\n", "# c\n", "---\n", "  \n", "#\t\n"]), max_size=5), bom=st.booleans())
def test_input_without_documents_is_an_error_at_line_1(tmp_path_factory: Any, parts: list[str], bom: bool) -> None:
    text = ("\ufeff" if bom else "") + "".join(p for p in parts if p != "---\n")
    path = tmp_path_factory.mktemp("empty") / "job.yaml"
    path.write_text(text, encoding="utf-8")
    run = msgen("render", str(path))
    assert run.exit_code == 1 and run.stdout == ""
    assert run.stderr.startswith(f"{path}:1:1: error: no YAML documents found"), run.stderr


@settings(max_examples=max(5, EXAMPLES // 30), deadline=None, derandomize=True)
@given(
    replicas=st.integers(1, 3000),
    kind=st.sampled_from(["caffe2/resnet50-redis.yaml", "mxnet/mx-job-dist.yaml"]),
    target=st.sampled_from(["pod", "indexed-job"]),
)
def _repeated_env(verdicts: Verdicts, replicas: int, kind: str, target: str) -> None:
    from msgen.checks.output_size import MAX_REPEATED_ENV_BYTES

    text = (SAMPLES / kind).read_text()
    text = text.replace("replicas: 2", f"replicas: {replicas}").replace("replicas: 3", f"replicas: {replicas}")
    compilation = compile_documents(text, "job.yaml", Options(target=target))  # type: ignore[arg-type]
    if verdicts.count(compilation.ok):
        size = sum(len(str(env.get("value", ""))) for obj in compilation.objects
                   for template in kube_oracle.pod_templates(obj)
                   for c in template["spec"]["containers"] for env in c.get("env") or [])  # fmt: skip
        assert size <= MAX_REPEATED_ENV_BYTES + 2**20
    else:
        assert all(d.position is not None for d in compilation.diagnostics if d.is_error)


def test_env_repeated_in_every_pod_stays_bounded() -> None:
    verdicts = Verdicts("repeated env")
    _repeated_env(verdicts)
    verdicts.require(accepted=0.1, refused=0.1)
