"""`msgen convert`: the converted file compiles, comments and untouched keys survive, every
change is explained, and --in-place rewrites whole files or nothing."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen, needs_shared, shared
from .test_kinds_msjob_legacy import seed_example

LEGACY = SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml"
MX_DIST = SAMPLES / "mxnet" / "mx-job-dist.yaml"


def test_legacy_msjob_becomes_a_msjob_that_compiles() -> None:
    run = msgen("convert", str(LEGACY))
    assert run.exit_code == 0, run.stderr
    job = yaml.safe_load(run.stdout)
    assert (job["apiVersion"], job["kind"]) == ("mindspore.gitee.com/v1", "MSJob")
    specs = job["spec"]["msReplicaSpecs"]
    assert list(specs) == ["Scheduler", "Worker"]
    assert specs["Scheduler"]["replicas"] == 1
    assert specs["Worker"]["replicas"] == 4  # the MASTER and 3 WORKERs trained
    assert specs["Worker"]["restartPolicy"] == "OnFailure"
    scheduler = specs["Scheduler"]["template"]["spec"]["containers"][0]
    assert scheduler["name"] == "mindspore"
    assert {"containerPort": 23456, "name": "msjob-port"} in scheduler["ports"]
    assert "backend" not in job["spec"] and "masterPort" not in job["spec"]
    rendered = msgen("render", "-", input=run.stdout)
    assert rendered.exit_code == 0, rendered.stderr
    assert "warning" not in rendered.stderr
    env = {
        e["name"]: e.get("value")
        for o in rendered.objects()
        if o["metadata"]["name"] == "msjob-mnist-dist-scheduler"
        for e in o["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["MS_SCHED_PORT"] == "23456" and env["MS_WORKER_NUM"] == "4"


def test_comments_key_order_and_untouched_values_survive() -> None:
    run = msgen("convert", str(LEGACY))
    original = LEGACY.read_text()
    head = original.split("apiVersion")[0]
    assert run.stdout.startswith(head)  # the leading comment block, verbatim
    assert 'name: "msjob-mnist-dist"' in run.stdout  # quoting kept
    container = yaml.safe_load(run.stdout)["spec"]["msReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert list(container) == ["image", "imagePullPolicy", "name", "command", "volumeMounts"]
    text = original.replace("      replicaType: WORKER\n", "      replicaType: WORKER  # three workers\n")
    text = text.replace("metadata:\n", "metadata:  # who we are\n")
    run = msgen("convert", input=text)
    assert run.exit_code == 0, run.stderr
    assert "metadata:  # who we are\n" in run.stdout
    assert "# three workers" in run.stdout


def test_every_change_is_explained_with_its_line() -> None:
    run = msgen("convert", str(LEGACY))
    lines = [line for line in run.stderr.splitlines() if line]
    assert all(line.startswith(f"{LEGACY}:") and ": converted: " in line for line in lines)
    assert f"{LEGACY}:9: converted: backend 'tcp' dropped" in run.stderr
    assert f"{LEGACY}:10: converted: masterPort 23456 → port msjob-port" in run.stderr
    assert f"{LEGACY}:19: converted: container 'msjob-mnist' renamed 'mindspore'" in run.stderr
    assert f"{LEGACY}:33: converted: Worker replicas 4" in run.stderr


def test_old_mxjob_converts_to_an_mxjob_that_keeps_the_original_env() -> None:
    """The converted job renders the same objects; its pods' env is kubeflow's MXNet env, which
    holds the original operator's five DMLC_* variables unchanged."""
    run = msgen("convert", str(MX_DIST))
    assert run.exit_code == 0, run.stderr
    assert f"{MX_DIST}:3: converted: apiVersion mlkube.io/v1beta1 MxJob → kubeflow.org/v1 MXJob (its pods get MX_CONFIG" in run.stderr
    job = yaml.safe_load(run.stdout)
    assert (job["apiVersion"], job["kind"], job["spec"]["jobMode"]) == ("kubeflow.org/v1", "MXJob", "MXTrain")
    assert list(job["spec"]["mxReplicaSpecs"]) == ["Scheduler", "Server", "Worker"]
    for target in TARGETS:
        before = msgen("render", str(MX_DIST), "--target", target).stdout
        after = msgen("render", "-", "--target", target, input=run.stdout).stdout
        assert_same_but_env(before, after)


