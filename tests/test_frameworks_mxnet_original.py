"""msgen.frameworks.mxnet_original: the original mxnet-operator's five DMLC_ variables (no
MX_CONFIG, no worker id) on container `mxnet` only."""

from __future__ import annotations

import pytest

from msgen import frameworks
from msgen.frameworks import mxnet_original
from msgen.model.plan import Options

from .conftest import SAMPLES, msgen
from .plugin_plans import addresses, patch_env, pod_env, sample_plan, slot_of
from .rendered_pods import INDEXED_TARGETS, pods

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


@pytest.mark.parametrize("target", INDEXED_TARGETS)
def test_original_mxjob_gets_the_original_operators_env_on_container_mxnet(target: str) -> None:
    """deepinsight/mxnet-operator createDist: five DMLC_* variables on container `mxnet` only."""
    text = (SAMPLES / "mxnet" / "mx-job-dist.yaml").read_text()
    containers = "          containers:\n"
    assert text.count(containers) == 3
    text = text.replace(containers, containers + "            - {name: sidecar, image: busybox}\n")
    for source in (text, text.replace("apiVersion: mlkube.io/v1beta1", "apiVersion: mxnet.mlkube.io/v1beta1")):
        run = msgen("render", "-", "--target", target, input=source)
        assert run.exit_code == 0, run.stderr
        found = pods(run.objects())
        assert sorted(p["role"] for p in found) == ["scheduler"] + ["server"] * 2 + ["worker"] * 3
        scheduler = next(p for p in found if p["role"] == "scheduler")
        for pod in found:
            assert pod["env"]["mxnet"] == {
                "DMLC_PS_ROOT_PORT": "9091",
                "DMLC_PS_ROOT_URI": scheduler["host"],
                "DMLC_NUM_SERVER": "2",
                "DMLC_NUM_WORKER": "3",
                "DMLC_ROLE": pod["role"],
            }
            assert pod["env"].get("sidecar", {}) == {}, "only container mxnet"


# --- the module's entry points, on its sample ------------------------------------------------


def test_only_the_scheduler_is_reached_and_no_pod_needs_its_index() -> None:
    made = sample_plan(SAMPLE)
    assert [(e.role.replica_type, e.index, e.by_name) for e in mxnet_original.endpoints(made)] == [("Scheduler", 0, True)]
    assert not frameworks.needs_pod_index(mxnet_original, made)  # it has no such hook
    assert frameworks.check(mxnet_original, made, Options()) == []


def test_a_worker_is_told_the_five_variables() -> None:
    made = sample_plan(SAMPLE)
    env = patch_env(mxnet_original.contribute(made, slot_of(made, "Worker", 2), addresses(made)))
    assert env == {"DMLC_PS_ROOT_PORT": "9091", "DMLC_PS_ROOT_URI": "example-dist-job-scheduler-0.example-dist-job",
                   "DMLC_NUM_SERVER": "2", "DMLC_NUM_WORKER": "3", "DMLC_ROLE": "worker"}  # fmt: skip
