"""msgen.kinds.caffe2job: Caffe2Job (kubeflow.org/v1alpha1), compiled to a Plan (its roles, framework and success policy)."""

from __future__ import annotations

from msgen import kinds
from msgen.kinds import caffe2job

from .plugin_plans import sample_plan

SAMPLE = "caffe2/resnet50-redis.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('kubeflow.org/v1alpha1', 'Caffe2Job')) is caffe2job.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('kubeflow.org/v1alpha1', 'Caffe2Job')
    assert made.framework == 'caffe2'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('Worker', 2)]
    assert made.success_policy == 'AllWorkers'
