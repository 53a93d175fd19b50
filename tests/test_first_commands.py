"""What a new user types first, from the help, the README and kubectl habits, does what it says.

`-o` is a file here, not kubectl's format; `--kube-version` says what it accepts; `msgen-krm
--help` answers without waiting on stdin; a misspelt annotation names the one meant; `validate`
reports as a check; `apply --dry-run=client` points to `msgen render`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import SAMPLES, msgen, msgen_process

SAMPLE = str(SAMPLES / "mindspore" / "lenet-cpu.yaml")
BIN = Path(sys.executable).parent


@pytest.mark.parametrize("value", ["json", "yaml", "wide", "name", "jsonpath={.items[*].kind}",
                                   "custom-columns=NAME:.metadata.name", "go-template={{.kind}}"])
def test_kubectls_output_formats_are_refused_with_the_way_to_both(tmp_path: Path, value: str) -> None:
    done = subprocess.run([str(BIN / "msgen"), "render", SAMPLE, "-o", value], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert f"'{value}' looks like kubectl's -o FORMAT, but msgen's -o names the file to write" in done.stderr
    assert f"./{value} writes a file of that name" in done.stderr and "--format json" in done.stderr
    assert list(tmp_path.iterdir()) == []  # no file named json


def test_a_file_of_such_a_name_is_written_when_named_as_a_path(tmp_path: Path) -> None:
    done = subprocess.run([str(BIN / "msgen"), "render", SAMPLE, "-o", "./json"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "kind: Job" in (tmp_path / "json").read_text()


@pytest.mark.parametrize("args", [["-o", "-"], ["--output=-"], ["-o", "-", "--format", "json"]])
def test_dash_is_standard_output(tmp_path: Path, args: list[str]) -> None:
    done = subprocess.run([str(BIN / "msgen"), "render", SAMPLE, *args], cwd=tmp_path,
                          capture_output=True, text=True)
    plain = subprocess.run([str(BIN / "msgen"), "render", SAMPLE, *args[2:]], cwd=tmp_path,
                           capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.stdout and "msjob-mnist-worker" in done.stdout
    assert list(tmp_path.iterdir()) == []  # no file named -


def test_render_help_says_o_is_a_file_and_dash_stdout() -> None:
    text = " ".join(msgen("render", "--help").stdout.split())
    assert "-o, --output FILE" in text and "- is standard output" in text and "Not a format" in text


@pytest.mark.parametrize("given, env", [(["--kube-version", "1.38"], {}), ([], {"KUBE_VERSION": "v1.40.2"})])
def test_a_newer_kubernetes_renders_as_the_newest_known_with_a_warning(
    given: list[str], env: dict[str, str]
) -> None:
    done = msgen_process("render", SAMPLE, *given, env=env)
    newest = msgen_process("render", SAMPLE, "--kube-version", "1.37")
    assert done.exit_code == 0 and done.stdout == newest.stdout
    name = "--kube-version 1.38" if given else "KUBE_VERSION v1.40.2"
    version = "1.38" if given else "1.40"
    assert (f"msgen: warning: {name}: Kubernetes {version} is newer than msgen knows: rendering as "
            "for 1.37, the newest release msgen is tested against") in done.stderr
    assert newest.stderr == ""


_NEWER = ("Kubernetes {} is newer than msgen knows: rendering as for 1.37, "
          "the newest release msgen is tested against")


def _with_annotation(version: str) -> str:
    job = yaml.safe_load(Path(SAMPLE).read_text())
    job["metadata"]["annotations"] = {"msgen/kube-version": version}
    return yaml.safe_dump(job)


def test_a_newer_kubernetes_in_an_annotation_warns_at_it_and_renders_as_the_newest() -> None:
    done = msgen_process("render", "-", input=_with_annotation("1.38"))
    newest = msgen_process("render", "-", input=_with_annotation("1.37"))
    assert done.exit_code == 0 and done.stdout == newest.stdout
    assert f"warning: metadata.annotations.msgen/kube-version: {_NEWER.format('1.38')}" in done.stderr
    assert newest.stderr == ""


def test_a_newer_kubernetes_in_a_krm_function_config_warns_as_the_command_line_does() -> None:
    def resource_list(version: str) -> str:
        config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"},
                  "data": {"kube-version": version}}
        return yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                               "functionConfig": config,
                               "items": [yaml.safe_load(Path(SAMPLE).read_text())]})

    done = subprocess.run([str(BIN / "msgen-krm")], input=resource_list("1.40"),
                          capture_output=True, text=True)
    newest = subprocess.run([str(BIN / "msgen-krm")], input=resource_list("1.37"),
                            capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out, known = yaml.safe_load(done.stdout), yaml.safe_load(newest.stdout)
    assert out["items"] == known["items"]
    warned = [r["message"] for r in out.get("results", []) if r["severity"] == "warning"]
    assert any(f"functionConfig.data.kube-version='1.40': {_NEWER.format('1.40')}" in m for m in warned)
    assert "newer than msgen knows" not in newest.stdout + newest.stderr


def test_argo_cds_kube_version_newer_than_known_warns_once_per_job(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(Path(SAMPLE).read_text())
    env = {"ARGOCD_APP_NAMESPACE": "training"}
    done = msgen_process("argocd-generate", str(tmp_path), env={**env, "KUBE_VERSION": "v1.39.1"})
    newest = msgen_process("argocd-generate", str(tmp_path), env={**env, "KUBE_VERSION": "v1.37.0"})
    assert done.exit_code == 0 and done.stdout == newest.stdout
    assert done.stderr.count("newer than msgen knows") == 1
    assert f"warning: kind: KUBE_VERSION='v1.39.1': {_NEWER.format('1.39')}" in done.stderr


@pytest.mark.parametrize("version", ["2.0", "0.9", "3.1"])
def test_another_major_version_is_refused_saying_the_range(version: str) -> None:
    done = msgen_process("render", SAMPLE, "--kube-version", version)
    assert done.exit_code == 2 and done.stdout == ""
    assert "accepted: 1.25 to 1.37 (a newer 1.x renders as 1.37, with a warning)" in done.stderr


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--version"]])
def test_msgen_krm_answers_help_and_version_without_reading_stdin(args: list[str]) -> None:
    # stdin stays open and empty-handed: reading it would block until the timeout.
    with subprocess.Popen([str(BIN / "msgen-krm"), *args], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        out, err = _without_closing_stdin(process)
    assert process.returncode == 0, err
    if args == ["--version"]:
        assert out == "msgen-krm, version 0.1.0\n"
    else:
        assert out.startswith("Usage: msgen-krm [--help | --version]\n")
        assert "kustomize build --enable-alpha-plugins --enable-exec DIR" in out
    assert err == ""


def _without_closing_stdin(process: subprocess.Popen[str]) -> tuple[str, str]:
    assert process.stdout is not None and process.stderr is not None
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail("msgen-krm waited on standard input")
    return process.stdout.read(), process.stderr.read()


def test_msgen_krm_refuses_other_arguments_as_a_usage_error() -> None:
    done = subprocess.run([str(BIN / "msgen-krm"), "render", "job.yaml"], input="",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert "Error: msgen-krm takes no arguments, got 'render job.yaml'; accepted: none" in done.stderr


@pytest.mark.parametrize("written, meant", [("msgen/targt", "msgen/target"),
                                            ("msgen/kube_version", "msgen/kube-version"),
                                            ("msgen/gangscheduler", "msgen/gang-scheduler")])
def test_a_misspelt_annotation_names_the_option_meant(written: str, meant: str) -> None:
    text = Path(SAMPLE).read_text().replace("  name: msjob-mnist\n", f"  name: msjob-mnist\n  annotations: {{{written}: x}}\n")
    done = msgen("render", "-", input=text)
    assert done.exit_code == 1
    assert f"unknown msgen option '{written}' (did you mean '{meant}'?); accepted: msgen/target," in done.stderr


def test_an_annotation_near_no_option_suggests_nothing() -> None:
    text = Path(SAMPLE).read_text().replace("  name: msjob-mnist\n", "  name: msjob-mnist\n  annotations: {msgen/zzz: x}\n")
    done = msgen("render", "-", input=text)
    assert "unknown msgen option 'msgen/zzz'; accepted:" in done.stderr and "did you mean" not in done.stderr


def test_validate_ends_as_a_check_not_as_a_write() -> None:
    text = Path(SAMPLE).read_text().replace("replicas: 2", "replicas: -2")
    done = msgen_process("validate", "-", input=text)
    assert done.exit_code == 1
    assert done.stderr.splitlines()[-1] == "msgen: invalid: 1 error(s)"
    assert "nothing was written" not in done.stderr
    rendered = msgen_process("render", "-", input=text)
    assert rendered.stderr.splitlines()[-1] == "msgen: 1 error(s); nothing was written"


def test_a_client_dry_run_points_to_render() -> None:
    done = msgen_process("apply", "--dry-run=client", SAMPLE)
    assert done.exit_code == 2 and done.stdout == ""
    assert ("'client' is not accepted: a client-side dry run is `msgen render` (the same objects, "
            "nothing sent; `msgen diff` compares them with the cluster); accepted: none, server") in done.stderr
