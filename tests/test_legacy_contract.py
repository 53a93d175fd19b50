"""The env contracts of the older kinds (contracts §5-7), read from the rendered objects.

Each rendered workload is expanded into the pods Kubernetes would run: a Job's template once
per completion index, with the downward-API values and `$(VAR)` references resolved the way
the kubelet resolves them (only variables defined earlier in the same container). The tests
then look at what each process would see, per role and index, in every target.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .conftest import SAMPLES, msgen

COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
RUN_UID = "uid-of-the-run"


def render(path: str, *args: str) -> list[dict[str, Any]]:
    run = msgen("render", path, *args)
    assert run.exit_code == 0, run.stderr
    return run.objects()


def _resolve(entry: dict[str, Any], index: int, defined: dict[str, str]) -> str:
    if "valueFrom" in entry:
        field = entry["valueFrom"]["fieldRef"]["fieldPath"]
        if field in (COMPLETION_INDEX, "metadata.labels['apps.kubernetes.io/pod-index']"):
            return str(index)
        if field == "metadata.labels['controller-uid']":
            return RUN_UID
        return f"<{field}>"
    return re.sub(
        r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
        lambda m: defined.get(m.group(1), m.group(0)),
        str(entry["value"]),
    )


def pods(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pod the objects stand for: role, index, host name and env per container."""
    out = []
    for obj in objects:
        name, spec = obj["metadata"]["name"], obj.get("spec") or {}
        # (template, index the controller gives the pod or None, host name, subdomain)
        templates: list[tuple[dict[str, Any], int | None, str | None, str | None]] = []
        if obj["kind"] == "Pod":
            templates = [(obj, None, None, None)]
        elif obj["kind"] == "Job" and obj["apiVersion"] == "batch/v1":
            indexed = spec.get("completionMode") == "Indexed"
            templates = [
                (spec["template"], i if indexed else None, f"{name}-{i}" if indexed else None, None)
                for i in range(spec["parallelism"])
            ]
        elif obj["kind"] == "StatefulSet":
            templates = [
                (spec["template"], i, f"{name}-{i}", spec["serviceName"]) for i in range(spec["replicas"])
            ]
        elif obj["kind"] == "JobSet":
            for rjob in spec["replicatedJobs"]:
                job = rjob["template"]["spec"]
                templates += [
                    (job["template"], i, f"{name}-{rjob['name']}-0-{i}", spec["network"]["subdomain"])
                    for i in range(job["parallelism"])
                ]
        else:
            assert obj["kind"] in ("Service", "ConfigMap", "PodGroup"), (
                f"a {obj['kind']}: teach pods() how many pods it stands for and their indexes"
            )
            continue
        for template, given, hostname, subdomain in templates:
            labels = template["metadata"]["labels"]
            index = int(labels.get("training.kubeflow.org/replica-index", given))
            envs = {}
            for container in template["spec"]["containers"]:
                defined: dict[str, str] = {}
                for entry in container.get("env", []):
                    defined[entry["name"]] = _resolve(entry, index, defined)
                envs[container["name"]] = defined
            out.append(
                {
                    "role": labels["training.kubeflow.org/replica-type"],
                    "index": index,
                    "host": f"{hostname or template['spec']['hostname']}.{subdomain or template['spec']['subdomain']}",
                    "env": envs,
                }
            )
    return out


#: The targets that can tell each pod its index (volcano cannot; the 2020 MSJob's ranks
#: need a workload per pod: indexed-job and pod only).
INDEXED_TARGETS = ["indexed-job", "pod", "statefulset", "jobset"]
PER_POD_TARGETS = ["indexed-job", "pod"]


