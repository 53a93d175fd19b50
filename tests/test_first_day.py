"""A new user's first day, tried as one would after `pip install`: what the help and the README
say is what msgen does, and nothing a user asked for is overruled in silence.
"""

from __future__ import annotations

import json
import re
from typing import cast
from pathlib import Path

import pytest
import yaml

from msgen.yamlio.inputs import MANIFEST_SUFFIXES
from msgen.model.plan import TargetName
from msgen.model.type_forms import arguments

from .conftest import ROOT, SAMPLES, msgen, msgen_process

#: msgen.targets.NAMES, typed (plan.py's `Literal` is msgen.model.type_forms' at run time)
TARGETS: tuple[TargetName, ...] = cast("tuple[TargetName, ...]", arguments(TargetName))


def test_render_help_and_readme_name_every_file_a_directory_is_read_for(tmp_path: Path) -> None:
    job = json.dumps(yaml.safe_load((SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()))
    (tmp_path / "job.json").write_text(job)
    assert "kind: Job" in msgen("render", str(tmp_path)).stdout  # a directory's JSON is read
    help_text = " ".join(msgen("render", "--help").stdout.split())
    readme = next(line for line in (ROOT / "README.md").read_text().splitlines()
                  if line.startswith("msgen render jobs/"))  # fmt: skip
    for suffix in MANIFEST_SUFFIXES:
        assert f"*{suffix}" in help_text, help_text
        assert f"*{suffix}" in readme, readme


UNCLOSED = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: j
spec:
  msReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
            - name: mindspore
              image: ms
              command: {opened}python, train.py
              args: ["--x"]
"""


@pytest.mark.parametrize("opened,closing", [("[", "]"), ("{", "}")])
def test_an_unclosed_bracket_names_the_line_that_opened_it(opened: str, closing: str) -> None:
    run = msgen("render", "-", input=UNCLOSED.format(opened=opened))
    assert run.exit_code == 1 and run.stdout == ""
    assert run.stderr.startswith("<stdin>:14:"), run.stderr  # where the parser noticed
    assert f"the {opened!r} opened at line 13, column 24 is not closed" in run.stderr, run.stderr


def test_an_unclosed_quote_names_where_it_starts() -> None:
    run = msgen("render", "-", input='metadata:\n  name: "j\n')
    assert run.exit_code == 1
    assert "while scanning a quoted scalar that starts at line 2, column 9" in run.stderr, run.stderr


SCHEDULER_ONLY = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: j
spec:
  msReplicaSpecs:
    Scheduler:
      template:
        spec:
          containers: [{name: mindspore, image: ms}]
{more}"""
ROLE = "    {role}:\n      replicas: {replicas}\n      template:\n        spec:\n          containers: [{{name: mindspore, image: ms}}]\n"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "more,line,field",
    [
        ("", 7, "spec.msReplicaSpecs"),
        (ROLE.format(role="PS", replicas=1), 7, "spec.msReplicaSpecs"),
        (ROLE.format(role="Worker", replicas=0), 12, "spec.msReplicaSpecs.Worker.replicas"),
    ],
    ids=["alone", "with-ps", "workers-0"],
)
def test_a_scheduler_without_workers_is_refused_at_the_spec(target: str, more: str, line: int, field: str) -> None:
    run = msgen("render", "-t", target, "-", input=SCHEDULER_ONLY.replace("{more}", more))
    assert run.exit_code == 1 and run.stdout == "", run.stderr
    assert f"<stdin>:{line}:" in run.stderr and f"error: {field}: MSJob 'j' has a Scheduler and" in run.stderr
    assert "accepted: a Worker with replicas 1 or more, or no Scheduler" in run.stderr
    assert "the Worker Job" not in run.stderr


def test_a_scheduler_with_a_worker_renders() -> None:
    run = msgen("render", "-", input=SCHEDULER_ONLY.replace("{more}", ROLE.format(role="Worker", replicas=1)))
    assert run.exit_code == 0, run.stderr


def _lenet(metadata_line: str) -> str:
    text = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
    return text.replace("metadata:\n", f"metadata:\n  {metadata_line}\n", 1)


