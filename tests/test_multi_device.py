"""Multi-device pods (contracts §2-4), read from the rendered objects as a cluster would run them.

The per-process identities are checked by executing the launcher shipped in the rendered
ConfigMap with each pod's rendered command, args and env, and a stub in place of the program.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen
from .test_mindspore_contract import env_of, main_container, pod_templates, render, role_of

MS = SAMPLES / "mindspore"
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
POD_INDEX = "metadata.labels['apps.kubernetes.io/pod-index']"
#: Every target but volcano, which cannot tell a pod its index and refuses multi-device jobs
#: (pinned by the golden cases' expected-errors.txt).
INDEX_TARGETS = list(TARGETS)  # volcano too: pods read volcano.sh/task-index (Volcano 1.9+)
TASK_INDEX = "metadata.labels['volcano.sh/task-index']"
#: MindCluster fills an operator rank table only for workloads it recognises.
RANK_TABLE_TARGETS = ("volcano", "statefulset")


def worker_pods(objects: list[dict[str, Any]], container: str = "mindspore") -> list[tuple[int, dict[str, Any]]]:
    """(index, pod spec) for every Worker pod the objects stand for, indexes resolved."""
    out = []
    for owner, template, n in pod_templates(objects):
        if role_of(template) != "worker":
            continue
        for index in range(n):
            if owner["kind"] == "Pod":
                index = int(template["metadata"]["labels"]["training.kubeflow.org/replica-index"])
            out.append((index, template))
    return out


def resolved_env(template: dict[str, Any], index: int, container: str = "mindspore") -> dict[str, str]:
    env = {}
    for name, entry in env_of(template, container).items():
        if "value" in entry:
            env[name] = entry["value"]
        elif entry["valueFrom"]["fieldRef"]["fieldPath"] in (COMPLETION_INDEX, POD_INDEX, TASK_INDEX):
            env[name] = str(index)
    return env


def config_maps(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "ConfigMap"}


def run_launcher(objects: list[dict[str, Any]], tmp_path: Path) -> list[int]:
    """Run every Worker pod's rendered launcher with a stub program; the MS_NODE_IDs it saw."""
    ids = []
    for index, template in worker_pods(objects):
        main = main_container(template)
        assert main["command"][0] == "/bin/sh"
        mount = next(m for m in main["volumeMounts"] if m["mountPath"] == "/opt/msgen")
        volume = next(v for v in template["spec"]["volumes"] if v["name"] == mount["name"])
        script_name = main["command"][1].rsplit("/", 1)[1]
        script = config_maps(objects)[volume["configMap"]["name"]]["data"][script_name]
        (tmp_path / "launcher.sh").write_text(script)
        stub = tmp_path / "stub"
        stub.write_text('#!/bin/sh\necho "$MS_NODE_ID $RANK_ID ${DEVICE_ID:--} $*"\n')
        stub.chmod(0o755)
        env = {**resolved_env(template, index), "PATH": os.environ["PATH"], "TMPDIR": str(tmp_path)}
        env.pop("RANK_TABLE_FILE", None)
        done = subprocess.run(
            ["sh", str(tmp_path / "launcher.sh"), str(stub), *main["args"][1:]],
            env=env, capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        local = int(env["MS_LOCAL_WORKER"])
        seen = {}
        for line in done.stdout.splitlines():
            node_id, rank_id, device, *args = line.split("] ", 1)[1].split(" ")
            assert node_id == rank_id
            assert args == main["args"][1:], "the user's arguments reach every process"
            seen[int(node_id)] = device
        assert sorted(seen) == [index * local + i for i in range(local)]
        ascend = "MSGEN_SET_DEVICE_ID" in env
        assert [seen[k] for k in sorted(seen)] == ([str(i) for i in range(local)] if ascend else ["-"] * local)
        ids += seen
    return ids


@pytest.mark.parametrize("target", INDEX_TARGETS)
@pytest.mark.parametrize("sample", ["ascend-2x8", "ascend-2x8-rank-table", "gpu-2x8"])
def test_per_device_launcher_ids_cover_every_process_once(sample: str, target: str, tmp_path: Path) -> None:
    if sample.endswith("rank-table") and target not in RANK_TABLE_TARGETS:
        pytest.skip("refused: MindCluster fills no rank table for this target's workloads")
    objects = render("-", "--target", target, input=unpinned(MS / f"{sample}.yaml"))
    ids = run_launcher(objects, tmp_path)
    worker_num = {env_of(t)["MS_WORKER_NUM"]["value"] for _, t, _ in pod_templates(objects)}
    assert worker_num == {"16"}, "every role agrees on MS_WORKER_NUM"
    assert sorted(ids) == list(range(16))


@pytest.mark.parametrize("target", INDEX_TARGETS)
def test_msrun_ranks_cover_every_process_once(target: str) -> None:
    objects = render(str(MS / "gpu-2x8-msrun.yaml"), "--target", target)
    ranks = []
    for index, template in worker_pods(objects):
        main = template["spec"]["containers"][0]
        env = resolved_env(template, index)
        flags = dict(f[2:].split("=", 1) for f in main["command"][1:])
        assert main["command"][0] == "msrun"
        assert flags["worker_num"] == env["MS_WORKER_NUM"] == "16"
        assert flags["local_worker_num"] == env["MS_LOCAL_WORKER"] == "8"
        # msrun starts a scheduler only where master_addr is a local address: it is the
        # Scheduler's Service address, never the Worker pod's own.
        assert flags["master_addr"] == "$(MS_SCHED_HOST)" and flags["master_port"] == "$(MS_SCHED_PORT)"
        assert env["MS_SCHED_HOST"].endswith("_SCHEDULER_0_SERVICE_HOST)")
        assert flags["node_rank"] == "$(MS_NODE_RANK)" and flags["join"] == "True"
        assert main["args"][0] == "python"
        rank = int(env["MS_NODE_RANK"])
        # msrun's rule: rank = node_rank × local_worker_num + i
        ranks += [rank * int(flags["local_worker_num"]) + i for i in range(int(flags["local_worker_num"]))]
    assert sorted(ranks) == list(range(16))
    assert "ConfigMap" not in [o["kind"] for o in objects], "msrun needs no launcher ConfigMap"


@pytest.mark.parametrize("target", INDEX_TARGETS)
def test_ascendjob_has_ascend_operators_env(target: str) -> None:
    objects = render(str(SAMPLES / "ascend" / "mindspore-acjob.yaml"), "--target", target)
    ids = []
    for index, template in worker_pods(objects, "ascend"):
        env = resolved_env(template, index, "ascend")
        assert {k: env[k] for k in ("MS_ROLE", "MS_SERVER_NUM", "MS_WORKER_NUM", "MS_LOCAL_WORKER", "MS_SCHED_PORT")} == {
            "MS_ROLE": "MS_WORKER", "MS_SERVER_NUM": "0", "MS_WORKER_NUM": "16", "MS_LOCAL_WORKER": "8", "MS_SCHED_PORT": "2222",
        }
        assert "MS_NODE_ID" not in env, "the launch script derives each process's id"
        main = template["spec"]["containers"][0]
        assert main["command"][0] == "/bin/bash", "launcher none: the command runs as written"
        # ascend-operator's launch scripts: MS_NODE_ID = MS_NODE_RANK × MS_LOCAL_WORKER + i
        ids += [int(env["MS_NODE_RANK"]) * 8 + i for i in range(8)]
    assert sorted(ids) == list(range(16))
    scheduler = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "scheduler")
    assert env_of(scheduler, "ascend")["MS_WORKER_NUM"]["value"] == "16"


