"""A near miss of a kind msgen compiles is an error naming the kind meant; other kinds pass."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .conftest import msgen

JOB = "apiVersion: {api}\nkind: {kind}\nmetadata: {{name: x}}\nspec: {{}}\n"

NEAR_MISSES = [
    # (apiVersion, kind as written, the line:column pointed at, what was meant)
    ("mindspore.gitee.com/v2", "MSJob", "1:13", "mindspore.gitee.com/v1 MSJob"),
    ("mindspore.gitee.com/v1", "MsJob", "2:7", "mindspore.gitee.com/v1 MSJob"),
    ("mindspore.gitee.com/v1", "MSjob", "2:7", "mindspore.gitee.com/v1 MSJob"),
    ("mindspore.gitee.com/v1", "MSJobs", "2:7", "mindspore.gitee.com/v1 MSJob"),
    ("mindspore.gitee.cn/v1", "MSJob", "1:13", "mindspore.gitee.com/v1 MSJob"),
    ("kubeflow.org/v2", "MSJob", "1:13", "kubeflow.org/v1 MSJob"),
    ("kubeflow.org/v1", "MxJob", "2:7", "kubeflow.org/v1 MXJob"),
    ("kubeflow.org/v1beta2", "MXJob", "1:13", "kubeflow.org/v1 MXJob"),
    ("mlkube.io/v1beta1", "MXJob", "2:7", "mlkube.io/v1beta1 MxJob"),
    ("mlkube.io/v1", "MxJob", "1:13", "mlkube.io/v1beta1 MxJob"),
    ("mxnet.mlkube.io/v1", "MxJob", "1:13", "mxnet.mlkube.io/v1beta1 MxJob"),
    ("mxnet.mlkube.io/v1beta1", "MXJob", "2:7", "mxnet.mlkube.io/v1beta1 MxJob"),
    ("kubeflow.org/v1", "Caffe2Job", "1:13", "kubeflow.org/v1alpha1 Caffe2Job"),
    ("kubeflow.org/v1alpha1", "caffe2job", "2:7", "kubeflow.org/v1alpha1 Caffe2Job"),
    ("mindxdl.gitee.com/v2", "AscendJob", "1:13", "mindxdl.gitee.com/v1 AscendJob"),
    ("mindxdl.gitee.com/v1", "Ascendjob", "2:7", "mindxdl.gitee.com/v1 AscendJob"),
    # A kind msgen compiles, under a group it does not compile it in: the nearest group meant.
    ("mindspore.cn/v1", "MSJob", "1:13", "mindspore.gitee.com/v1 MSJob"),
    ("example.com/v1", "MSJob", "1:13", "mindspore.gitee.com/v1 MSJob"),
    ("kubeflow.org/v1beta1", "MXJob", "1:13", "kubeflow.org/v1 MXJob"),
    ("ascend.huawei.com/v1", "AscendJob", "1:13", "mindxdl.gitee.com/v1 AscendJob"),
    ("mindspore.cn/v1", "MsJob", "2:7", "mindspore.gitee.com/v1 MSJob"),
]


@pytest.mark.parametrize("api, kind, where, meant", NEAR_MISSES, ids=lambda v: str(v))
@pytest.mark.parametrize("command", ["render", "validate"])
def test_near_miss_of_a_compiled_kind_is_an_error(command: str, api: str, kind: str, where: str, meant: str) -> None:
    run = msgen(command, "-", input=JOB.format(api=api, kind=kind))
    assert run.exit_code == 1, run.stderr
    assert run.stdout == ""
    assert f"<stdin>:{where}: error:" in run.stderr
    assert f"{api} {kind} is not a kind msgen compiles (did you mean {meant}?)" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "api, kind",
    [
        ("kubeflow.org/v1", "TFJob"),
        ("kubeflow.org/v1", "PyTorchJob"),
        ("kubeflow.org/v2beta1", "MPIJob"),
        ("batch/v1", "Job"),
        ("apps/v1", "Deployment"),
    ],
)
def test_unrelated_kinds_still_pass_through(api: str, kind: str) -> None:
    run = msgen("render", "-", input=JOB.format(api=api, kind=kind))
    assert run.exit_code == 0, run.stderr
    assert run.objects() == [{"apiVersion": api, "kind": kind, "metadata": {"name": "x"}, "spec": {}}]
    assert "error" not in run.stderr


WRONG_GROUP = "apiVersion: mindspore.cn/v1\nkind: MSJob\nmetadata: {name: x}\nspec: {}\n"


def test_a_wrong_group_fails_validate_even_quiet() -> None:
    run = msgen("validate", "-q", "-", input=WRONG_GROUP)
    assert run.exit_code == 1 and "did you mean mindspore.gitee.com/v1 MSJob?" in run.stderr, run.stderr


def test_every_host_compiles_a_near_miss_to_its_error(tmp_path: Path) -> None:
    """kustomize's KRM function, Helm's post-renderer and Argo CD's discover would otherwise
    pass the document over, and the uncompiled job would be applied."""
    from msgen.hosts.kustomize.krm import run as krm_run

    resource_list = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                     "items": [yaml.safe_load(WRONG_GROUP)],
                     "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"}}}
    status, output, messages = krm_run(yaml.safe_dump(resource_list), str(tmp_path))
    assert status == 1 and yaml.safe_load(output)["items"] == [], output
    assert any("did you mean mindspore.gitee.com/v1 MSJob?" in m for m in messages), messages
    helm = msgen("helm-post-renderer", input="---\n# Source: c/templates/j.yaml\n" + WRONG_GROUP)
    assert helm.exit_code == 1 and helm.stdout == "" and "did you mean mindspore.gitee.com/v1 MSJob?" in helm.stderr
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "job.yaml").write_text(WRONG_GROUP)
    discovered = msgen("argocd-discover", str(tmp_path / "app"))
    assert discovered.exit_code == 0 and discovered.stdout.split() == ["job.yaml"], discovered