#: Labels training-operator's MXJob controller (kubeflow/common GenLabels) put on pods; the
#: original mxnet.mlkube.io operator did not, so only the converted job's pods carry them.
OPERATOR_LABEL_LINES = (
    "group-name: ", "job-name: ", "replica-index: ", "replica-type: ",
    "training.kubeflow.org/operator-name: ", "training.kubeflow.org/job-role: ",
)


def without_operator_labels(rendered: str) -> str:
    lines = rendered.splitlines(keepends=True)
    kept = [line for line in lines if not line.strip().startswith(OPERATOR_LABEL_LINES)]
    assert len(kept) < len(lines), "the converted MXJob's pods carry its operator's labels"
    return "".join(kept)


def _envs(obj: Any, out: list[dict[str, Any]]) -> Any:
    """`obj` without its containers' env, which is appended to `out` in document order."""
    if isinstance(obj, dict):
        if "image" in obj and "name" in obj:
            out.append({e["name"]: e for e in obj.get("env") or []})
            return {k: _envs(v, out) for k, v in obj.items() if k != "env"}
        return {k: _envs(v, out) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_envs(v, out) for v in obj]
    return obj


def _runtime_names(text: str) -> str:
    """`text` with the content digest of a TrainingRuntime's name left out (target trainjob: it
    is taken from the runtime's content, env included)."""
    return re.sub(r"(name: example-dist-job)-[0-9a-f]{8}\n", r"\1-RUNTIME\n", text)


def assert_same_but_env(before: str, after: str) -> None:
    old_env: list[dict[str, Any]] = []
    new_env: list[dict[str, Any]] = []
    old = [_envs(d, old_env) for d in yaml.safe_load_all(_runtime_names(before))]
    new = [_envs(d, new_env) for d in yaml.safe_load_all(_runtime_names(without_operator_labels(after)))]
    assert new == old
    assert len(old_env) == len(new_env)
    for original, converted in zip(old_env, new_env, strict=True):
        assert sorted(original) == ["DMLC_NUM_SERVER", "DMLC_NUM_WORKER", "DMLC_PS_ROOT_PORT", "DMLC_PS_ROOT_URI", "DMLC_ROLE"]
        assert {k: converted[k] for k in original} == original
        assert {"MX_CONFIG", "DMLC_USE_KUBERNETES"} <= set(converted)


def test_ps_root_port_becomes_the_mxjob_port() -> None:
    text = MX_DIST.read_text().replace("PsRootPort: 9091", "PsRootPort: 9300")
    run = msgen("convert", input=text)
    assert run.exit_code == 0, run.stderr
    assert "PsRootPort 9300 → port mxjob-port of container 'mxnet'" in run.stderr
    assert_same_but_env(msgen("render", "-", input=text).stdout, msgen("render", "-", input=run.stdout).stdout)


@needs_shared("upstream/deepinsight-mxnet-operator")
def test_the_original_operators_group_converts() -> None:
    """mxnet.mlkube.io, the group of every file of deepinsight/mxnet-operator."""
    path = shared("upstream/deepinsight-mxnet-operator/mx_job_local.yaml")
    run = msgen("convert", str(path))
    assert run.exit_code == 0, run.stderr
    assert f"{path}:1: converted: apiVersion mxnet.mlkube.io/v1beta1 MxJob → kubeflow.org/v1 MXJob" in run.stderr
    job = yaml.safe_load(run.stdout)
    assert (job["apiVersion"], job["kind"], job["spec"]["jobMode"]) == ("kubeflow.org/v1", "MXJob", "MXTrain")
    assert job["spec"]["mxReplicaSpecs"]["Worker"]["restartPolicy"] == "OnFailure"
    assert msgen("render", "-", input=run.stdout).exit_code == 0


