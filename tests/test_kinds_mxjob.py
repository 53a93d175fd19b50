"""msgen.kinds.mxjob: MXJob (kubeflow.org/v1) and the original MxJob (v1beta1), one package, compiled to a Plan (its roles, framework and success policy)."""

from __future__ import annotations

from msgen import kinds
from msgen.kinds.mxjob import v1

from .plugin_plans import sample_plan

SAMPLE = "mxnet/mxjob-gpu-workers.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('kubeflow.org/v1', 'MXJob')) is v1.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('kubeflow.org/v1', 'MXJob')
    assert made.framework == 'mxnet'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('Scheduler', 1), ('Server', 2), ('Worker', 2)]
    assert made.success_policy == 'Scheduler'


def test_the_original_mxjob_is_the_same_package() -> None:
    made = sample_plan("mxnet/mx-job-dist.yaml")
    assert (made.api_version, made.kind, made.framework) == ("mlkube.io/v1beta1", "MxJob", "mxnet-original")
    assert [(r.replica_type, r.replicas) for r in made.roles] == [("Scheduler", 1), ("Server", 2), ("Worker", 3)]
    assert made.success_policy == "Scheduler"
