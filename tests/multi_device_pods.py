"""The pods of a multi-device job as a cluster would run them: each Worker pod with its index
resolved, its env as the kubelet gives it, and the launcher shipped in the rendered ConfigMap
executed with the pod's rendered command, args and env and a stub in place of the program
(contracts §2-4). The launchers' and the AscendJob's tests read them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES
from .test_frameworks_mindspore import env_of, main_container, pod_templates, role_of

#: the multi-device samples the tests edit
MS = SAMPLES / "mindspore"
GPU = (MS / "gpu-2x8.yaml").read_text()
ASCEND = (MS / "ascend-2x8.yaml").read_text()
ACJOB = (SAMPLES / "ascend" / "mindspore-acjob.yaml").read_text()

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
    ids: list[int] = []
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


def unpinned(sample: Path) -> str:
    """The sample's text without its `msgen/target` annotation, so --target chooses."""
    return sample.read_text().replace("    msgen/target: volcano\n", "")
