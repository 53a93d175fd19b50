"""msgen.frameworks.mxnet_original: the original mxnet-operator's DMLC_ env (no MX_CONFIG, no worker id), as one Worker pod of its sample gets it."""

from __future__ import annotations

import pytest

from msgen import frameworks
from msgen.frameworks import mxnet_original

from .plugin_plans import pod_env, sample_plan

SAMPLE = "mxnet/mx-job-dist.yaml"
#: variable -> value in pod example-dist-job-worker-1
EXPECTED = {'DMLC_ROLE': 'worker', 'DMLC_NUM_SERVER': '2', 'DMLC_NUM_WORKER': '3', 'DMLC_PS_ROOT_PORT': '9091', 'DMLC_PS_ROOT_URI': 'example-dist-job-scheduler-0.example-dist-job'}


def test_the_registry_serves_this_module() -> None:
    assert frameworks.lookup('mxnet-original') is mxnet_original
    assert sample_plan(SAMPLE).framework == 'mxnet-original'


@pytest.mark.parametrize("variable", EXPECTED)
def test_a_worker_gets_the_frameworks_env(variable: str) -> None:
    assert pod_env(sample_plan(SAMPLE), 'example-dist-job-worker-1').get(variable) == EXPECTED[variable]


@pytest.mark.parametrize("variable", ['MX_CONFIG', 'DMLC_WORKER_ID'])
def test_a_worker_gets_no_other_frameworks_env(variable: str) -> None:
    assert variable not in pod_env(sample_plan(SAMPLE), 'example-dist-job-worker-1')