def test_targets_that_cannot_carry_the_index_refuse_the_job() -> None:
    run = msgen("render", str(SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml"), "--target", "statefulset", "--kube-version", "1.27")
    assert run.exit_code == 1 and run.stdout == ""
    assert "target statefulset cannot tell a pod its index at Kubernetes 1.27" in run.stderr
    # at the first role whose pods need it, not at `kind`
    assert "mxjob-gpu-workers.yaml:24:7: error: spec.mxReplicaSpecs.Server: MXJob puts each Server pod's index in its environment" in run.stderr
    # the original operator's env has no per-pod value: every target carries it
    run = msgen("render", str(SAMPLES / "mxnet" / "mx-job-dist.yaml"), "--target", "statefulset", "--kube-version", "1.27")
    assert run.exit_code == 0, run.stderr
    legacy = str(SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml")
    run = msgen("render", legacy, "--target", "jobset")
    assert run.exit_code == 1 and "which target jobset cannot render" in run.stderr
    assert "msjob-mnist-dist.yaml:12:5: error: spec.replicaSpecs: MSJob gives each pod values computed from its index" in run.stderr
    run = msgen("render", str(SAMPLES / "caffe2" / "resnet50-redis.yaml"), "--target", "statefulset", "--kube-version", "1.27")
    assert run.exit_code == 1 and "statefulset can from Kubernetes 1.28" in run.stderr


# --- kubeflow.org/v1 MXJob and mlkube.io/v1beta1 MxJob ------------------------------------

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


# --- kubeflow.org/v1alpha1 Caffe2Job ---------------------------------------------------------


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


def _caffe2(old: str, new: str, *args: str) -> tuple[dict[str, Any], str]:
    text = (SAMPLES / "caffe2" / "resnet50-redis.yaml").read_text()
    assert old in text
    run = msgen("render", "-", *args, input=text.replace(old, new))
    assert run.exit_code == 0, run.stderr
    return pods(run.objects())[0]["env"]["caffe2"], run.stderr


def test_caffe2_without_backend_gets_the_operators_empty_redis_default() -> None:
    backend = "  backendSpecs:\n      backendType: redis\n      redisHost: redis-service\n      redisPort: 6379\n"
    env, err = _caffe2(backend, "")
    assert (env["REDIS_HOST"], env["REDIS_PORT"], env["NFS_PATH"]) == ("", "0", "")
    assert "warning: spec: no backendSpecs: caffe2-operator chose backendType redis, with no host, for 2 shards" in err
    # One shard needs no rendezvous: the operator chose backendType none, and so no warning.
    env, err = _caffe2(backend + "  replicaSpecs:\n      replicas: 2", "  replicaSpecs:\n      replicas: 1")
    assert (env["REDIS_HOST"], env["REDIS_PORT"], env["NFS_PATH"]) == ("", "0", "") and "warning" not in err
    _, err = _caffe2("backendType: redis\n      redisHost: redis-service\n      redisPort: 6379", "backendType: none")
    assert "warning: spec.backendSpecs: backendType none, for 2 shards" in err


def test_caffe2_redis_port_is_the_operators_zero_when_unset() -> None:
    env, err = _caffe2("      redisPort: 6379\n", "")
    assert env["REDIS_PORT"] == "0"
    assert 'warning: spec.backendSpecs: backendType redis without redisPort: REDIS_PORT is "0"' in err


def test_caffe2_termination_policy_is_accepted_and_not_used() -> None:
    policy = "  terminationPolicy:\n    chief:\n      replicaName: worker\n      replicaIndex: 1\n  replicaSpecs:"
    _, err = _caffe2("  replicaSpecs:", policy)
    assert "warning: spec.terminationPolicy: terminationPolicy is not used, as caffe2-operator did not use it" in err


def test_caffe2_config_keeps_a_declared_port_and_adds_none() -> None:
    env, _ = _caffe2("            name: caffe2\n", "            name: caffe2\n            ports:\n            - {name: caffe2job-port, containerPort: 3333}\n")
    assert json.loads(env["CAFFE2_CONFIG"])["cluster"]["worker"][0].endswith(":3333")
    objects = render(str(SAMPLES / "caffe2" / "resnet50-redis.yaml"))
    assert all("ports" not in c for o in objects if o["kind"] == "Job" for c in o["spec"]["template"]["spec"]["containers"])


# --- kubeflow.org/v1 MSJob (2020) ------------------------------------------------------------


@pytest.mark.parametrize("target", PER_POD_TARGETS)
def test_legacy_msjob_ranks_and_master(target: str) -> None:
    found = pods(render(str(SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml"), "--target", target))
    found.sort(key=lambda p: (p["role"] != "master", p["index"]))
    assert [(p["role"], p["index"]) for p in found] == [
        ("master", 0), ("worker", 0), ("worker", 1), ("worker", 2),
    ]  # fmt: skip
    master_host = found[0]["host"]
    # Fixed: ranks 0..WORLD_SIZE-1, master first (the operator gave master 0 and worker 0 rank 0).
    assert [p["env"]["msjob-mnist"]["RANK"] for p in found] == ["0", "1", "2", "3"]
    for pod in found:
        env = pod["env"]["msjob-mnist"]
        assert env["WORLD_SIZE"] == "4"
        assert env["MASTER_PORT"] == "23456"
        # Fixed: only master 0 is localhost to itself (the operator also told worker 0 so).
        assert env["MASTER_ADDR"] == ("localhost" if pod["role"] == "master" else master_host)
        config = json.loads(env["MS_CONFIG"])
        assert list(config) == ["cluster", "task", "environment"]
        assert config["environment"] == "cloud"
        assert config["task"] == {"type": pod["role"], "index": pod["index"]}
        assert config["cluster"] == {
            "master": [f"{master_host}:23456"],
            "worker": [f"{p['host']}:23456" for p in found[1:]],
        }


def test_legacy_msjob_env_only_on_the_mindspore_container() -> None:
    text = (SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml").read_text()
    text = text.replace("name: msjob-mnist\n", "name: mindspore\n")
    text = text.replace(
        "          restartPolicy: OnFailure\n",
        "          - {name: sidecar, image: busybox}\n          restartPolicy: OnFailure\n",
    )
    run = msgen("render", "-", "--target", "pod", input=text)
    assert run.exit_code == 0, run.stderr
    assert "warning" not in run.stderr
    for pod in pods(run.objects()):
        assert "RANK" in pod["env"]["mindspore"]
        assert pod["env"]["sidecar"] == {}
