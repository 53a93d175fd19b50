"""Bad input of the older kinds: exit 1, nothing on stdout, positioned messages that say
what is accepted. The 2020 MSJob's own example (seed `000`) is checked as written."""

from __future__ import annotations


from .conftest import SAMPLES, msgen


def fails(text: str, *args: str) -> str:
    run = msgen("render", "-", *args, input=text)
    assert run.exit_code == 1, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    return run.stderr


MX_GPU = (SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml").read_text()


CAFFE2 = (SAMPLES / "caffe2" / "resnet50-redis.yaml").read_text()


def test_unknown_job_like_kind_passes_through_naming_the_known_kinds() -> None:
    text = MX_GPU.replace("apiVersion: kubeflow.org/v1\n", "apiVersion: example.com/v1\n")
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0
    assert run.objects()[0]["apiVersion"] == "example.com/v1"
    assert "warning: kind: example.com/v1 MXJob is passed through unchanged: msgen compiles" in run.stderr
    for known in ("kubeflow.org/v1 MSJob", "kubeflow.org/v1 MXJob", "kubeflow.org/v1alpha1 Caffe2Job", "mlkube.io/v1beta1 MxJob", "mindspore.gitee.com/v1 MSJob"):
        assert known in run.stderr


def test_env_listing_every_replica_has_a_size_limit() -> None:
    err = fails(MX_GPU.replace("    Worker:\n      replicas: 2", "    Worker:\n      replicas: 2000"))
    assert "<stdin>:36:17: error: spec.mxReplicaSpecs.Worker.replicas: 2003 replicas in all: MX_CONFIG lists every replica in every pod" in err
    err = fails(CAFFE2.replace("replicas: 2", "replicas: 1099511627776"), "--target", "pod")
    assert "1099511627776 replicas in all: CAFFE2_CONFIG lists every replica" in err
