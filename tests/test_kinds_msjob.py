"""msgen.kinds.msjob: MSJob (mindspore.gitee.com/v1), compiled to a Plan (its roles, framework and success policy)."""

from __future__ import annotations

from msgen import kinds
from msgen.kinds import msjob

from .plugin_plans import sample_plan

SAMPLE = "mindspore/widedeep-ps.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('mindspore.gitee.com/v1', 'MSJob')) is msjob.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('mindspore.gitee.com/v1', 'MSJob')
    assert made.framework == 'mindspore'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('Scheduler', 1), ('PS', 1), ('Worker', 2)]
    assert made.success_policy == ''
