"""msgen.frameworks.caffe2: caffe2-operator's env (SHARD_ID, NUM_SHARDS, REDIS_*, NFS_PATH,
CAFFE2_CONFIG, RUN_ID) on every target that can tell a pod its index, and the ports its config
lists."""

from __future__ import annotations

import json
from typing import Any

import pytest

from msgen import frameworks
from msgen.frameworks import caffe2
from msgen.model.plan import Options

from .conftest import SAMPLES, msgen
from .plugin_plans import (
    addresses,
    patch_env,
    pod_env,
    sample_plan,
    sample_plan_with,
    slot_of,
)
from .rendered_pods import INDEXED_TARGETS, RUN_UID, pods, render

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


@pytest.mark.parametrize("target", INDEXED_TARGETS)
def test_caffe2_shard_env(target: str) -> None:
    found = pods(render(str(SAMPLES / "caffe2" / "resnet50-redis.yaml"), "--target", target))
    assert sorted(p["index"] for p in found) == [0, 1]
    hosts = [p["host"] for p in sorted(found, key=lambda p: p["index"])]
    run_ids = set()
    for pod in found:
        env = pod["env"]["caffe2"]
        assert env["SHARD_ID"] == str(pod["index"])
        assert env["NUM_SHARDS"] == "2"
        assert env["REDIS_HOST"] == "redis-service"
        assert env["REDIS_PORT"] == "6379"
        assert env["NFS_PATH"] == "", "caffe2-operator set all three, empty when unused"
        assert json.loads(env["CAFFE2_CONFIG"]) == {
            "cluster": {"worker": [f"{h}:2222" for h in hosts]},
            "task": {"type": "worker", "index": pod["index"]},
        }
        run_ids.add(env["RUN_ID"])
    # One value for every shard of a run: the UID of the run's workload where there is one.
    assert run_ids == {
        "indexed-job": {RUN_UID},
        "jobset": {"<metadata.labels['jobset.sigs.k8s.io/jobset-uid']>"},
    }.get(target, {"example-job"})


def test_caffe2_says_when_run_id_cannot_change_between_runs() -> None:
    sample = str(SAMPLES / "caffe2" / "resnet50-redis.yaml")
    assert "RUN_ID" not in msgen("render", sample, "--target", "indexed-job").stderr
    err = msgen("render", sample, "--target", "pod").stderr
    assert "warning: spec.replicaSpecs: target pod creates no object whose identity changes" in err
    assert "RUN_ID is the job name ('example-job')" in err


def test_caffe2_nfs_backend() -> None:
    text = (SAMPLES / "caffe2" / "resnet50-redis.yaml").read_text()
    text = text.replace("backendType: redis", "backendType: nfs\n      nfsPath: /mnt/rendezvous")
    text = text.replace("      redisHost: redis-service\n      redisPort: 6379\n", "")
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0, run.stderr
    env = pods(run.objects())[0]["env"]["caffe2"]
    assert env["NFS_PATH"] == "/mnt/rendezvous"
    assert (env["REDIS_HOST"], env["REDIS_PORT"]) == ("", "0"), "unused, as caffe2-operator set them"


def caffe2_env(old: str, new: str, *args: str) -> tuple[dict[str, Any], str]:
    text = (SAMPLES / "caffe2" / "resnet50-redis.yaml").read_text()
    assert old in text
    run = msgen("render", "-", *args, input=text.replace(old, new))
    assert run.exit_code == 0, run.stderr
    return pods(run.objects())[0]["env"]["caffe2"], run.stderr


def test_caffe2_config_keeps_a_declared_port_and_adds_none() -> None:
    env, _ = caffe2_env("            name: caffe2\n", "            name: caffe2\n            ports:\n            - {name: caffe2job-port, containerPort: 3333}\n")
    assert json.loads(env["CAFFE2_CONFIG"])["cluster"]["worker"][0].endswith(":3333")
    objects = render(str(SAMPLES / "caffe2" / "resnet50-redis.yaml"))
    assert all("ports" not in c for o in objects if o["kind"] == "Job" for c in o["spec"]["template"]["spec"]["containers"])


# --- the module's entry points, on its sample ------------------------------------------------


def test_every_shard_is_reached_by_name_and_needs_its_index() -> None:
    made = sample_plan(SAMPLE)
    assert [(e.role.replica_type, e.index, e.by_name, e.ports) for e in caffe2.endpoints(made)] == [
        ("Worker", 0, True, ()), ("Worker", 1, True, ()),
    ]  # fmt: skip
    assert caffe2.needs_pod_index(made)


def test_a_shard_is_told_its_index_the_shards_and_the_backend() -> None:
    made = sample_plan(SAMPLE)
    env = patch_env(caffe2.contribute(made, slot_of(made, "Worker", 1), addresses(made, "pod")))
    assert {k: env[k] for k in ("SHARD_ID", "NUM_SHARDS", "RUN_ID", "REDIS_HOST", "REDIS_PORT", "NFS_PATH")} == {
        "SHARD_ID": "1", "NUM_SHARDS": "2", "RUN_ID": "example-job", "REDIS_HOST": "redis-service",
        "REDIS_PORT": "6379", "NFS_PATH": "",
    }  # fmt: skip
    assert json.loads(str(env["CAFFE2_CONFIG"]))["task"] == {"type": "worker", "index": 1}


def test_it_checks_the_listed_replicas_and_says_when_run_id_is_the_name() -> None:
    made = sample_plan(SAMPLE)
    assert caffe2.check(made, Options(target="indexed-job")) == []
    (found,) = caffe2.check(made, Options(target="pod"))
    assert not found.is_error and "RUN_ID is the job name" in found.message
    many = sample_plan_with(SAMPLE, "replicas: 2", "replicas: 2001")
    assert [d.is_error for d in caffe2.check(many, Options(target="indexed-job"))] == [True]
