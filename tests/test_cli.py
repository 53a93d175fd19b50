"""The command line as users meet it: inputs, outputs, help, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, SAMPLES, msgen, msgen_process

SAMPLE = SAMPLES / "mindspore" / "widedeep-ps.yaml"
STANDALONE = SAMPLES / "mindspore" / "standalone-worker.yaml"
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  z: '1'\n  a: two\n"


@pytest.mark.parametrize("command", [[], ["render"], ["validate"], ["schema"]])
def test_help_explains_every_option_with_an_example(command: list[str]) -> None:
    run = msgen(*command, "--help")
    assert run.exit_code == 0
    assert "Example" in run.stdout
    for line in run.stdout.splitlines():
        if line.strip().startswith("--") and "--help" not in line and "--version" not in line:
            assert len(line.strip().split(None, 1)) == 2, f"option without help: {line}"


def test_stdin_is_the_default_input() -> None:
    from_stdin = msgen("render", input=SAMPLE.read_text())
    from_file = msgen("render", str(SAMPLE))
    assert from_stdin.exit_code == 0
    assert from_stdin.stdout == from_file.stdout


def test_other_documents_pass_through_unchanged_in_place(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(
        CONFIG_MAP.format(name="before") + "---\n" + STANDALONE.read_text() + "---\n" + CONFIG_MAP.format(name="after")
    )
    objects = msgen("render", str(path)).objects()
    assert [o["metadata"]["name"] for o in objects] == ["before", "ms-widedeep-standalone-worker", "after"]
    # unchanged: not even its key order
    assert list(objects[0]["data"]) == ["z", "a"]
    assert objects[0] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "before"}, "data": {"z": "1", "a": "two"}}


def test_directories_are_read_recursively_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.yml").write_text(CONFIG_MAP.format(name="b-x"))
    (tmp_path / "a.yaml").write_text(CONFIG_MAP.format(name="a"))
    (tmp_path / "c.yaml").write_text(CONFIG_MAP.format(name="c"))
    (tmp_path / "kustomization.yaml").write_text("resources: [a.yaml]\n")
    (tmp_path / "notes.txt").write_text("not yaml: [\n")
    objects = msgen("render", str(tmp_path)).objects()
    assert [o["metadata"]["name"] for o in objects] == ["a", "b-x", "c"]


def test_namespace_applies_to_jobs_that_name_none() -> None:
    objects = msgen("render", str(STANDALONE), "--namespace", "team-a").objects()
    assert {o["metadata"]["namespace"] for o in objects} == {"team-a"}
    own = msgen("render", str(SAMPLE), "--namespace", "team-a").objects()
    assert {o["metadata"]["namespace"] for o in own} == {"training"}
    passthrough = msgen("render", "--namespace", "team-a", input=CONFIG_MAP.format(name="x")).objects()
    assert "namespace" not in passthrough[0]["metadata"]


def test_output_file_is_written_whole(tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    run = msgen("render", str(SAMPLE), "-o", str(out))
    assert run.exit_code == 0 and run.stdout == ""
    assert out.read_text() == msgen("render", str(SAMPLE)).stdout
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"], "no temporary file left behind"


def test_json_output_is_one_list() -> None:
    run = msgen("render", str(SAMPLE), "--format", "json")
    document = json.loads(run.stdout)
    assert document["apiVersion"] == "v1" and document["kind"] == "List"
    assert document["items"] == msgen("render", str(SAMPLE)).objects()


def test_validate_checks_and_writes_nothing() -> None:
    run = msgen("validate", str(SAMPLES / "mindspore"))
    assert run.exit_code == 0
    assert run.stdout == ""
    count = len(list((SAMPLES / "mindspore").glob("*.yaml")))  # one job in one document each
    assert f"msgen: valid: {count} job(s) in {count} document(s)" in run.stderr
    bad = msgen("validate", input=SAMPLE.read_text().replace("replicas: 2", "replicas: -2"))
    assert bad.exit_code == 1 and bad.stdout == ""


def test_warnings_do_not_fail_the_render() -> None:
    run = msgen("render", str(SAMPLE), "--target", "pod")
    assert run.exit_code == 0
    assert "warning: spec.runPolicy.backoffLimit: a limit shared by several roles is not supported by target pod" in run.stderr
    assert run.objects()


def test_empty_input_is_an_error_not_an_empty_stream() -> None:
    run = msgen("render", input="# nothing here\n")
    assert run.exit_code == 1 and run.stdout == ""
    assert "<stdin>:1:1: error: no YAML documents found in <stdin>" in run.stderr


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\ufeff", "\ufeff# c\n\n"])
def test_a_file_without_documents_is_named_with_its_first_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(text, encoding="utf-8")
    run = msgen("render", str(path))
    assert run.exit_code == 1 and run.stdout == ""
    assert run.stderr.startswith(f"{path}:1:1: error: no YAML documents found in {path}"), run.stderr


def test_schema_lists_kinds() -> None:
    run = msgen("schema", "--list")
    from msgen import kinds

    assert run.stdout.splitlines() == [f"{api}/{kind}" for api, kind in kinds.known_kinds()]
    assert "mindspore.gitee.com/v1/MSJob" in run.stdout.splitlines()
    assert msgen("schema", "mindspore.gitee.com/v1/MSJob").stdout == msgen("schema").stdout


def test_kube_version_comes_from_argo_cd_environment() -> None:
    run = msgen_process("render", str(SAMPLE), env={"KUBE_VERSION": "1.19"})
    assert run.exit_code == 2 and "older than msgen supports" in run.stderr
    assert msgen_process("render", str(SAMPLE), env={"KUBE_VERSION": "v1.29.3+k3s1"}).exit_code == 0


def test_same_bytes_whatever_the_hash_seed() -> None:
    # the 2020 sample names its job as lenet-cpu does: rendered together, they would clash
    dirs = sorted(str(d.relative_to(ROOT)) for d in SAMPLES.iterdir() if d.name != "mindspore-legacy")
    outputs = {
        msgen_process("render", *dirs, env={"PYTHONHASHSEED": seed}).stdout for seed in ("0", "1", "4242")
    }
    assert len(outputs) == 1
    assert outputs.pop().count("\nkind: ") > 10


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "msgen"
    assert script.exists(), "pip install . installs the msgen command beside the interpreter"
    done = subprocess.run([str(script), "render", str(SAMPLE)], capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout == msgen("render", str(SAMPLE)).stdout


def test_public_api() -> None:
    import msgen as package
    from msgen.model.diagnostics import InputError
    from msgen.model.plan import Options

    text = SAMPLE.read_text()
    assert package.render(text) == msgen("render", str(SAMPLE)).stdout
    assert package.render(text, target="pod") == msgen("render", str(SAMPLE), "--target", "pod").stdout
    result = package.compile_documents(text, "job.yaml", Options(target="pod"))
    assert result.ok and result.jobs == 1
    with pytest.raises(InputError) as caught:
        package.render(text.replace("replicas: 2", "replicas: -2"))
    assert caught.value.diagnostics[0].field_path == "spec.msReplicaSpecs.Worker.replicas"


def test_schema_by_exact_kind_name_picks_that_kind() -> None:
    assert msgen("schema", "MXJob").stdout == msgen("schema", "kubeflow.org/v1/MXJob").stdout
    original = msgen("schema", "mxnet.mlkube.io/v1beta1/MxJob").stdout
    assert original != msgen("schema", "MXJob").stdout
    # MxJob's two groups: the original operator's and the seed's, one schema but for the group
    seed = msgen("schema", "mlkube.io/v1beta1/MxJob").stdout
    assert original.replace("mxnet.mlkube.io", "mlkube.io") == seed
    run = msgen("schema", "MxJob")
    assert run.exit_code == 2
    assert "'MxJob' names 2 kinds; accepted: mlkube.io/v1beta1/MxJob or mxnet.mlkube.io/v1beta1/MxJob" in run.stderr
