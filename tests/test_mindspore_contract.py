"""The MindSpore env contract (contracts §1-2), read from the rendered objects of each target.

These tests never call msgen's internals: they render as a user would and look at what a pod
would see, for every role, in every target.
"""

from __future__ import annotations

from typing import Any

import pytest

from msgen.model import versions
from msgen.launchers import resolve
from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen
from .golden_cases import refused

MS_ENV = {"MS_SCHED_HOST", "MS_NODE_ID", "MS_SCHED_PORT", "MS_SERVER_NUM", "MS_WORKER_NUM", "MS_ROLE"}
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def render(path: str, *args: str, input: str | None = None) -> list[dict[str, Any]]:
    run = msgen("render", path, *args, input=input)
    assert run.exit_code == 0, run.stderr
    return run.objects()


def pod_templates(objects: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any], int]]:
    """(owning object, pod template, number of pods it stands for) for every workload."""
    out = []
    for obj in objects:
        if obj["kind"] == "Pod":
            out.append((obj, obj, 1))
        elif obj["kind"] == "Job" and obj["apiVersion"] == "batch/v1":
            out.append((obj, obj["spec"]["template"], obj["spec"]["parallelism"]))
        elif obj["kind"] == "StatefulSet":
            out.append((obj, obj["spec"]["template"], obj["spec"]["replicas"]))
        elif obj["kind"] in ("JobSet", "TrainingRuntime"):  # a runtime: the JobSet Trainer builds
            spec = obj["spec"]["template"]["spec"] if obj["kind"] == "TrainingRuntime" else obj["spec"]
            for rjob in spec["replicatedJobs"]:
                job = rjob["template"]["spec"]
                out.append((obj, job["template"], rjob["replicas"] * job["parallelism"]))
        elif obj["kind"] == "Job":  # Volcano
            for task in obj["spec"]["tasks"]:
                out.append((obj, task["template"], task["replicas"]))
    return out


#: Targets whose controller gives pods their DNS subdomain (and, but for StatefulSet, creates
#: the headless Service) itself.
CONTROLLER_SUBDOMAIN = {"statefulset", "jobset", "volcano", "trainjob"}
CONTROLLER_SERVICE = {"jobset", "volcano", "trainjob"}
#: Kubeflow Trainer's name for the trainer step's container (the Workers' main container on
#: target trainjob).
TRAINER_NODE = "node"


def role_of(template: dict[str, Any]) -> str:
    return str(template["metadata"]["labels"]["training.kubeflow.org/replica-type"])


def main_container(template: dict[str, Any], container: str = "mindspore") -> dict[str, Any]:
    """The pod's container `container`, or in Trainer's trainer step (target trainjob), where
    Trainer requires the main container to be named `node`, that one."""
    named = {c["name"]: c for c in template["spec"]["containers"]}
    found = named.get(container) or named.get(TRAINER_NODE)
    assert found is not None, f"no container {container}"
    return found


def env_of(template: dict[str, Any], container: str = "mindspore") -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in main_container(template, container).get("env", [])}


