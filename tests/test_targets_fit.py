"""msgen.targets.fit: whether a target can carry a job's per-pod values, asked of the target
(its facts and naming) rather than named; the refusal names the first role whose pods need
their index, and the targets that can. (Each older kind's env contract, contracts §5-7, is
tested in its framework's module: tests/test_frameworks_<framework>.py.)
"""

from __future__ import annotations

from msgen.model.plan import Options
from msgen.targets import fit, lookup

from .conftest import SAMPLES, msgen
from .plugin_plans import sample_plan


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



def test_the_refusal_lists_the_targets_that_can_carry_the_values() -> None:
    """`unsupported` asks the target (its facts and naming), and names the targets that can."""
    made = sample_plan("mindspore-legacy/msjob-mnist-dist.yaml")
    assert made.static_indexes
    for name, can in (("pod", True), ("indexed-job", True), ("jobset", False)):
        target, options = lookup(name), Options(target=name)  # type: ignore[arg-type]
        why = fit.unsupported(made, options, target, target.naming(made, options), target.slots(made), True)
        assert (why is None) == can, why
    jobset = lookup("jobset")
    why = fit.unsupported(made, Options(target="jobset"), jobset, jobset.naming(made, Options(target="jobset")),
                          jobset.slots(made), True)
    assert why is not None and "indexed-job" in why and "pod" in why
