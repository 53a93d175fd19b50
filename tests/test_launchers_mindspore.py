"""msgen.launchers.mindspore: how a MindSpore pod's processes start (one per device by msgen's
launcher, or msrun) and the settings of large clusters, chosen by framework; each process's
identity is checked by running the rendered launcher (tests/multi_device_pods.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from msgen import launchers
from msgen.launchers import launcher, mindspore
from msgen.model.plan import Options

from .conftest import msgen
from .multi_device_pods import (
    ASCEND,
    GPU,
    INDEX_TARGETS,
    MS,
    RANK_TABLE_TARGETS,
    resolved_env,
    run_launcher,
    unpinned,
    worker_pods,
)
from .plugin_plans import addresses, job, plan, pod_env, sample_plan, slot_of
from .test_errors import fails, line_of
from .test_frameworks_mindspore import env_of, pod_templates, render, role_of


@pytest.mark.parametrize(
    "sample, loaded",
    [("mindspore/gpu-2x8.yaml", True), ("mindspore/lenet-cpu.yaml", True),
     ("caffe2/resnet50-redis.yaml", False), ("mxnet/mxjob-gpu-workers.yaml", False)],
)
def test_it_serves_mindspore_jobs_only(sample: str, loaded: bool) -> None:
    assert (mindspore in launchers.contributors(sample_plan(sample), Options())) == loaded


#: sample -> the env of Worker pod 1: eight devices per pod, two pods
PER_DEVICE = {"MS_LOCAL_WORKER": "8", "MS_NODE_RANK": "1", "MS_WORKER_NUM": "16"}


@pytest.mark.parametrize(
    "sample, pod",
    [("mindspore/gpu-2x8.yaml", "ms-resnet50-gpu-worker-1"),
     ("mindspore/gpu-2x8-msrun.yaml", "ms-resnet50-msrun-worker-1")],
)
def test_a_multi_device_worker_starts_a_process_per_device(sample: str, pod: str) -> None:
    env = pod_env(sample_plan(sample), pod)
    assert {k: env.get(k) for k in PER_DEVICE} == PER_DEVICE


def test_it_adds_no_labels_to_workloads() -> None:
    """It does not label workloads (`LabelsWorkloads`), so the registry asks it nothing."""
    assert not hasattr(mindspore, "workload_labels")
    assert launchers.workload_labels(sample_plan("mindspore/gpu-2x8.yaml"), Options()) == []


def test_per_device_launcher_needs_the_command() -> None:
    text = GPU.replace('              command: ["python", "/data/resnet/train.py", "--device_target=GPU", "--run_distribute=True"]\n              env:', "              env:")
    err = fails(text)
    assert f"<stdin>:{line_of(text, '- name: mindspore', 2)}:15: error: spec.msReplicaSpecs.Worker.template.spec.containers[0]:" in err
    assert "container 'mindspore' sets no command, and the per-device launcher must wrap it" in err


def test_msrun_needs_a_python_task() -> None:
    text = GPU.replace('command: ["python", "/data/resnet/train.py", "--device_target=GPU", "--run_distribute=True"]\n              env:', 'command: ["/bin/bash", "-c", "python train.py"]\n              env:')
    err = fails(text, "--launcher", "msrun")
    assert f"<stdin>:{line_of(text, '/bin/bash')}:" in err
    assert "spec.msReplicaSpecs.Worker.template.spec.containers[0].command[0]: launcher msrun runs its task with python, so '/bin/bash' would run as a Python script" in err


def test_msrun_refuses_a_second_scheduler_on_host_network() -> None:
    text = ASCEND.replace("    Scheduler:\n      replicas: 1\n      template:\n        spec:\n", "    Scheduler:\n      replicas: 1\n      template:\n        spec:\n          hostNetwork: true\n")
    err = fails(text, "--launcher", "msrun", "--scheduler-address", "dns")
    assert f"<stdin>:{line_of(text, 'hostNetwork: true')}:24: error: spec.msReplicaSpecs.Scheduler.template.spec.hostNetwork:" in err
    assert "msrun on a Worker of that node would start a second scheduler" in err
    run = msgen("render", "-", "--launcher", "msrun", input=ASCEND)
    assert run.exit_code == 0 and "with kube-proxy in IPVS mode" in run.stderr


def test_msrun_with_an_operator_rank_table() -> None:
    err = fails((MS / "ascend-2x8-rank-table.yaml").read_text(), "--launcher", "msrun")
    assert "launcher msrun with --rank-table operator is not accepted" in err


def test_a_template_volume_with_msgens_name() -> None:
    text = GPU + "            - name: msgen-launcher\n              emptyDir: {}\n"  # the Worker's volumes
    err = fails(text)
    assert f"<stdin>:{line_of(text, 'name: msgen-launcher')}:15: error: spec.msReplicaSpecs.Worker.template.spec.volumes[1]:" in err
    assert "volume 'msgen-launcher' is a name msgen uses for the per-device launcher; accepted: another volume name" in err


def test_recovery_volume_must_exist_and_be_mounted() -> None:
    err = fails(GPU, "--recovery-volume", "checkpoints")
    assert "spec.msReplicaSpecs.Scheduler.template.spec: --recovery-volume 'checkpoints': Scheduler has no volume of that name; accepted: one of its volumes (data)" in err


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


GPUS_8 = job(resources="{limits: {nvidia.com/gpu: 8}}")


def test_each_launcher_wraps_a_multi_device_worker_its_way() -> None:
    made = plan(GPUS_8)
    worker = made.role("Worker")
    assert worker is not None
    wraps = {}
    for name, chosen in launcher.LAUNCHERS.items():
        patches = chosen.contribute(made, worker, Options(launcher=name))  # type: ignore[arg-type]  # a key of LAUNCHERS
        wraps[name] = [wrap.command[0] for p in patches for _, wrap in p.command_wrap]
        assert chosen.wraps_command == bool(wraps[name]), name
    assert wraps == {"per-device": ["/bin/sh"], "msrun": ["msrun"], "none": []}




def test_null_volume_lists_take_msgens_volumes() -> None:
    text = (MS / "gpu-2x8.yaml").read_text()
    text = text[: text.rindex("              volumeMounts:")] + "              volumeMounts: null\n          volumes: null\n"
    worker = next(t for _, t, _ in pod_templates(render("-", input=text)) if role_of(t) == "worker")
    assert [v["name"] for v in worker["spec"]["volumes"]] == ["msgen-launcher"]
    assert [m["name"] for m in worker["spec"]["containers"][0]["volumeMounts"]] == ["msgen-launcher"]


def test_its_entry_points_on_a_multi_device_job() -> None:
    """`check` refuses what its launcher cannot start (msrun runs its task with python); `contribute` wraps a multi-device
    Worker's command and adds nothing to a job that is not distributed."""
    made = sample_plan("mindspore/gpu-2x8.yaml")
    assert mindspore.check(made, Options()) == []
    shell = plan(job(resources="{limits: {nvidia.com/gpu: 8}}").replace("command: [python, train.py]", "command: [bash, run.sh]"))
    assert mindspore.check(shell, Options()) == []
    assert [d.is_error for d in mindspore.check(shell, Options(launcher="msrun"))] == [True]
    patches = mindspore.contribute(made, slot_of(made, "Worker"), addresses(made), Options())
    assert [p.contributor for p in patches][:1] == ["the per-device launcher"]
    alone = plan(job(scheduler=False, workers=1))
    assert mindspore.contribute(alone, slot_of(alone, "Worker", 0), addresses(alone), Options()) == []
