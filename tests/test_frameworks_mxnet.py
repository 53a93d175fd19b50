"""msgen.frameworks.mxnet: kubeflow's MXNet env (MX_CONFIG and the DMLC_ variables) on every
container, its ports (mxjob-port, PsRootPort), and tuning jobs (MX_CONFIG without ps-lite's env)."""

from __future__ import annotations

import json

import pytest

from msgen import frameworks
from msgen.frameworks import mxnet
from msgen.model.plan import Options

from .conftest import SAMPLES, msgen
from .plugin_plans import addresses, patch_env, pod_env, sample_plan, slot_of
from .rendered_pods import INDEXED_TARGETS, pods, render

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


MX_SAMPLES = {
    "mxjob-gpu-workers": {"scheduler": 1, "server": 2, "worker": 2},
}


@pytest.mark.parametrize("target", INDEXED_TARGETS)
@pytest.mark.parametrize("sample", sorted(MX_SAMPLES))
def test_mxnet_env_on_every_container(sample: str, target: str) -> None:
    counts = MX_SAMPLES[sample]
    found = pods(render(str(SAMPLES / "mxnet" / f"{sample}.yaml"), "--target", target))
    assert sorted((p["role"], p["index"]) for p in found) == sorted(
        (role, i) for role, n in counts.items() for i in range(n)
    )
    hosts = {(p["role"], p["index"]): p["host"] for p in found}
    scheduler = next(p for p in found if p["role"] == "scheduler")
    for pod in found:
        for env in pod["env"].values():
            config = json.loads(env["MX_CONFIG"])
            assert config["task"] == {"type": pod["role"], "index": pod["index"]}
            assert list(config["task"]) == ["type", "index"]
            assert config["labels"] == {role: "" for role in counts}
            assert list(config["cluster"]) == sorted(counts)
            for role, n in counts.items():
                assert [u["url"] for u in config["cluster"][role]] == [
                    hosts[(role, i)] for i in range(n)
                ]
            assert env["DMLC_PS_ROOT_URI"] == scheduler["host"]
            assert env["DMLC_PS_ROOT_PORT"] == str(config["cluster"]["scheduler"][0]["port"])
            assert env["DMLC_NUM_SERVER"] == str(counts["server"])
            assert env["DMLC_NUM_WORKER"] == str(counts["worker"])
            assert env["DMLC_ROLE"] == pod["role"]
            assert env["DMLC_USE_KUBERNETES"] == "1"
            assert env.get("DMLC_WORKER_ID") == (str(pod["index"]) if pod["role"] == "worker" else None)


def test_mxnet_ports_follow_mxjob_port_and_ps_root_port() -> None:
    gpu = pods(render(str(SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml")))
    config = json.loads(gpu[0]["env"]["mxnet"]["MX_CONFIG"])
    assert config["cluster"]["scheduler"][0]["port"] == 9991  # the scheduler's own mxjob-port
    assert config["cluster"]["worker"][0]["port"] == 9091  # the operator's default
    assert gpu[0]["env"]["mxnet"]["DMLC_PS_ROOT_PORT"] == "9991"
    text = (SAMPLES / "mxnet" / "mx-job-dist.yaml").read_text().replace("PsRootPort: 9091", "PsRootPort: 9300")
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0, run.stderr
    env = pods(run.objects())[0]["env"]["mxnet"]
    assert env["DMLC_PS_ROOT_PORT"] == "9300"


def test_mxnet_tune_mode_gets_mx_config_without_ps_lite_env() -> None:
    text = """
apiVersion: kubeflow.org/v1
kind: MXJob
metadata: {name: tune}
spec:
  jobMode: MXTune
  mxReplicaSpecs:
    TunerTracker: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}
    TunerServer: {replicas: 2, template: {spec: {containers: [{name: mxnet, image: mx}]}}}
    Tuner: {template: {spec: {containers: [{name: mxnet, image: mx}]}}}
"""
    for target in INDEXED_TARGETS:
        run = msgen("render", "-", "--target", target, input=text)
        assert run.exit_code == 0, run.stderr
        found = pods(run.objects())
        assert sorted(p["role"] for p in found) == ["tuner", "tunerserver", "tunerserver", "tunertracker"]
        for pod in found:
            env = pod["env"]["mxnet"]
            assert json.loads(env["MX_CONFIG"])["task"] == {"type": pod["role"], "index": pod["index"]}
            assert not any(name.startswith("DMLC_") for name in env)


# --- the module's entry points, on its sample ------------------------------------------------


def test_every_replica_is_reached_by_name_on_its_port() -> None:
    made = sample_plan(SAMPLE)
    found = [(e.role.replica_type, e.index, e.by_name, e.ports[0]["port"]) for e in mxnet.endpoints(made)]
    assert found == [("Scheduler", 0, True, 9991), ("Server", 0, True, 9091), ("Server", 1, True, 9091),
                     ("Worker", 0, True, 9091), ("Worker", 1, True, 9091)]  # fmt: skip
    assert mxnet.needs_pod_index(made)
    assert mxnet.check(made, Options()) == []


def test_a_worker_is_told_ps_lites_env_and_its_task() -> None:
    made = sample_plan(SAMPLE)
    env = patch_env(mxnet.contribute(made, slot_of(made, "Worker", 1), addresses(made)))
    assert {k: env[k] for k in ("DMLC_ROLE", "DMLC_WORKER_ID", "DMLC_NUM_SERVER", "DMLC_NUM_WORKER", "DMLC_PS_ROOT_PORT")} == {
        "DMLC_ROLE": "worker", "DMLC_WORKER_ID": "1", "DMLC_NUM_SERVER": "2", "DMLC_NUM_WORKER": "2",
        "DMLC_PS_ROOT_PORT": "9991",
    }  # fmt: skip
    assert json.loads(str(env["MX_CONFIG"]))["task"] == {"type": "worker", "index": 1}
