"""Every error one run can find, and no error that only repeats another (`compile.all_findings`).

A user who fixes what a run reported must not meet a new error that the same run could have
found; nor read one mistake several times, in several checks' words.
"""

from __future__ import annotations

import re

import pytest

from msgen.compile.all_findings import beyond, template_paths
from msgen.kinds import lookup
from msgen.model.diagnostics import Diagnostic, Position, Severity

from .conftest import msgen

THREE_MISTAKES = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: x
spec:
  msReplicaSpecs:
    Worker:
      replcas: 2
      template:
        spec:
          containers:
          - name: mindspore
            image: img
            comand: [python]
            imagePullPolicy: Allways
"""


def _errors(stderr: str) -> list[str]:
    """`line:column: path` of each error reported."""
    return re.findall(r"^<stdin>:(\d+:\d+): error: (\S+):", stderr, re.M)


def test_the_model_the_schema_and_the_api_rules_report_in_one_run() -> None:
    run = msgen("render", "-", input=THREE_MISTAKES)
    assert run.exit_code == 1 and run.stdout == ""
    assert _errors(run.stderr) == [
        ("8:7", "spec.msReplicaSpecs.Worker.replcas"),
        ("14:13", "spec.msReplicaSpecs.Worker.template.spec.containers[0].comand"),
        ("15:30", "spec.msReplicaSpecs.Worker.template.spec.containers[0].imagePullPolicy"),
    ], run.stderr
    assert "'Allways' is not accepted (did you mean 'Always'?); accepted: Always, IfNotPresent, Never" in run.stderr
    assert "msgen: 3 error(s)" in run.stderr


def test_a_schema_error_does_not_hide_an_api_rule_error_in_the_same_template() -> None:
    job = THREE_MISTAKES.replace("      replcas: 2\n", "").replace(
        "            comand: [python]\n", "            livenessProbe: {httpGett: {port: 1}}\n")
    run = msgen("render", "-", input=job)
    assert [path for _, path in _errors(run.stderr)] == [
        "spec.msReplicaSpecs.Worker.template.spec.containers[0].livenessProbe.httpGett",
        "spec.msReplicaSpecs.Worker.template.spec.containers[0].imagePullPolicy",
    ], run.stderr


def test_the_targets_limits_are_reported_with_the_templates_errors() -> None:
    job = THREE_MISTAKES.replace("replcas: 2", "replicas: 200000").replace("            comand: [python]\n", "")
    run = msgen("render", "-", input=job)
    assert [path for _, path in _errors(run.stderr)] == [
        "spec.msReplicaSpecs.Worker.replicas",
        "spec.msReplicaSpecs.Worker.template.spec.containers[0].imagePullPolicy",
    ], run.stderr
    assert "200000 replicas of Worker are too many for target indexed-job" in run.stderr


def test_every_bad_annotation_and_the_jobs_other_errors_in_one_run() -> None:
    job = THREE_MISTAKES.replace(
        "  name: x\n", "  name: x\n  annotations: {msgen/launcher: msrnu, msgen/gang-scheduler: volcan}\n")
    run = msgen("render", "-", input=job)
    paths = [path for _, path in _errors(run.stderr)]
    assert paths[:2] == ["metadata.annotations.msgen/launcher", "metadata.annotations.msgen/gang-scheduler"], run.stderr
    assert len(paths) == 5, run.stderr
    assert "metadata.annotations.msgen/launcher: 'msrnu' is not accepted (did you mean 'msrun'?)" in run.stderr
    assert "msgen/launcher: msgen/launcher" not in run.stderr  # the path is said once


def test_a_bad_target_annotation_leaves_the_templates_unjudged() -> None:
    """The API server's rules depend on the target: with the one meant unknown, the
    templates are not judged by the run's, which may not be the one meant."""
    job = THREE_MISTAKES.replace("  name: x\n", "  name: x\n  annotations: {msgen/target: statefulst}\n")
    run = msgen("render", "-", input=job)
    paths = [path for _, path in _errors(run.stderr)]
    assert paths == ["metadata.annotations.msgen/target", "spec.msReplicaSpecs.Worker.replcas",
                     "spec.msReplicaSpecs.Worker.template.spec.containers[0].comand"], run.stderr
    assert "(did you mean 'statefulset'?)" in run.stderr