def test_other_documents_are_kept(tmp_path: Path) -> None:
    other = "# settings\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}  # flow style\ndata:\n  b: '2'\n  a: '1'\n"
    path = tmp_path / "jobs.yaml"
    path.write_text(other + "---\n" + MX_DIST.read_text())
    run = msgen("convert", str(path))
    assert run.exit_code == 0, run.stderr
    assert run.stdout.startswith(other)
    assert [d["kind"] for d in yaml.safe_load_all(run.stdout)] == ["ConfigMap", "MXJob"]


def test_in_place_rewrites_atomically_and_only_what_changed(tmp_path: Path) -> None:
    legacy = tmp_path / "legacy.yaml"
    legacy.write_text(LEGACY.read_text())
    legacy.chmod(0o640)
    current = tmp_path / "current.yaml"
    current_text = "apiVersion: v1\nkind: ConfigMap   # odd   spacing kept\nmetadata:\n    name: x\n"
    current.write_text(current_text)
    before = current.stat().st_mtime_ns
    run = msgen("convert", "--in-place", str(tmp_path))
    assert run.exit_code == 0, run.stderr
    assert run.stdout == ""
    assert yaml.safe_load(legacy.read_text())["apiVersion"] == "mindspore.gitee.com/v1"
    assert stat.S_IMODE(legacy.stat().st_mode) == 0o640
    assert current.read_text() == current_text and current.stat().st_mtime_ns == before
    assert sorted(os.listdir(tmp_path)) == ["current.yaml", "legacy.yaml"]


def test_a_job_with_errors_is_not_converted(tmp_path: Path) -> None:
    path = tmp_path / "seed.yaml"
    path.write_text(seed_example())
    run = msgen("convert", "--in-place", str(path))
    assert run.exit_code == 1
    assert f"{path}:32:11: error: duplicate key 'restartPolicy'" in run.stderr
    assert "nothing was converted" in run.stderr
    assert path.read_text() == seed_example()
    fixed = seed_example().replace("                defaultMode: 0755\n          restartPolicy: OnFailure\n", "                defaultMode: 0755\n")
    run = msgen("convert", input=fixed)
    assert run.exit_code == 1 and run.stdout == ""
    assert "unknown field 'hostPath' (a hostPath volume source belongs in the pod's volumes)" in run.stderr


def test_in_place_needs_files() -> None:
    run = msgen("convert", "--in-place", input=LEGACY.read_text())
    assert run.exit_code == 2


def test_tabs_that_render_accepts_do_not_stop_convert() -> None:
    """libyaml (render) accepts a tab after a value and in `key:<TAB>value`; ruamel.yaml
    (convert) refused both with a ScannerError, exit 70. Tabs inside values stay."""
    text = (
        MX_DIST.read_text()
        .replace("name: example-dist-job", "name: example-dist-job\t")
        .replace("jobMode: dist", "jobMode:\tdist  # a\tcomment")
        .replace(
            "workingDir: /incubator-mxnet/example/image-classification\n",
            "workingDir: \"/incubator-mxnet\t/example/image-classification\"\n",
            1,
        )
    )
    assert msgen("render", "-", input=text).exit_code == 0
    run = msgen("convert", "-", input=text)
    assert run.exit_code == 0, run.stderr
    job = yaml.safe_load(run.stdout)
    assert job["metadata"]["name"] == "example-dist-job"
    assert job["spec"]["jobMode"] == "MXTrain"
    scheduler = job["spec"]["mxReplicaSpecs"]["Scheduler"]["template"]["spec"]["containers"][0]
    assert scheduler["workingDir"] == "/incubator-mxnet\t/example/image-classification"
    assert "# a\tcomment" in run.stdout
