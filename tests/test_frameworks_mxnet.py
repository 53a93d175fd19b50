"""msgen.frameworks.mxnet: kubeflow's MXNet env (MX_CONFIG and the DMLC_ variables), as one Worker pod of its sample gets it."""

from __future__ import annotations

import pytest

from msgen import frameworks
from msgen.frameworks import mxnet

from .plugin_plans import pod_env, sample_plan

SAMPLE = "mxnet/mxjob-gpu-workers.yaml"
#: variable -> value in pod mxnet-gpu-dist-worker-1
EXPECTED = {'DMLC_ROLE': 'worker', 'DMLC_WORKER_ID': '1', 'DMLC_NUM_SERVER': '2', 'DMLC_NUM_WORKER': '2', 'DMLC_PS_ROOT_PORT': '9991', 'DMLC_PS_ROOT_URI': 'mxnet-gpu-dist-scheduler-0.mxnet-gpu-dist', 'DMLC_USE_KUBERNETES': '1'}


def test_the_registry_serves_this_module() -> None:
    assert frameworks.lookup('mxnet') is mxnet
    assert sample_plan(SAMPLE).framework == 'mxnet'


@pytest.mark.parametrize("variable", EXPECTED)
def test_a_worker_gets_the_frameworks_env(variable: str) -> None:
    assert pod_env(sample_plan(SAMPLE), 'mxnet-gpu-dist-worker-1').get(variable) == EXPECTED[variable]


@pytest.mark.parametrize("variable", ['MS_ROLE'])
def test_a_worker_gets_no_other_frameworks_env(variable: str) -> None:
    assert variable not in pod_env(sample_plan(SAMPLE), 'mxnet-gpu-dist-worker-1')