NO_CASCADE = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: x
spec:
  msReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
          - name: mindspore
            imagee: img
            volumeMounts: [{name: data, mountPath: /d}]
          volumes:
          - name: data
            hostPath: {pth: /x}
          hostname: ok
"""


def test_one_mistake_is_one_error() -> None:
    """`imagee:` is not also "needs an image"; a `hostPath` without `path` is one error,
    whichever check names it; and a mount of a volume with errors is not "not a volume"."""
    run = msgen("render", "-", input=NO_CASCADE)
    assert [path for _, path in _errors(run.stderr)] == [
        "spec.msReplicaSpecs.Worker.template.spec.containers[0].imagee",
        "spec.msReplicaSpecs.Worker.template.spec.volumes[0].hostPath",
        "spec.msReplicaSpecs.Worker.template.spec.volumes[0].hostPath.pth",
    ], run.stderr
    assert run.stderr.count("hostPath: missing required field 'path'") == 1
    assert "needs an image" not in run.stderr and "is not a volume of this pod" not in run.stderr


@pytest.mark.parametrize("value, meant", [
    ("Allways", "Always"), ("always", "Always"), ("IfNotPresnt", "IfNotPresent"), ("Sometimes", None)])
def test_a_near_enum_value_names_the_one_meant(value: str, meant: str | None) -> None:
    run = msgen("render", "-", input=THREE_MISTAKES.replace("Allways", value))
    hint = f"{value!r} is not accepted (did you mean {meant!r}?); accepted:"
    assert (hint in run.stderr) == (meant is not None), run.stderr
    assert f"{value!r} is not accepted" in run.stderr


def test_a_near_value_of_the_input_model_names_the_one_meant() -> None:
    job = THREE_MISTAKES.replace("      replcas: 2\n", "      restartPolicy: OnFailur\n")
    run = msgen("render", "-", input=job)
    assert "'OnFailur' is not accepted (did you mean 'OnFailure'?); accepted: 'Always', 'OnFailure'" in run.stderr


def _error(path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    return Diagnostic(Severity.ERROR, message, Position("f", line, column), path)


def test_beyond_keeps_what_is_new_and_drops_what_repeats() -> None:
    earlier = [
        _error("a.b", "'x' is not accepted", 3, 5),
        _error("c", "missing required field 'd'", 7, 1),
        _error("e[0].imagee", "unknown field 'imagee' (did you mean 'image'?)", 9, 3),
    ]
    later = [
        _error("a.b", "another word for it", 3, 5),          # the same field
        _error("a.b.c[1]", "inside it", 4, 1),                # inside a value found wrong
        _error("a.bb", "a sibling whose name starts alike", 2, 1),
        _error("c.d", "d must not be empty", 7, 1),          # the missing field
        _error("c", "d must not be empty", 7, 1),            # at the mapping, same place
        _error("c.e", "another field of the mapping", 8, 1),
        _error("e[0]", "a container needs an image", 8, 3),  # the mapping with the slip
        _error("e[1]", "the next container", 10, 3),
    ]
    assert [d.message for d in beyond(earlier, later)] == [
        "a sibling whose name starts alike", "another field of the mapping", "the next container"]
    warnings_only = [d._replace(severity=Severity.WARNING) for d in earlier]
    assert beyond(warnings_only, later) == later


def test_template_paths_follow_the_kinds_model() -> None:
    msjob = lookup("mindspore.gitee.com/v1", "MSJob")
    legacy = lookup("kubeflow.org/v1", "MSJob")
    assert msjob is not None and legacy is not None
    data = {"spec": {"msReplicaSpecs": {"Scheduler": {"template": {}}, "Worker": {"template": "no"},
                                        "PS": {"replicas": 1}}}}
    assert list(template_paths(msjob.model(), data)) == [("spec", "msReplicaSpecs", "Scheduler", "template")]
    listed = {"spec": {"replicaSpecs": [{"template": {}}, {"template": {"spec": {}}}]}}
    assert list(template_paths(legacy.model(), listed)) == [
        ("spec", "replicaSpecs", 0, "template"), ("spec", "replicaSpecs", 1, "template")]
    assert list(template_paths(msjob.model(), {"spec": {"msReplicaSpecs": ["a list"]}})) == []