@pytest.mark.parametrize("command", ["render", "validate"])  # the click-free render, and click
def test_a_target_annotation_overriding_the_command_line_says_so(command: str, tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(_lenet("annotations: {msgen/target: statefulset}"))
    run = msgen_process(command, str(job), "-t", "jobset")
    assert run.exit_code == 0, run.stderr
    assert ("warning: metadata.annotations.msgen/target: msgen/target='statefulset' overrides"
            " --target='jobset' for this job (a job's own annotation wins") in run.stderr  # fmt: skip
    assert command == "validate" or "kind: StatefulSet" in run.stdout
    quiet = msgen_process(command, str(job))  # no --target given: nothing was overruled
    assert "overrides" not in quiet.stderr


def test_a_kube_version_from_the_environment_is_named_when_an_annotation_overrides_it(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(_lenet("annotations: {msgen/kube-version: '1.30'}"))
    run = msgen_process("render", str(job), env={"KUBE_VERSION": "1.29"})
    assert "msgen/kube-version='1.30' overrides KUBE_VERSION='1.29' for this job" in run.stderr, run.stderr


@pytest.mark.parametrize("args", [("-n", "other"), ("--namespace=other",)])
def test_a_namespace_option_beside_the_jobs_own_namespace_says_which_is_kept(args: tuple[str, ...], tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    text = _lenet("namespace: training")
    job.write_text(text)
    run = msgen_process("render", str(job), *args)
    assert run.exit_code == 0, run.stderr
    assert f"job.yaml:{text.splitlines().index('  namespace: training') + 1}:14: warning: metadata.namespace:" \
        " the job's own namespace 'training' is kept: --namespace='other' is for jobs whose metadata names none" in run.stderr  # fmt: skip
    assert "namespace: other" not in run.stdout and "namespace: training" in run.stdout
    assert "warning" not in msgen_process("render", str(job), "-n", "training").stderr


@pytest.mark.parametrize("indent", ["\t", "  \t"])
def test_a_tab_used_for_indentation_is_named_and_shown(indent: str) -> None:
    run = msgen("render", "-", input=f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n{indent}name: x\n")
    assert run.exit_code == 1 and run.stdout == ""
    column = len(indent)
    assert run.stderr.startswith(f"<stdin>:4:{column}: error: not valid YAML: a tab character"), run.stderr
    assert "YAML indents with spaces only" in run.stderr and "accepted: spaces" in run.stderr
    shown = indent.replace("\t", "\u2192")
    assert f"    4 | {shown}name: x\n      | {' ' * (column - 1)}^" in run.stderr, run.stderr


def test_validate_quiet_prints_nothing_for_valid_input_and_only_errors_otherwise() -> None:
    sample = str(SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml")  # valid, with a warning
    quiet = msgen_process("validate", "-q", sample)
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == "", quiet.stderr
    loud = msgen_process("validate", sample)
    assert "warning:" in loud.stderr and "msgen: valid: 1 job(s)" in loud.stderr
    bad = msgen_process("validate", "-q", "-", input="apiVersion: mindspore.gitee.com/v1\nkind: MSJob\nmetadata: {name: x}\n")
    assert bad.exit_code == 1 and "error:" in bad.stderr and "valid: " not in bad.stderr.replace("invalid: ", "")


def test_the_readmes_option_table_says_how_the_command_line_takes_each_flag() -> None:
    """A flag takes no value on the command line (`--quiet=true` is refused): the table says
    so rather than listing `true`, `false` as if `--quiet=true` worked."""
    from msgen.options import option_table

    readme = (ROOT / "README.md").read_text().split("<!-- msgen:options -->", 1)[1]
    for row in option_table.ROWS:
        if "cli" not in row.hosts or not option_table.is_flag(row):
            continue
        line = next(line for line in readme.splitlines() if line.startswith(f"| `--{row.name}` |"))
        accepted = line.rstrip(" |").rsplit(" | ", 1)[1]
        assert "flag" in accepted or f"`--{row.name}` alone" in accepted, line
        refused = msgen("validate", f"--{row.name}=true", str(SAMPLES / "mindspore" / "lenet-cpu.yaml"))
        assert refused.exit_code == 2 and "does not take a value" in refused.stderr


def _repeats_its_path(path: str, message: str) -> bool:
    """`spec.runPolicy.cleanPodPolicy: runPolicy.cleanPodPolicy: None ...`: the message begins
    with the field its path ends with."""
    last = path.replace("[", ".").split(".")[-1].rstrip("]")
    word = message.split(" ", 1)[0]
    first = word.rstrip(":,")
    named = first == last or first.endswith(("." + last, "/" + last))
    return bool(last) and named and (word.endswith(":") or last[:1].islower())  # not a role: `PS pods`


def test_no_finding_repeats_its_path() -> None:
    from msgen import compile_documents
    from msgen.model.plan import Options

    repeated = []
    for sample in sorted(SAMPLES.rglob("*.yaml")):
        for target in TARGETS:
            for version in ((1, 25), (1, 37)):
                found = compile_documents(sample.read_text(), sample.name, Options(target=target, kube_version=version))
                repeated += [f"{sample.name} {target}: {d.field_path}: {d.message[:80]}" for d in found.diagnostics
                             if d.field_path and _repeats_its_path(d.field_path, d.message)]
    several = SAMPLES.joinpath("mindspore", "widedeep-ps.yaml").read_text().replace(
        "  runPolicy:\n", "  runPolicy:\n    backoffLimit: 3\n    activeDeadlineSeconds: 60\n    ttlSecondsAfterFinished: 60\n", 1)
    for target in TARGETS:
        found = compile_documents(several, "several.yaml", Options(target=target))
        repeated += [f"several {target}: {d.field_path}: {d.message[:80]}" for d in found.diagnostics
                     if d.field_path and _repeats_its_path(d.field_path, d.message)]
        assert not [d for d in found.diagnostics if "roles needs" in d.message]
    assert sorted(set(repeated)) == []


def test_every_commands_help_has_examples_and_names_what_each_option_takes() -> None:
    top = msgen("--help").stdout
    commands = re.findall(r"^  ([a-z][-a-z]*)\s", top.split("Commands:")[1], re.M)
    assert {"render", "diff", "delete", "controller", "apply"} <= set(commands)
    missing, vague = [], []
    for command in commands:
        text = msgen(command, "--help").stdout
        if "Example" not in text:
            missing.append(command)
        vague += [f"{command}: {line.strip()}" for line in text.splitlines() if re.match(r"\s+(-\w, )?--\S+ TEXT\b", line)]
    assert missing == [] and vague == []
    assert "--timeout DURATION" in msgen("apply", "--help").stdout


@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_bad_kube_version_in_the_environment_is_blamed_on_the_variable(command: str) -> None:
    sample = str(SAMPLES / "mindspore" / "lenet-cpu.yaml")
    done = msgen_process(command, sample, env={"KUBE_VERSION": "1.24"})
    assert done.exit_code == 2, done.stderr
    assert "Invalid value for KUBE_VERSION in the environment (--kube-version overrides it)" in done.stderr
    assert "'--kube-version'" not in done.stderr
    given = msgen_process(command, sample, "--kube-version", "1.24")
    assert "Invalid value for '--kube-version'" in given.stderr
