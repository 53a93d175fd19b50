"""The KRM function's envelope: a ResourceList in, a ResourceList out, findings as results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from msgen.hosts.kustomize.legacy_plugin import default_home, search_order

from .conftest import SAMPLES

KRM = str(Path(sys.executable).parent / "msgen-krm")
JOB = yaml.safe_load((SAMPLES / "mindspore" / "widedeep-ps.yaml").read_text())


def krm(resource_list: Any, cwd: Path) -> tuple[int, dict[str, Any], str]:
    text = resource_list if isinstance(resource_list, str) else yaml.safe_dump(resource_list)
    done = subprocess.run([KRM], input=text, capture_output=True, text=True, cwd=cwd)
    return done.returncode, yaml.safe_load(done.stdout), done.stderr


def resource_list(items: list[Any], function_config: Any = None) -> dict[str, Any]:
    rl: dict[str, Any] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if function_config is not None:
        rl["functionConfig"] = function_config
    return rl


CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}, "data": {"a": "1"}}


def test_transformer_replaces_jobs_in_place_and_keeps_the_rest(tmp_path: Path) -> None:
    status, out, _ = krm(resource_list([CONFIG_MAP, JOB, CONFIG_MAP]), tmp_path)
    assert status == 0
    kinds = [i["kind"] for i in out["items"]]
    assert kinds[0] == "ConfigMap" and kinds[-1] == "ConfigMap"
    assert kinds[1:-1] == ["Service", "Service", "Job", "Job", "Job"]
    assert out["items"][0] == CONFIG_MAP


def test_function_config_options_and_per_job_annotations(tmp_path: Path) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"}, "data": {"target": "pod"}}
    _, out, _ = krm(resource_list([JOB], config), tmp_path)
    assert "Pod" in [i["kind"] for i in out["items"]]
    annotated = {**JOB, "metadata": {**JOB["metadata"], "annotations": {"msgen/target": "indexed-job"}}}
    _, out, _ = krm(resource_list([annotated], config), tmp_path)
    assert "Pod" not in [i["kind"] for i in out["items"]]


def test_generator_compiles_its_function_config(tmp_path: Path) -> None:
    status, out, _ = krm(resource_list([], JOB), tmp_path)
    assert status == 0
    assert [i["metadata"]["name"] for i in out["items"]][-1] == "ms-widedeep-ps-worker"


def test_warnings_are_results_and_stderr(tmp_path: Path) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"}, "data": {"target": "pod"}}
    status, out, err = krm(resource_list([JOB], config), tmp_path)
    assert status == 0
    result = next(r for r in out["results"] if "backoffLimit" in r["message"])
    assert result["severity"] == "warning"
    assert result["resourceRef"] == {"apiVersion": "mindspore.gitee.com/v1", "kind": "MSJob", "name": "ms-widedeep-ps", "namespace": "training"}
    assert result["field"] == {"path": "spec.runPolicy.backoffLimit"}
    assert "warning: spec.runPolicy.backoffLimit" in err


def test_errors_fail_with_results_and_stderr(tmp_path: Path) -> None:
    bad = yaml.safe_load(yaml.safe_dump(JOB))
    bad["spec"]["msReplicaSpecs"]["Worker"]["replicas"] = -1
    status, out, err = krm(resource_list([bad]), tmp_path)
    assert status == 1
    assert out["items"] == []
    (result,) = out["results"]
    assert result["severity"] == "error"
    assert result["field"] == {"path": "spec.msReplicaSpecs.Worker.replicas"}
    assert result["file"]["path"] == "<ResourceList>"
    assert "-1 is not accepted" in result["message"]
    assert "error: spec.msReplicaSpecs.Worker.replicas: -1 is not accepted" in err


def test_errors_point_into_the_users_file_when_it_is_found(tmp_path: Path) -> None:
    text = (SAMPLES / "mindspore" / "widedeep-ps.yaml").read_text().replace("replicas: 2", "replicas: -1")
    (tmp_path / "job.yaml").write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "replicas: -1" in t)
    status, out, err = krm(resource_list([yaml.safe_load(text)]), tmp_path)
    assert status == 1
    assert out["results"][0]["file"]["path"] == str(tmp_path / "job.yaml")
    assert f"{tmp_path / 'job.yaml'}:{line}:17: error:" in err


def test_input_that_is_not_a_resource_list(tmp_path: Path) -> None:
    status, out, err = krm("apiVersion: v1\nkind: List\nitems: []\n", tmp_path)
    assert status == 1
    assert "stdin is not a ResourceList" in err
    assert out["results"][0]["severity"] == "error"


def test_bad_function_config_option(tmp_path: Path) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"}, "data": {"target": "deployment"}}
    status, _, err = krm(resource_list([JOB], config), tmp_path)
    assert status == 1
    assert "target: 'deployment' is not accepted; accepted: indexed-job, pod" in err


def test_plugin_home_follows_kustomizes_search_order(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert search_order({**env, "KUSTOMIZE_PLUGIN_HOME": "/explicit"}) == [Path("/explicit")]
    assert default_home(env) == tmp_path / "xdg" / "kustomize" / "plugin"
    (tmp_path / "kustomize" / "plugin").mkdir(parents=True)
    assert default_home(env) == tmp_path / "kustomize" / "plugin"
    (tmp_path / ".config" / "kustomize" / "plugin").mkdir(parents=True)
    assert default_home(env) == tmp_path / ".config" / "kustomize" / "plugin"


def test_misspelt_function_config_key_is_an_error(tmp_path: Path) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"}, "data": {"targt": "pod"}}
    status, _, err = krm(resource_list([JOB], config), tmp_path)
    assert status == 1
    assert "unknown msgen option 'targt' (did you mean 'target'?); accepted: target, kube-version" in err


def test_the_function_configs_own_error_is_among_the_results(tmp_path: Path) -> None:
    """An item that only warns used to fill `results`, and the function config's error (the
    reason for exit 1) was on stderr alone."""
    warns = {**JOB, "spec": {**JOB["spec"], "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 1}}}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"}, "data": {"target": "bogus"}}
    status, out, err = krm(resource_list([warns], config), tmp_path)
    assert status == 1 and out["items"] == []
    errors = [r for r in out["results"] if r["severity"] == "error"]
    assert len(errors) == 1 and "bogus" in errors[0]["message"], out["results"]
    assert errors[0]["field"] == {"path": "functionConfig.data.target"}
    assert "bogus" in err


def test_two_items_that_make_the_same_objects_are_an_error(tmp_path: Path) -> None:
    """`msgen render` refuses two files that make the same object; msgen-krm compiled two
    identical job items with exit 0, every object twice. It now compiles through the same
    driver."""
    status, out, err = krm(resource_list([JOB, CONFIG_MAP, JOB]), tmp_path)
    assert status == 1 and out["items"] == []
    (error,) = [r for r in out["results"] if r["severity"] == "error"]
    assert "makes too; accepted: one object per kind, namespace and name" in error["message"]
    assert error["resourceRef"]["name"] == JOB["metadata"]["name"]
    elsewhere = {**JOB, "metadata": {**JOB["metadata"], "namespace": "other"}}
    status, out, _ = krm(resource_list([JOB, elsewhere]), tmp_path)
    assert status == 0, out


def test_results_are_bounded_as_stderr_is(tmp_path: Path) -> None:
    jobs = [{**JOB, "metadata": {**JOB["metadata"], "name": f"j{i}"}} for i in range(120)]
    broken = [{**j, "spec": {**j["spec"], "runPolicy": {"backoffLimit": -1, "ttlSecondsAfterFinished": -1}}} for j in jobs]
    status, out, err = krm(resource_list(broken), tmp_path)
    assert status == 1
    assert len(out["results"]) == 201
    assert out["results"][-1]["message"] == "... and 40 more result(s) not shown"
    assert "msgen-krm: 240 error(s)" in err


CONFIG_FILE = """\
# msgen as a KRM transformer
apiVersion: v1
kind: ConfigMap
metadata:
  name: msgen
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: msgen-krm
data:
  targt: pod
