"""Bad input of the older kinds: exit 1, nothing on stdout, positioned messages that say
what is accepted. The 2020 MSJob's own example (seed `000`) is checked as written."""

from __future__ import annotations

import re

from .conftest import SAMPLES, msgen, shared_glob


def seed_example() -> str:
    """The distributed MSJob of the 2020 ms-operator's README, verbatim."""
    text = shared_glob("seeds", "000_*").read_text()
    match = re.search(r"```yaml\n(# WIP example.*?)```", text, re.S)
    assert match is not None
    return match.group(1)


def fails(text: str, *args: str) -> str:
    run = msgen("render", "-", *args, input=text)
    assert run.exit_code == 1, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    return run.stderr


def test_seed_example_as_written_names_its_repeated_keys() -> None:
    err = fails(seed_example())
    assert "<stdin>:32:11: error: duplicate key 'restartPolicy' (first written on line 24)" in err
    assert "<stdin>:56:11: error: duplicate key 'restartPolicy' (first written on line 48)" in err


def test_seed_example_names_each_volume_problem() -> None:
    text = seed_example().replace(
        "                defaultMode: 0755\n          restartPolicy: OnFailure\n",
        "                defaultMode: 0755\n",
    )
    # The pod template's own schema first: positioned, with what to do.
    err = fails(text)
    assert "<stdin>:44:17: error: spec.replicaSpecs[1].template.spec.containers[0].volumeMounts[1]: missing required field 'mountPath'" in err
    assert (
        "<stdin>:45:17: error: spec.replicaSpecs[1].template.spec.containers[0].volumeMounts[1]."
        "hostPath: unknown field 'hostPath' (a hostPath volume source belongs in the pod's volumes)"
    ) in err
    # With the mount written as a mount, the job's own consistency checks follow.
    text = text.replace(
        "                hostPath:\n                    path: /root/gopath/src/gitee.com/mindspore/ms-operator/examples\n",
        "                mountPath: /tmp/test\n",
    )
    err = fails(text)
    # Only container, not named mindspore: configured, with a warning.
    assert (
        "<stdin>:17:19: warning: spec.replicaSpecs[0].template.spec.containers[0].name: "
        "MASTER's only container is named 'msjob-mnist', not 'mindspore'"
    ) in err
    # Mounted but never declared, in both replicas.
    for line in (22, 44):
        assert (
            f"<stdin>:{line}:23: error: spec.replicaSpecs[{line // 40}].template.spec."
            "containers[0].volumeMounts[1].name: volume 'ms-mnist-local-file' is mounted but "
            "not declared in the pod's volumes; declared: 'training-result', 'entrypoint'"
        ) in err
    # Declared but never mounted: a warning.
    assert "<stdin>:28:21: warning: spec.replicaSpecs[0].template.spec.volumes[1].name: volume 'entrypoint' is declared but no container mounts it" in err