def test_ascendjob_single_device_workers_still_get_rank_and_local_worker() -> None:
    text = (SAMPLES / "ascend" / "mindspore-acjob.yaml").read_text().replace("huawei.com/Ascend910: 8", "huawei.com/Ascend910: 1")
    objects = render("-", input=text)
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    env = env_of(worker, "ascend")
    assert env["MS_LOCAL_WORKER"]["value"] == "1" and env["MS_WORKER_NUM"]["value"] == "2"
    assert env["MS_NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == COMPLETION_INDEX


def test_rank_table_operator() -> None:
    objects = render(str(MS / "ascend-2x8-rank-table.yaml"), "--target", "volcano")
    table = config_maps(objects)["rings-config-ms-resnet50-rank-table"]
    # MindCluster fills rings-config-<Volcano Job> only for a Volcano Job labelled ring-controller.atlas.
    vcjob = next(o for o in objects if o["kind"] == "Job")
    assert vcjob["metadata"]["name"] == "ms-resnet50-rank-table"
    assert vcjob["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b"
    assert table["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b"
    assert table["data"] == {"hccl.json": '{"status":"initializing"}'}
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    env = resolved_env(worker, 0)
    assert env["RANK_TABLE_FILE"] == "/user/serverid/devindex/config/hccl.json"
    assert env["RANK_SIZE"] == "16" and env["MSGEN_RANK_TABLE_TIMEOUT"] == "600"
    mount = next(m for m in worker["spec"]["containers"][0]["volumeMounts"] if m["mountPath"] == "/user/serverid/devindex/config")
    volume = next(v for v in worker["spec"]["volumes"] if v["name"] == mount["name"])
    assert volume["configMap"]["name"] == "rings-config-ms-resnet50-rank-table"
    scheduler = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "scheduler")
    assert "RANK_TABLE_FILE" not in env_of(scheduler), "the CPU Scheduler has no NPUs"
    assert [o["kind"] for o in objects][:2] == ["ConfigMap", "ConfigMap"], "ConfigMaps come first"


def unpinned(sample: Path) -> str:
    """The sample's text without its `msgen/target` annotation, so --target chooses."""
    return sample.read_text().replace("    msgen/target: volcano\n", "")


def test_rank_table_operator_statefulset_names_the_worker_statefulset() -> None:
    objects = render("-", "--target", "statefulset", input=unpinned(MS / "ascend-2x8-rank-table.yaml"))
    assert "rings-config-ms-resnet50-rank-table-worker" in config_maps(objects)
    sets = {o["metadata"]["name"]: o for o in objects if o["kind"] == "StatefulSet"}
    worker = sets["ms-resnet50-rank-table-worker"]
    # ascend-operator's StatefulSet plugin: the workload labelled ring-controller.atlas, its
    # pods found by deploy-name; the CPU Scheduler's StatefulSet is not a rank-table workload.
    assert worker["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b"
    assert worker["spec"]["template"]["metadata"]["labels"]["deploy-name"] == "ms-resnet50-rank-table-worker"
    scheduler = sets["ms-resnet50-rank-table-scheduler"]
    assert "ring-controller.atlas" not in scheduler["metadata"]["labels"]
    assert "deploy-name" not in scheduler["spec"]["template"]["metadata"]["labels"]
    volume = next(v for v in worker["spec"]["template"]["spec"]["volumes"] if "configMap" in v)
    assert volume["configMap"]["name"] == "rings-config-ms-resnet50-rank-table-worker"


@pytest.mark.parametrize("target", ["indexed-job", "pod", "jobset"])
def test_rank_table_operator_is_refused_where_mindcluster_fills_no_table(target: str) -> None:
    run = msgen("render", "-", "--target", target, input=unpinned(MS / "ascend-2x8-rank-table.yaml"))
    assert run.exit_code == 1 and run.stdout == ""
    assert ":14:23: error: metadata.annotations.msgen/rank-table: --rank-table operator: " in run.stderr
    assert "which MindCluster's rank-table plugins do not recognise" in run.stderr
    assert "accepted: --target volcano or statefulset, or --rank-table none" in run.stderr


def test_rank_table_label_follows_the_chip() -> None:
    text = (MS / "ascend-2x8-rank-table.yaml").read_text().replace("module-910b-8", "module")
    objects = render("-", "--target", "volcano", input=text)
    assert config_maps(objects)["rings-config-ms-resnet50-rank-table"]["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910"
    run = msgen("render", "-", "--target", "volcano", input=text.replace("    msgen/accelerator-type: module\n", ""))
    assert run.exit_code == 0
    assert "the chip is unknown, so rings-config-ms-resnet50-rank-table is labelled ring-controller.atlas: ascend-910b" in run.stderr


def test_ascend_shm_and_accelerator_type() -> None:
    objects = render(str(MS / "ascend-2x8.yaml"))
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    assert worker["spec"]["nodeSelector"] == {"accelerator-type": "module-910b-8"}
    shm = next(v for v in worker["spec"]["volumes"] if v["name"] == "msgen-shm")
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "32Gi"}
    scheduler = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "scheduler")
    assert "nodeSelector" not in scheduler["spec"], "only NPU pods need the chip"
    assert all(v["name"] != "msgen-shm" for v in scheduler["spec"]["volumes"])
    # A template's own /dev/shm is kept when --shm-size is not given.
    acjob = render(str(SAMPLES / "ascend" / "mindspore-acjob.yaml"))
    worker = next(t for _, t, _ in pod_templates(acjob) if role_of(t) == "worker")
    assert [m["name"] for m in worker["spec"]["containers"][0]["volumeMounts"] if m["mountPath"] == "/dev/shm"] == ["dshm"]


LARGE = """
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {name: big}
spec:
  msReplicaSpecs:
    Scheduler: {template: {spec: {containers: [{name: mindspore, image: ms, command: [python, t.py]}]}}}
    Worker:
      replicas: 17
      template:
        spec:
          containers:
            - name: mindspore
              image: ms
              command: [python, t.py]
              resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_large_clusters_get_longer_timeouts_unless_set() -> None:
    objects = render("-", input=LARGE)
    for _, template, _ in pod_templates(objects):
        env = env_of(template)
        assert env["MS_WORKER_NUM"]["value"] == "136"
        assert env["MS_NODE_TIMEOUT"]["value"] == env["MS_TOPO_TIMEOUT"]["value"] == "1800"
    own = LARGE.replace("command: [python, t.py]\n              resources", "command: [python, t.py]\n              env: [{name: MS_TOPO_TIMEOUT, value: '3600'}]\n              resources")
    worker = next(t for _, t, _ in pod_templates(render("-", input=own)) if role_of(t) == "worker")
    assert env_of(worker)["MS_TOPO_TIMEOUT"]["value"] == "3600"
    msrun = next(t for _, t, _ in pod_templates(render("-", "--launcher", "msrun", input=own)) if role_of(t) == "worker")
    assert "--cluster_time_out=$(MS_TOPO_TIMEOUT)" in msrun["spec"]["containers"][0]["command"]
    small = render("-", input=LARGE.replace("replicas: 17", "replicas: 16"))
    assert all("MS_NODE_TIMEOUT" not in env_of(t) for _, t, _ in pod_templates(small)), "128 processes: defaults"


def test_recovery_volume() -> None:
    run = msgen("render", str(MS / "gpu-2x8-msrun.yaml"))
    assert run.exit_code == 0 and "warning" not in run.stderr
    for _, template, _ in pod_templates(run.objects()):
        env = env_of(template)
        assert env["MS_ENABLE_RECOVERY"]["value"] == "1" and "MS_RECOVERY_PATH" not in env, "2.10 reads no path"
    for _, template, _ in pod_templates(render(str(MS / "gpu-2x8-msrun.yaml"), "--mindspore-version", "2.7.0")):
        assert env_of(template)["MS_RECOVERY_PATH"]["value"] == "/checkpoints", "2.7.0's RecoveryContext reads it"
    never = (MS / "gpu-2x8-msrun.yaml").read_text().replace("restartPolicy: OnFailure", "restartPolicy: Never")
    run = msgen("render", "-", input=never)
    assert run.exit_code == 0
    assert "--recovery-volume: Worker pods never restart (restartPolicy Never)" in run.stderr


def test_launcher_none_and_single_device_keep_the_core_contract() -> None:
    objects = render(str(MS / "gpu-2x8.yaml"), "--launcher", "none")
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    main = worker["spec"]["containers"][0]
    assert main["command"][0] == "python" and "args" not in main
    assert "ConfigMap" not in [o["kind"] for o in objects]
    assert env_of(worker)["MS_LOCAL_WORKER"]["value"] == "8"
    single = render(str(MS / "widedeep-gpu-dataparallel.yaml"))
    for _, template, _ in pod_templates(single):
        assert "MS_LOCAL_WORKER" not in env_of(template) and "ConfigMap" not in [o["kind"] for o in single]


def test_options_come_from_annotations_and_the_command_line_alike() -> None:
    text = (MS / "gpu-2x8.yaml").read_text()
    annotated = text.replace("  name: ms-resnet50-gpu\n", "  name: ms-resnet50-gpu\n  annotations:\n    msgen/launcher: msrun\n")
    assert render("-", input=annotated) == render("-", "--launcher", "msrun", input=text)


def test_null_volume_lists_take_msgens_volumes() -> None:
    text = (MS / "gpu-2x8.yaml").read_text()
    text = text[: text.rindex("              volumeMounts:")] + "              volumeMounts: null\n          volumes: null\n"
    worker = next(t for _, t, _ in pod_templates(render("-", input=text)) if role_of(t) == "worker")
    assert [v["name"] for v in worker["spec"]["volumes"]] == ["msgen-launcher"]
    assert [m["name"] for m in worker["spec"]["containers"][0]["volumeMounts"]] == ["msgen-launcher"]
