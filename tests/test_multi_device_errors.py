"""Bad multi-device and AscendJob input: one positioned message each, exit 1, nothing written."""

from __future__ import annotations

from .conftest import SAMPLES, msgen
from .test_errors import fails

MS = SAMPLES / "mindspore"
GPU = (MS / "gpu-2x8.yaml").read_text()
ASCEND = (MS / "ascend-2x8.yaml").read_text()
ACJOB = (SAMPLES / "ascend" / "mindspore-acjob.yaml").read_text()


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return lines[occurrence - 1]


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


def test_rank_table_without_npus() -> None:
    text = GPU.replace("  name: ms-resnet50-gpu\n", "  name: ms-resnet50-gpu\n  annotations:\n    msgen/rank-table: operator\n")
    err = fails(text)
    assert f"<stdin>:{line_of(text, 'msgen/rank-table')}:23: error: metadata.annotations.msgen/rank-table: --rank-table operator: no role asks for Ascend NPUs" in err


def test_shm_size_against_the_templates_own_mount() -> None:
    err = fails(ACJOB, "--shm-size", "8Gi")
    assert f"<stdin>:{line_of(ACJOB, 'name: dshm')}:19: error: spec.replicaSpecs.Worker.template.spec.containers[0].volumeMounts[4]:" in err
    assert "container 'ascend' mounts its own /dev/shm, and --shm-size 8Gi asks msgen to mount one" in err


def test_bad_option_values() -> None:
    text = ASCEND.replace("msgen/shm-size: 32Gi", "msgen/shm-size: lots")
    err = fails(text)
    assert "metadata.annotations.msgen/shm-size: 'lots' is not accepted; accepted: a size such as 16Gi or 512Mi" in err
    run = msgen("render", str(MS / "ascend-2x8.yaml"), "--accelerator-type", "bad value!")
    assert run.exit_code == 2 and "is not a label value" in run.stderr


def test_accelerator_type_conflicts_with_the_templates_node_selector() -> None:
    err = fails(ACJOB, "--accelerator-type", "module-a3-16")
    assert f"<stdin>:{line_of(ACJOB, 'accelerator-type: module-910b-8')}:31: error: spec.replicaSpecs.Worker.template.spec.nodeSelector.accelerator-type:" in err
    assert "nodeSelector accelerator-type: 'module-910b-8' differs from 'module-a3-16'" in err


def test_a_template_volume_with_msgens_name() -> None:
    text = GPU + "            - name: msgen-launcher\n              emptyDir: {}\n"  # the Worker's volumes
    err = fails(text)
    assert f"<stdin>:{line_of(text, 'name: msgen-launcher')}:15: error: spec.msReplicaSpecs.Worker.template.spec.volumes[1]:" in err
    assert "volume 'msgen-launcher' is a name msgen uses for the per-device launcher; accepted: another volume name" in err


def test_recovery_volume_must_exist_and_be_mounted() -> None:
    err = fails(GPU, "--recovery-volume", "checkpoints")
    assert "spec.msReplicaSpecs.Scheduler.template.spec: --recovery-volume 'checkpoints': Scheduler has no volume of that name; accepted: one of its volumes (data)" in err


def test_ascendjob_of_another_framework() -> None:
    text = ACJOB.replace("framework: mindspore", "framework: pytorch")
    err = fails(text)
    assert f"<stdin>:{line_of(text, 'framework: pytorch')}:16: error: metadata.labels.framework: framework 'pytorch': msgen compiles MindSpore AscendJobs only" in err
    assert "accepted: mindspore" in err


def test_ascendjob_without_framework_label() -> None:
    err = fails(ACJOB.replace("    framework: mindspore\n", ""))
    assert "error: metadata.labels: an AscendJob needs the label 'framework'" in err


def test_ascendjob_replica_type_of_another_framework() -> None:
    text = ACJOB.replace("    Scheduler:\n", "    Master:\n")
    err = fails(text)
    assert f"<stdin>:{line_of(text, 'Master:')}:5: error: spec.replicaSpecs.Master: replica type 'Master' is not part of a MindSpore AscendJob; accepted: Scheduler, Worker" in err


def test_ascendjob_without_container_ascend() -> None:
    err = fails(ACJOB.replace("- name: ascend\n", "- name: trainer\n"))
    assert "Scheduler has no container named 'ascend' (found 'trainer'); accepted: one container named 'ascend', as ascend-operator expects" in err


def test_null_ports_get_the_default_port() -> None:
    for text, port in ((ACJOB, "ascendjob-port"), (GPU, "msjob-port")):
        text = text.replace("              ports:\n                - containerPort: 2222\n                  name: ascendjob-port\n", "              ports: null\n", 1)
        text = text.replace("              command: [\"python\", \"/data/resnet/train.py\", \"--device_target=GPU\", \"--run_distribute=True\"]\n              volumeMounts", "              command: [\"python\", \"/data/resnet/train.py\", \"--device_target=GPU\", \"--run_distribute=True\"]\n              ports: null\n              volumeMounts", 1)
        assert "ports: null" in text
        run = msgen("render", "-", input=text)
        assert run.exit_code == 0, run.stderr
        scheduler = next(o for o in run.objects() if o["kind"] == "Job" and o["metadata"]["name"].endswith("-scheduler"))
        assert scheduler["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 2222, "name": port}]


def test_accelerator_type_on_a_job_without_npus_is_a_warning() -> None:
    run = msgen("render", "-", "--accelerator-type", "module-910b-8", input=GPU)
    assert run.exit_code == 0, run.stderr
    assert "warning: metadata.name: --accelerator-type module-910b-8 is ignored: no role asks for Ascend NPUs" in run.stderr
    assert all("accelerator-type" not in str(o) for o in run.objects())
    text = GPU.replace("  name: ms-resnet50-gpu\n", "  name: ms-resnet50-gpu\n  annotations:\n    msgen/accelerator-type: module-910b-8\n")
    run = msgen("render", "-", input=text)
    assert f"<stdin>:{line_of(text, 'msgen/accelerator-type')}:" in run.stderr
    assert "is ignored: no role asks for Ascend NPUs" in run.stderr
