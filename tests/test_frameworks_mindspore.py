"""msgen.frameworks.mindspore: MindSpore's dynamic cluster env (MS_ROLE, MS_SCHED_HOST, MS_WORKER_NUM, ...), as one Worker pod of its sample gets it."""

from __future__ import annotations

import pytest

from msgen import frameworks
from msgen.frameworks import mindspore

from .plugin_plans import pod_env, sample_plan

SAMPLE = "mindspore/lenet-cpu.yaml"
#: variable -> value in pod msjob-mnist-worker-1
EXPECTED = {'MS_ROLE': 'MS_WORKER', 'MS_NODE_ID': '1', 'MS_SCHED_PORT': '2222', 'MS_SERVER_NUM': '0', 'MS_WORKER_NUM': '2', 'MS_SCHED_HOST': '$(MSJOB_MNIST_SCHEDULER_0_SERVICE_HOST)'}


def test_the_registry_serves_this_module() -> None:
    assert frameworks.lookup('mindspore') is mindspore
    assert sample_plan(SAMPLE).framework == 'mindspore'


@pytest.mark.parametrize("variable", EXPECTED)
def test_a_worker_gets_the_frameworks_env(variable: str) -> None:
    assert pod_env(sample_plan(SAMPLE), 'msjob-mnist-worker-1').get(variable) == EXPECTED[variable]


@pytest.mark.parametrize("variable", ['MS_CONFIG', 'DMLC_ROLE'])
def test_a_worker_gets_no_other_frameworks_env(variable: str) -> None:
    assert variable not in pod_env(sample_plan(SAMPLE), 'msjob-mnist-worker-1')