def pods_per_role(objects: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, template, n in pod_templates(objects):
        counts[role_of(template)] = counts.get(role_of(template), 0) + n
    return counts


def services(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}


DISTRIBUTED = ["widedeep-gpu-dataparallel", "widedeep-ps", "lenet-cpu"]
MULTI_DEVICE = ["ascend-2x8", "ascend-2x8-rank-table", "gpu-2x8", "gpu-2x8-msrun"]


def worker_processes(objects: list[dict[str, Any]]) -> int:
    """Worker processes: pods × MS_LOCAL_WORKER (one process per pod without it)."""
    total = 0
    for _, template, n in pod_templates(objects):
        if role_of(template) == "worker":
            local = env_of(template).get("MS_LOCAL_WORKER")
            total += n * (int(local["value"]) if local else 1)
    return total


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("sample", DISTRIBUTED + MULTI_DEVICE)
def test_every_role_sees_the_cluster(sample: str, target: str) -> None:
    if refused(SAMPLES / "mindspore" / f"{sample}.yaml", target, versions.show(versions.NEWEST)):
        pytest.skip("the target refuses this job; its golden case's expected-errors.txt says how")
    objects = render(str(SAMPLES / "mindspore" / f"{sample}.yaml"), "--target", target)
    counts = pods_per_role(objects)
    svc = services(objects)
    for _, template, _ in pod_templates(objects):
        role = role_of(template)
        env = env_of(template)
        # A multi-device Worker pod's processes get MS_NODE_ID from their launcher.
        wanted = MS_ENV - {"MS_NODE_ID"} if "MS_LOCAL_WORKER" in env else MS_ENV
        assert wanted <= set(env), f"{role} lacks {wanted - set(env)}"
        assert env["MS_ROLE"]["value"] == {"scheduler": "MS_SCHED", "ps": "MS_PSERVER", "worker": "MS_WORKER"}[role]
        assert env["MS_WORKER_NUM"]["value"] == str(worker_processes(objects))
        assert env["MS_SERVER_NUM"]["value"] == str(counts.get("ps", 0))
        if role == "scheduler":
            assert env["MS_SCHED_HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
            port = next(p for p in template["spec"]["containers"][0]["ports"] if p["name"] == "msjob-port")
            assert env["MS_SCHED_PORT"]["value"] == str(port["containerPort"])
        else:
            # The scheduler's ClusterIP Service, whose variables the kubelet injects.
            host = env["MS_SCHED_HOST"]["value"]
            assert host.startswith("$(") and host.endswith("_SERVICE_HOST)")
            service_name = host[2 : -len("_SERVICE_HOST)")].lower().replace("_", "-")
            service = svc[service_name]
            assert service["spec"]["type"] == "ClusterIP"
            assert service["spec"]["selector"]["training.kubeflow.org/replica-type"] == "scheduler"
            service_port = next(p for p in service["spec"]["ports"] if p["name"] == "msjob-port")
            assert env["MS_SCHED_PORT"]["value"] == str(service_port["port"])


@pytest.mark.parametrize("sample", DISTRIBUTED)
def test_worker_node_ids_are_their_indexes(sample: str) -> None:
    pods = render(str(SAMPLES / "mindspore" / f"{sample}.yaml"), "--target", "pod")
    ids = [env_of(p)["MS_NODE_ID"]["value"] for p in pods if p["kind"] == "Pod" and role_of(p) == "worker"]
    assert ids == [str(i) for i in range(len(ids))]
    jobs = render(str(SAMPLES / "mindspore" / f"{sample}.yaml"))
    worker = next(j for j in jobs if j["kind"] == "Job" and j["metadata"]["name"].endswith("-worker"))
    node_id = env_of(worker["spec"]["template"])["MS_NODE_ID"]
    assert node_id["valueFrom"]["fieldRef"]["fieldPath"] == COMPLETION_INDEX


def test_scheduler_identity_is_the_pod_name_ms_operator_gave() -> None:
    objects = render(str(SAMPLES / "mindspore" / "widedeep-ps.yaml"))
    by_role = {role_of(t): env_of(t) for _, t, _ in pod_templates(objects)}
    assert by_role["scheduler"]["MS_NODE_ID"]["value"] == "ms-widedeep-ps-scheduler-0"
    assert by_role["ps"]["MS_NODE_ID"]["value"] == "ms-widedeep-ps-ps-0"


PS_TWO = """
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata: {name: pstwo}
spec:
  msReplicaSpecs:
    Scheduler: {template: {spec: {containers: [{name: mindspore, image: ms}]}}}
    PS: {replicas: 2, template: {spec: {containers: [{name: mindspore, image: ms}]}}}
    Worker: {replicas: 3, template: {spec: {containers: [{name: mindspore, image: ms}]}}}
"""


def test_indexed_ps_node_ids_expand_the_completion_index() -> None:
    objects = render("-", input=PS_TWO)
    ps = next(o for o in objects if o["metadata"]["name"] == "pstwo-ps")
    env = ps["spec"]["template"]["spec"]["containers"][0]["env"]
    names = [e["name"] for e in env]
    # JOB_COMPLETION_INDEX must come before the value that expands it.
    assert names.index("JOB_COMPLETION_INDEX") < names.index("MS_NODE_ID")
    assert env[names.index("JOB_COMPLETION_INDEX")]["valueFrom"]["fieldRef"]["fieldPath"] == COMPLETION_INDEX
    assert env[names.index("MS_NODE_ID")]["value"] == "pstwo-ps-$(JOB_COMPLETION_INDEX)"
    pods = render("-", "--target", "pod", input=PS_TWO)
    assert [env_of(p)["MS_NODE_ID"]["value"] for p in pods if p["kind"] == "Pod" and role_of(p) == "ps"] == [
        "pstwo-ps-0",
        "pstwo-ps-1",
    ]


PS_TWO_COMMANDS = PS_TWO.replace("image: ms}", "image: ms, command: [python, train.py], args: [--epochs=1]}")


@pytest.mark.parametrize("target", TARGETS)
def test_dns_addressing_uses_the_schedulers_stable_name(target: str) -> None:
    objects = render("-", "--target", target, "--scheduler-address", "dns", input=PS_TWO_COMMANDS)
    svc = services(objects)
    if target in CONTROLLER_SERVICE:
        assert svc == {}, "the JobSet / Volcano controller creates the headless Service"
    else:
        assert list(svc) == ["pstwo"], "dns addressing needs only the headless Service"
        assert svc["pstwo"]["spec"]["clusterIP"] == "None"
    # Each target's own host name for scheduler 0, as its controller names the pod.
    scheduler_host = {"jobset": "pstwo-scheduler-0-0", "trainjob": "pstwo-scheduler-0-0"}.get(target, "pstwo-scheduler-0")
    for owner, template, _ in pod_templates(objects):
        if target in CONTROLLER_SUBDOMAIN:
            assert "subdomain" not in template["spec"]
        else:
            assert template["spec"]["subdomain"] == "pstwo"
        main = template["spec"]["containers"][0]
        if role_of(template) != "scheduler":
            assert env_of(template)["MS_SCHED_HOST"]["value"] == f"{scheduler_host}.pstwo"
            # MindSpore takes only an IP address: the name is resolved when the container starts.
            assert main["command"] == ["/bin/sh", "-c", resolve.script(), "msgen-resolve"]
            assert main["args"] == ["python", "train.py", "--epochs=1"]
        else:
            assert env_of(template)["MS_SCHED_HOST"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
            assert main["command"] == ["python", "train.py"], "the Scheduler needs no name resolved"
        if role_of(template) == "scheduler" and owner["kind"] == "Pod":
            assert template["spec"]["hostname"] == scheduler_host
    if target == "jobset":
        jobset = next(o for o in objects if o["kind"] == "JobSet")
        assert jobset["spec"]["network"] == {"enableDNSHostnames": True, "subdomain": "pstwo"}
    if target == "trainjob":  # the JobSet Trainer builds from the runtime is named after the TrainJob
        runtime = next(o for o in objects if o["kind"] == "TrainingRuntime")
        assert runtime["spec"]["template"]["spec"]["network"] == {"enableDNSHostnames": True, "subdomain": "pstwo"}
        assert next(o for o in objects if o["kind"] == "TrainJob")["metadata"]["name"] == "pstwo"
    if target == "statefulset":
        assert {o["spec"]["serviceName"] for o in objects if o["kind"] == "StatefulSet"} == {"pstwo"}
    if target == "volcano":
        assert "svc" in next(o for o in objects if o["kind"] == "Job")["spec"]["plugins"]


@pytest.mark.parametrize("target", TARGETS)
def test_standalone_worker_gets_no_env_and_no_service(target: str) -> None:
    objects = render(str(SAMPLES / "mindspore" / "standalone-worker.yaml"), "--target", target)
    assert services(objects) == {}
    for _, template, _ in pod_templates(objects):
        assert not MS_ENV & set(env_of(template))
        assert "subdomain" not in template["spec"]


def test_only_container_mindspore_gets_the_env_and_user_env_stays_first() -> None:
    job = PS_TWO.replace(
        "Worker: {replicas: 3, template: {spec: {containers: [{name: mindspore, image: ms}]}}}",
        "Worker: {replicas: 3, template: {spec: {containers: ["
        "{name: mindspore, image: ms, env: [{name: A, value: x}]}, {name: sidecar, image: s}]}}}",
    )
    objects = render("-", input=job)
    worker = next(o for o in objects if o["metadata"]["name"] == "pstwo-worker")
    main, sidecar = worker["spec"]["template"]["spec"]["containers"]
    assert main["env"][0] == {"name": "A", "value": "x"}
    assert "env" not in sidecar


def test_gpu_isolation_blanks_gpus_for_pods_without_one() -> None:
    objects = render(str(SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml"))
    by_role = {role_of(t): env_of(t) for _, t, _ in pod_templates(objects)}
    assert by_role["scheduler"]["NVIDIA_VISIBLE_DEVICES"] == {"name": "NVIDIA_VISIBLE_DEVICES", "value": ""}
    assert "NVIDIA_VISIBLE_DEVICES" not in by_role["worker"]
    cpu_only = render(str(SAMPLES / "mindspore" / "widedeep-ps.yaml"))
    assert all("NVIDIA_VISIBLE_DEVICES" not in env_of(t) for _, t, _ in pod_templates(cpu_only))


def test_ascend_devices_and_host_network_address() -> None:
    objects = render(str(SAMPLES / "mindspore" / "ascend-2x8.yaml"))
    by_role = {role_of(t): (t, env_of(t)) for _, t, _ in pod_templates(objects)}
    worker, env = by_role["worker"]
    assert env["ASCEND_VISIBLE_DEVICES"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.annotations['huawei.com/Ascend910']"
    assert env["HCCL_IF_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.hostIP"
    # Resources and the template's volumes stay as written; msgen adds its own.
    main = worker["spec"]["containers"][0]
    assert main["resources"]["limits"] == {"huawei.com/Ascend910": 8}
    assert worker["spec"]["nodeSelector"] == {"accelerator-type": "module-910b-8"}
    assert [v["name"] for v in worker["spec"]["volumes"]] == ["code", "ascend-driver", "msgen-shm", "msgen-launcher"]
    scheduler_env = by_role["scheduler"][1]
    assert "ASCEND_VISIBLE_DEVICES" not in scheduler_env and "HCCL_IF_IP" not in scheduler_env


@pytest.mark.parametrize("target", TARGETS)
def test_labels_and_object_order(target: str) -> None:
    objects = render(str(SAMPLES / "mindspore" / "widedeep-ps.yaml"), "--target", target)
    for obj in objects:
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "msgen"
        assert labels["app.kubernetes.io/name"] == "ms-widedeep-ps"
        assert labels["training.kubeflow.org/job-name"] == "ms-widedeep-ps"
        assert labels["team"] == "recommendation", "the job's own labels reach every object"
        assert obj["metadata"]["namespace"] == "training"
    kinds = [o["kind"] for o in objects]
    assert kinds == sorted(kinds, key=lambda k: {"Service": 0, "PodGroup": 1}.get(k, 2))
    roles = [role_of(t) for _, t, _ in pod_templates(objects)]
    assert roles == sorted(roles, key=["scheduler", "ps", "worker"].index)


def test_defaults_follow_ms_operator() -> None:
    objects = render(str(SAMPLES / "mindspore" / "lenet-cpu.yaml"))
    jobs = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Job"}
    # lower-case replica keys are accepted; replicas default to 1; restartPolicy to Never
    scheduler = jobs["msjob-mnist-scheduler"]
    assert scheduler["spec"]["completions"] == 1
    assert scheduler["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert scheduler["spec"]["backoffLimit"] == 0
    assert scheduler["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 2222, "name": "msjob-port"}
    ]
    worker = jobs["msjob-mnist-worker"]
    assert worker["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    # no runPolicy.backoffLimit: ms-operator restarted OnFailure containers without limit
    assert worker["spec"]["backoffLimit"] == 2147483647


def test_run_policy_reaches_the_jobs() -> None:
    objects = render(str(SAMPLES / "mindspore" / "widedeep-ps.yaml"))
    for job in (o for o in objects if o["kind"] == "Job"):
        assert job["spec"]["backoffLimit"] == 2
        assert job["spec"]["ttlSecondsAfterFinished"] == 3600
    ascend = render(str(SAMPLES / "mindspore" / "ascend-2x8.yaml"), "--target", "pod")
    assert all(p["spec"]["activeDeadlineSeconds"] == 86400 for p in ascend if p["kind"] == "Pod")


def test_user_port_named_msjob_port_is_the_scheduler_port() -> None:
    job = PS_TWO.replace(
        "Scheduler: {template: {spec: {containers: [{name: mindspore, image: ms}]}}}",
        "Scheduler: {template: {spec: {containers: [{name: mindspore, image: ms, "
        "ports: [{name: msjob-port, containerPort: 3333}]}]}}}",
    )
    objects = render("-", input=job)
    for _, template, _ in pod_templates(objects):
        assert env_of(template)["MS_SCHED_PORT"]["value"] == "3333"
    assert services(objects)["pstwo-scheduler-0"]["spec"]["ports"] == [{"name": "msjob-port", "port": 3333}]


EXIT_CODE = PS_TWO.replace("Worker: {replicas: 3,", "Worker: {replicas: 3, restartPolicy: ExitCode,")


def worker_job(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"].endswith("-worker"))


def test_exit_code_restart_policy_becomes_a_pod_failure_policy() -> None:
    spec = worker_job(render("-", "--kube-version", "1.26", input=EXIT_CODE))["spec"]
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["backoffLimit"] == 2147483647, "signals and OOM kills are retried without limit, as ms-operator did"
    ignore, fail = spec["podFailurePolicy"]["rules"]
    assert ignore == {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
    assert fail["action"] == "FailJob"
    assert fail["onExitCodes"] == {"containerName": "mindspore", "operator": "In", "values": list(range(1, 128))}


def test_exit_code_before_1_26_is_a_warning() -> None:
    run = msgen("render", "-", "--kube-version", "1.25", input=EXIT_CODE)
    assert run.exit_code == 0
    assert "podFailurePolicy" not in run.stdout
    assert "restartPolicy: ExitCode needs Kubernetes 1.26 or newer with target indexed-job" in run.stderr
    assert "restartPolicy: restartPolicy" not in run.stderr


def test_default_success_policy_is_worker_0() -> None:
    spec = worker_job(render("-", input=PS_TWO))["spec"]
    assert spec["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    everyone = PS_TWO.replace("spec:\n  msReplicaSpecs:", "spec:\n  successPolicy: AllWorkers\n  msReplicaSpecs:")
    assert "successPolicy" not in worker_job(render("-", input=everyone))["spec"]
    run = msgen("render", "-", "--kube-version", "1.30", input=PS_TWO)
    assert "successPolicy" not in worker_job(run.objects())["spec"]
    assert "successPolicy (default: worker 0) needs Kubernetes 1.31 or newer with target indexed-job" in run.stderr
