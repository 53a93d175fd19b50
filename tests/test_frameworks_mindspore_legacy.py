"""msgen.frameworks.mindspore_legacy: the 2020 ms-operator's env (MS_CONFIG, RANK counted across roles, WORLD_SIZE), as one Worker pod of its sample gets it."""

from __future__ import annotations

import pytest

from msgen import frameworks
from msgen.frameworks import mindspore_legacy

from .plugin_plans import pod_env, sample_plan

SAMPLE = "mindspore-legacy/msjob-mnist-dist.yaml"
#: variable -> value in pod msjob-mnist-dist-worker-1
EXPECTED = {'RANK': '2', 'WORLD_SIZE': '4', 'MASTER_PORT': '23456', 'MASTER_ADDR': 'msjob-mnist-dist-master-0.msjob-mnist-dist'}


def test_the_registry_serves_this_module() -> None:
    assert frameworks.lookup('mindspore-legacy') is mindspore_legacy
    assert sample_plan(SAMPLE).framework == 'mindspore-legacy'


@pytest.mark.parametrize("variable", EXPECTED)
def test_a_worker_gets_the_frameworks_env(variable: str) -> None:
    assert pod_env(sample_plan(SAMPLE), 'msjob-mnist-dist-worker-1').get(variable) == EXPECTED[variable]


@pytest.mark.parametrize("variable", ['MS_ROLE'])
def test_a_worker_gets_no_other_frameworks_env(variable: str) -> None:
    assert variable not in pod_env(sample_plan(SAMPLE), 'msjob-mnist-dist-worker-1')
