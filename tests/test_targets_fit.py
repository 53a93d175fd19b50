"""msgen.targets.fit: whether a target can carry a job's per-pod values, asked of the target
(its facts and naming) rather than named; the refusal names the first role whose pods need
their index, and the targets that can. (Each older kind's env contract, contracts §5-7, is
tested in its framework's module: tests/test_frameworks_<framework>.py.)
"""

from __future__ import annotations

from .conftest import SAMPLES, msgen


def test_targets_that_cannot_carry_the_index_refuse_the_job() -> None:
    run = msgen("render", str(SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml"), "--target", "statefulset", "--kube-version", "1.27")
    assert run.exit_code == 1 and run.stdout == ""
    assert "target statefulset cannot tell a pod its index at Kubernetes 1.27" in run.stderr
    # at the first role whose pods need it, not at `kind`
    assert "mxjob-gpu-workers.yaml:24:7: error: spec.mxReplicaSpecs.Server: MXJob puts each Server pod's index in its environment" in run.stderr
    # the original operator's env has no per-pod value: every target carries it
    run = msgen("render", str(SAMPLES / "mxnet" / "mx-job-dist.yaml"), "--target", "statefulset", "--kube-version", "1.27")
    assert run.exit_code == 0, run.stderr
    legacy = str(SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml")
    run = msgen("render", legacy, "--target", "jobset")
    assert run.exit_code == 1 and "which target jobset cannot render" in run.stderr
    assert "msjob-mnist-dist.yaml:12:5: error: spec.replicaSpecs: MSJob gives each pod values computed from its index" in run.stderr
    run = msgen("render", str(SAMPLES / "caffe2" / "resnet50-redis.yaml"), "--target", "statefulset", "--kube-version", "1.27")
    assert run.exit_code == 1 and "statefulset can from Kubernetes 1.28" in run.stderr

