"""A real MindSpore training worker killed with `kill -9`, on a real cluster.

The workers train a small data-parallel model (a Dense layer, gradients averaged by
AllReduce over MindSpore's dynamic cluster, the environment msgen renders) for a minute.
With `restartPolicy: ExitCode`, a worker killed by a signal (exit 137) is retried, as
ms-operator retried it, and a program error (1-127) fails the job at once.

Needs MSGEN_TEST_KUBECONFIG and the MindSpore image (MSGEN_TEST_IMAGE); see tests/live.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .live import IMAGE, get, kubectl, msgen_started, namespace, needs_cluster, running_pod, wait_for, write

pytestmark = needs_cluster
__all__ = ["namespace"]

TRAIN = '''\
import os, sys, time
import numpy as np
import mindspore as ms
from mindspore import nn

steps = int(os.environ.get("STEPS", "120"))
ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
rank, size = 0, 1
if os.environ.get("MS_ROLE"):  # a distributed job: msgen set MindSpore's dynamic cluster
    from mindspore.communication import get_group_size, get_rank, init
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    init()
    if os.environ["MS_ROLE"] == "MS_SCHED":
        sys.exit(0)
    rank, size = get_rank(), get_group_size()
print(f"rank {rank} of {size} trains", flush=True)
ms.set_seed(1)
net = nn.Dense(4, 1)
train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.05))
x = np.random.default_rng(rank).random((16, 4)).astype(np.float32)
y = x @ np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
for step in range(steps):
    loss = train(ms.Tensor(x), ms.Tensor(y))
    print(f"rank {rank} step {step} loss {float(loss.asnumpy()):.4f}", flush=True)
    time.sleep(0.5)
print(f"rank {rank} done", flush=True)
'''


def job(name: str, workers: int, scheduler: bool, steps: int) -> str:
    def template() -> dict[str, Any]:
        return {"spec": {"terminationGracePeriodSeconds": 5, "containers": [{
            "name": "mindspore", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
            # sh is the container's first process: a signal kills python, its child
            "command": ["sh", "-c", "python /opt/train/train.py"], "env": [{"name": "STEPS", "value": str(steps)}],
            "volumeMounts": [{"name": "train", "mountPath": "/opt/train"}]}],
            "volumes": [{"name": "train", "configMap": {"name": f"{name}-train"}}]}}

    roles: dict[str, Any] = {"Scheduler": {"replicas": 1, "template": template()}} if scheduler else {}
    roles["Worker"] = {"replicas": workers, "restartPolicy": "ExitCode", "template": template()}
    return yaml.safe_dump_all([
        {"apiVersion": "mindspore.gitee.com/v1", "kind": "MSJob", "metadata": {"name": name},
         "spec": {"msReplicaSpecs": roles}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-train"}, "data": {"train.py": TRAIN}},
    ], sort_keys=False)


def kill_9_when_training(namespace: str, selector: str, step: int = 5) -> dict[str, Any]:
    """`kill -9` of the training process of the first pod of `selector`, once it trains."""
    pod = running_pod(namespace, selector)
    name = pod["metadata"]["name"]
    wait_for(f"{name} to train", lambda: f"step {step} " in kubectl("logs", "-n", namespace, name, check=False).stdout,
             timeout=300, every=2)
    kubectl("exec", "-n", namespace, name, "--", "pkill", "-9", "-x", "python")
    return pod


def test_a_killed_mindspore_worker_is_retried_and_trains_to_the_end(tmp_path: Path, namespace: str) -> None:
    path = write(tmp_path, "msk", job("msk", workers=1, scheduler=False, steps=40))
    waiting = msgen_started("apply", str(path), "-n", namespace, "--wait", "--timeout", "600s")
    killed = kill_9_when_training(namespace, "training.kubeflow.org/job-name=msk")
    out, err = waiting.communicate(timeout=660)
    assert waiting.returncode == 0, (out, err)
    assert "msk: Succeeded after" in out
    first = get("pod", namespace, killed["metadata"]["name"])
    assert first["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137
    others = [p for p in get("pods", namespace) if p["metadata"]["name"] != killed["metadata"]["name"]]
    assert len(others) == 1
    log = kubectl("logs", "-n", namespace, others[0]["metadata"]["name"]).stdout
    assert "rank 0 step 39 " in log and "rank 0 done" in log


def test_a_killed_distributed_worker_cannot_rejoin_and_the_job_fails_with_both_pods_shown(
        tmp_path: Path, namespace: str) -> None:
    """In a running MindSpore cluster the retried worker is refused (the Scheduler still
    counts the killed one: "Repeated registration node"), or joins and fails its first
    AllReduce; either is a program error, exit 1, which ExitCode makes fatal, as
    ms-operator did. The report shows the killed pod (137) and the refused one (1)."""
    path = write(tmp_path, "msd", job("msd", workers=2, scheduler=True, steps=240))
    waiting = msgen_started("apply", str(path), "-n", namespace, "--wait", "--timeout", "600s")
    killed = kill_9_when_training(namespace, "training.kubeflow.org/job-name=msd,training.kubeflow.org/replica-type=worker,"
                                             "batch.kubernetes.io/job-completion-index=1")
    out, err = waiting.communicate(timeout=660)
    assert waiting.returncode == 1, (out, err)
    assert "msd: Failed after" in out and "(PodFailurePolicy: " in out and "exit code 1 matching FailJob" in out, out
    assert f"failed: pod {killed['metadata']['name']} container mindspore exit code 137 (Error)" in out
    assert "container mindspore exit code 1 (Error)" in out
    assert "policy: suspend Job msd-scheduler: job failed; cleanPodPolicy Running" in out
    assert "    | " in out  # the failed workers' last log lines
