"""msgen.frameworks.caffe2: caffe2-operator's env (SHARD_ID, NUM_SHARDS, REDIS_, CAFFE2_CONFIG), as one Worker pod of its sample gets it."""

from __future__ import annotations

import pytest

from msgen import frameworks
from msgen.frameworks import caffe2

from .plugin_plans import pod_env, sample_plan

SAMPLE = "caffe2/resnet50-redis.yaml"
#: variable -> value in pod example-job-worker-1
EXPECTED = {'SHARD_ID': '1', 'NUM_SHARDS': '2', 'RUN_ID': 'example-job', 'REDIS_HOST': 'redis-service', 'REDIS_PORT': '6379'}


def test_the_registry_serves_this_module() -> None:
    assert frameworks.lookup('caffe2') is caffe2
    assert sample_plan(SAMPLE).framework == 'caffe2'


@pytest.mark.parametrize("variable", EXPECTED)
def test_a_worker_gets_the_frameworks_env(variable: str) -> None:
    assert pod_env(sample_plan(SAMPLE), 'example-job-worker-1').get(variable) == EXPECTED[variable]


@pytest.mark.parametrize("variable", ['MS_ROLE', 'DMLC_ROLE'])
def test_a_worker_gets_no_other_frameworks_env(variable: str) -> None:
    assert variable not in pod_env(sample_plan(SAMPLE), 'example-job-worker-1')