"""


def _as_kustomize_sends(config_text: str) -> dict[str, Any]:
    """The config as kustomize 4.5.4 hands it over: re-serialised, marked local, no path."""
    config = yaml.safe_load(config_text)
    config["metadata"]["annotations"]["config.kubernetes.io/local-config"] = "true"
    return config


def test_a_function_config_error_points_into_the_users_config_file(tmp_path: Path) -> None:
    (tmp_path / "msgen.yaml").write_text(CONFIG_FILE)
    status, out, err = krm(resource_list([JOB], _as_kustomize_sends(CONFIG_FILE)), tmp_path)
    assert status == 1
    assert err.startswith(f"{tmp_path / 'msgen.yaml'}:11:3: error: data.targt: unknown msgen option 'targt'"), err
    assert "<ResourceList>" not in err
    (result,) = [r for r in out["results"] if r["severity"] == "error"]
    assert result["file"]["path"] == str(tmp_path / "msgen.yaml") and result["field"] == {"path": "data.targt"}


def test_a_function_config_found_by_its_path_annotation(tmp_path: Path) -> None:
    (tmp_path / "fn").mkdir()
    (tmp_path / "fn" / "config.yaml").write_text(CONFIG_FILE.replace("targt: pod", "target: deployment"))
    config = _as_kustomize_sends(CONFIG_FILE.replace("targt: pod", "target: deployment"))
    config["metadata"]["annotations"]["config.kubernetes.io/path"] = "fn/config.yaml"
    status, _, err = krm(resource_list([JOB], config), tmp_path)
    assert status == 1
    assert err.startswith(f"{tmp_path / 'fn' / 'config.yaml'}:11:11: error: data.target: functionConfig.data.target: 'deployment'"), err


def test_a_function_config_data_that_is_not_a_mapping_points_into_the_users_file(tmp_path: Path) -> None:
    text = CONFIG_FILE.replace("data:\n  targt: pod\n", "data: [target, pod]\n")
    (tmp_path / "msgen.yaml").write_text(text)
    status, _, err = krm(resource_list([JOB], _as_kustomize_sends(text)), tmp_path)
    assert status == 1
    assert err.startswith(f"{tmp_path / 'msgen.yaml'}:10:7: error: data: a list is not accepted"), err


def test_a_function_config_nowhere_to_be_found_is_reported_in_the_resource_list(tmp_path: Path) -> None:
    status, _, err = krm(resource_list([JOB], _as_kustomize_sends(CONFIG_FILE)), tmp_path)
    assert status == 1 and err.startswith("<ResourceList>:"), err
    assert "error: functionConfig.data.targt: unknown msgen option 'targt'" in err
