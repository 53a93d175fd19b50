"""msgen.kinds.msjob_legacy: the 2020 MSJob (kubeflow.org/v1), compiled to a Plan (its roles, framework and success policy)."""

from __future__ import annotations

from msgen import kinds
from msgen.kinds import msjob_legacy

from .plugin_plans import sample_plan

SAMPLE = "mindspore-legacy/msjob-mnist-dist.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('kubeflow.org/v1', 'MSJob')) is msjob_legacy.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('kubeflow.org/v1', 'MSJob')
    assert made.framework == 'mindspore-legacy'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('MASTER', 1), ('WORKER', 3)]
    assert made.success_policy == 'AllWorkers'
