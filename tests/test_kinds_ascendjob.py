"""msgen.kinds.ascendjob: AscendJob (mindxdl.gitee.com/v1), compiled to a Plan (its roles, framework and success policy)."""

from __future__ import annotations

from msgen import kinds
from msgen.kinds import ascendjob

from .plugin_plans import sample_plan

SAMPLE = "ascend/mindspore-acjob.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('mindxdl.gitee.com/v1', 'AscendJob')) is ascendjob.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('mindxdl.gitee.com/v1', 'AscendJob')
    assert made.framework == 'mindspore'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('Scheduler', 1), ('Worker', 2)]
    assert made.success_policy == 'AllWorkers'