LEGACY = (SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml").read_text()


def test_legacy_master_port_must_be_a_port() -> None:
    err = fails(LEGACY.replace('masterPort: "23456"', 'masterPort: "tcp"'))
    assert "<stdin>:10:15: error: spec.masterPort: masterPort 'tcp' is not a port; accepted: a number from 1 to 65535" in err


def test_legacy_needs_one_master() -> None:
    err = fails(LEGACY.replace("    - replicas: 1\n      replicaType: MASTER", "    - replicas: 2\n      replicaType: MASTER"))
    assert "<stdin>:12:17: error: spec.replicaSpecs[0].replicas: the MASTER must have exactly one replica, not 2" in err
    err = fails(LEGACY.replace("replicaType: MASTER", "replicaType: WORKER"))
    assert "a second WORKER replica spec" in err
    assert "no MASTER replica spec; accepted: one MASTER (replicas 1) and any WORKERs" in err


def test_legacy_replica_type_is_checked() -> None:
    err = fails(LEGACY.replace("replicaType: MASTER", "replicaType: CHIEF"))
    assert "<stdin>:13:20: error: spec.replicaSpecs[0].replicaType:" in err
    assert "'MASTER'" in err and "'WORKER'" in err


MX_DIST = (SAMPLES / "mxnet" / "mx-job-dist.yaml").read_text()
MX_GPU = (SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml").read_text()


def test_mxjob_dist_needs_every_replica_type() -> None:
    start = MX_DIST.index("    - replicas: 2\n      mxReplicaType: SERVER")
    end = MX_DIST.index("    - replicas: 3\n")
    err = fails(MX_DIST[:start] + MX_DIST[end:])
    assert "<stdin>:8:12: error: spec.jobMode: jobMode dist needs SCHEDULER, SERVER and WORKER replica specs; missing: SERVER" in err


def test_mxjob_local_is_one_worker() -> None:
    err = fails(MX_DIST.replace("jobMode: dist", "jobMode: local"))
    assert "<stdin>:8:12: error: spec.jobMode: jobMode local runs one process" in err


def test_mxjob_ps_root_port_and_container_port_must_agree() -> None:
    text = MX_DIST.replace(
        "              name: mxnet\n              command: [\"python\"]\n              args: [\"train_cifar10.py\"]\n              workingDir: /incubator-mxnet/example/image-classification\n          restartPolicy: OnFailure\n    - replicas: 2",
        "              name: mxnet\n              ports: [{name: mxjob-port, containerPort: 9000}]\n          restartPolicy: OnFailure\n    - replicas: 2",
        1,
    )
    err = fails(text)
    assert "<stdin>:12:19: error: spec.replicaSpecs[0].PsRootPort: PsRootPort 9091 differs from the mxjob-port port 9000" in err


def test_mxjob_one_scheduler_and_mode_roles() -> None:
    err = fails(MX_GPU.replace("    Scheduler:\n      replicas: 1", "    Scheduler:\n      replicas: 2"))
    assert "<stdin>:13:17: error: spec.mxReplicaSpecs.Scheduler.replicas: more than one Scheduler: replicas 2; accepted: 1" in err
    err = fails(MX_GPU.replace("    Server:", "    Tuner:"))
    assert "error: spec.mxReplicaSpecs.Tuner: replica type 'Tuner' is not accepted in jobMode MXTrain (a MXTune replica type); accepted: Scheduler, Server, Worker" in err
    err = fails(MX_GPU.replace("    Server:", "    TunerServer:"))
    assert "replica type 'TunerServer' is not accepted in jobMode MXTrain (a MXTune replica type)" in err


def test_mxjob_needs_the_mxnet_container() -> None:
    err = fails(MX_GPU.replace("- name: mxnet\n              image: kubeflow/mxnet-gpu:latest\n              ports", "- name: trainer\n              image: kubeflow/mxnet-gpu:latest\n              ports"))
    assert "spec.mxReplicaSpecs.Scheduler.template.spec.containers: Scheduler has no container named 'mxnet' (found 'trainer')" in err


CAFFE2 = (SAMPLES / "caffe2" / "resnet50-redis.yaml").read_text()


def test_caffe2_redis_needs_a_host() -> None:
    err = fails(CAFFE2.replace("      redisHost: redis-service\n", ""))
    assert "<stdin>:8:7: error: spec.backendSpecs: backendType redis needs redisHost" in err


def test_caffe2_backend_type_is_checked() -> None:
    err = fails(CAFFE2.replace("backendType: redis", "backendType: gloo"))
    assert "<stdin>:8:20: error: spec.backendSpecs.backendType:" in err
    assert "'redis'" in err


def test_unknown_job_like_kind_passes_through_naming_the_known_kinds() -> None:
    text = MX_GPU.replace("kind: MXJob\n", "kind: TFJob\n", 1)
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0
    assert run.objects()[0]["kind"] == "TFJob"
    assert "warning: kind: kubeflow.org/v1 TFJob is passed through unchanged: msgen compiles" in run.stderr
    for known in ("kubeflow.org/v1 MSJob", "kubeflow.org/v1 MXJob", "kubeflow.org/v1alpha1 Caffe2Job", "mlkube.io/v1beta1 MxJob", "mindspore.gitee.com/v1 MSJob"):
        assert known in run.stderr


def test_legacy_master_port_and_container_port_must_agree() -> None:
    text = LEGACY.replace(
        "            name: msjob-mnist\n            command",
        "            name: msjob-mnist\n            ports: [{name: msjob-port, containerPort: 3000}]\n            command",
        1,
    )
    err = fails(text)
    assert "<stdin>:10:15: error: spec.masterPort: masterPort 23456 differs from the msjob-port port 3000 of container 'msjob-mnist'" in err


def test_seed_mxjob_gpu_example_gets_field_level_messages() -> None:
    """The original mxnet-operator's GPU example, a tf-operator leftover, as written."""
    text = shared_glob("seeds", "002_*").read_text()
    match = re.search(r'```\n(apiVersion: "mlkube.io/v1beta1".*?)```', text, re.S)
    assert match is not None
    err = fails(match.group(1))
    assert "<stdin>:6:3: error: spec.replica_specs: unknown field 'replica_specs' (did you mean 'replicaSpecs'?)" in err
    err = fails(match.group(1).replace("replica_specs", "replicaSpecs").replace("spec:\n", "spec:\n  jobMode: dist\n", 1))
    assert "<stdin>:10:22: error: spec.replicaSpecs[0].mxReplicaType: 'MASTER' is not accepted; accepted: 'SCHEDULER', 'SERVER' or 'WORKER'" in err


def test_mxjob_run_policy_as_the_crd_has_it() -> None:
    text = MX_GPU.replace(
        "  runPolicy:\n    backoffLimit: 2\n",
        "  runPolicy:\n    backoffLimit: 2\n    suspend: true\n    schedulingPolicy: {scheduleTimeoutSeconds: 60}\n",
    )
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0, run.stderr
    assert "<stdin>:11:14: warning: spec.runPolicy.suspend: suspend: true is not expressed" in run.stderr
    assert "schedulingPolicy: it asks for gang scheduling, which target indexed-job expresses as a PodGroup" in run.stderr


def test_env_listing_every_replica_has_a_size_limit() -> None:
    err = fails(MX_GPU.replace("    Worker:\n      replicas: 2", "    Worker:\n      replicas: 2000"))
    assert "<stdin>:36:17: error: spec.mxReplicaSpecs.Worker.replicas: 2003 replicas in all: MX_CONFIG lists every replica in every pod" in err
    err = fails(CAFFE2.replace("replicas: 2", "replicas: 1099511627776"), "--target", "pod")
    assert "1099511627776 replicas in all: CAFFE2_CONFIG lists every replica" in err


def test_a_compiled_kind_under_another_group_is_an_error_naming_the_group_meant() -> None:
    text = MX_GPU.replace("apiVersion: kubeflow.org/v1\n", "apiVersion: example.com/v1\n")
    run = msgen("render", "-", input=text)
    assert run.exit_code == 1 and run.stdout == ""
    assert "example.com/v1 MXJob is not a kind msgen compiles (did you mean kubeflow.org/v1 MXJob?)" in run.stderr
