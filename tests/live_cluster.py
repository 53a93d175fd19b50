"""Running rendered jobs on a real cluster for `tests/test_live_training.py`.

`prepare` turns a sample MSJob into one this small node can run (its training script replaced
by `tests/live/train.py`, what the node cannot give scaled down, each change listed);
`run_job` applies it with `msgen apply`, follows every container's log while the job runs
(pods a Job ends are deleted, with their logs) and returns what happened; `Outcome` reads the
`MSGEN-LIVE` lines the training script printed.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .conftest import ROOT

KUBECONFIG = os.environ.get("MSGEN_TEST_KUBECONFIG")
KUBECTL = shutil.which("kubectl")
SCRIPT = ROOT / "tests" / "live" / "train.py"
CONFIG_MAP = "live-train"
MAIN = "mindspore"
#: The containers whose logs are followed: the jobs' main container, and Kubeflow Trainer's
#: name for it in the trainer step (the Workers, with `--target trainjob`).
FOLLOWED = (MAIN, "node")
#: What this node can run at once: 2 Worker pods, 2 processes per multi-device pod.
MAX_WORKERS = 2
MAX_DEVICES = 2
DEVICES = ("nvidia.com/gpu", "huawei.com/Ascend910", "huawei.com/npu")
#: The images the live harness imports (MindSpore 2.10 CPU under the samples' names);
#: a job naming another gets MSGEN_LIVE_IMAGE (default the kit's own name) instead, as an edit.
KIT_IMAGES = {
    "localhost/mindspore-cpu:2.10.0",
    "mindspore/mindspore-cpu:2.2.14",
    "mindspore/mindspore-gpu-cuda11.6:2.2.14",
    "swr.cn-south-1.myhuaweicloud.com/mindspore/mindspore:2.2.14-ascend",
    "swr.cn-south-1.myhuaweicloud.com/mindspore/mindspore:2.3.0-ascend",
    "swr.cn-south-1.myhuaweicloud.com/mindspore/mindspore:2.4.0-ascend",
}
IMAGE = os.environ.get("MSGEN_LIVE_IMAGE", "localhost/mindspore-cpu:2.10.0")
#: The MindSpore release the training suite runs (MSGEN_LIVE_MINDSPORE, a release the cluster
#: has an image of: `tests/live/cluster up --mindspore-version X` builds it): every job's main
#: container gets `localhost/mindspore-cpu:<release>`, and msgen `--mindspore-version <release>`.
#: Unset: the kit's default image (2.10.0, also under the samples' image names).
MINDSPORE = os.environ.get("MSGEN_LIVE_MINDSPORE", "").strip()
#: Annotations naming components the test cluster does not run (they would win over the
#: command line and leave the pods unscheduled): dropped, as an edit.
ABSENT_COMPONENTS = ("msgen/kueue-queue", "msgen/gang-scheduler", "msgen/accelerator-type")
MARK = "MSGEN-LIVE "


def events_in(line: str) -> list[dict[str, Any]]:
    """The `MSGEN-LIVE {json}` events in one log line: msrun copies several processes' logs
    into the pod's log at once (`tail -f`), so two events may share a line."""
    found = []
    decoder = json.JSONDecoder()
    start = line.find(MARK)
    while start >= 0:
        try:
            event, end = decoder.raw_decode(line, start + len(MARK))
        except json.JSONDecodeError:
            end = start + len(MARK)
        else:
            found.append(event)
        start = line.find(MARK, end)
    return found


def kubectl(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert KUBECTL, "kubectl must be on the PATH for the live tests"
    return subprocess.run([KUBECTL, "--kubeconfig", str(KUBECONFIG), *args], capture_output=True,
                          text=True, check=check, timeout=timeout)


def server_version() -> str:
    """MAJOR.MINOR of the cluster, for `--kube-version`."""
    version = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]
    return f"{version['major']}.{version['minor'].rstrip('+')}"


@dataclass
class Prepared:
    job: dict[str, Any]
    edits: list[str]
    worker_processes: int
    ps: int
    scheduler: bool

    @property
    def name(self) -> str:
        return str(self.job["metadata"]["name"])


def prepare(text: str, nodes: int = 1) -> Prepared:  # noqa: C901 - one branch per setting of the training image the live suites need, in the job's order
    """The job, changed only where this node cannot run it as written; each change listed
    (`nodes`: how many nodes the cluster has for host-network Workers, one per node)."""
    job = yaml.safe_load(text)
    edits: dict[str, None] = {}  # in order, once each
    metadata = job["metadata"]
    if metadata.pop("namespace", None) is not None:
        edits["namespace: the test's own"] = None
    annotations = metadata.get("annotations") or {}
    for key in ABSENT_COMPONENTS:
        if annotations.pop(key, None) is not None:
            edits[f"{key} dropped (not on the test cluster)"] = None
    policy = (job["spec"].get("runPolicy") or {}).get("schedulingPolicy") or {}
    if policy.pop("priorityClass", None) is not None:
        edits["runPolicy priorityClass dropped (no PriorityClass on the test cluster)"] = None
    edits["script: tests/live/train.py from a ConfigMap at the command's path"] = None
    specs = job["spec"]["msReplicaSpecs"]
    for key, spec in specs.items():
        pod = spec["template"]["spec"]
        # Host-network pods of one role declare the same ports: one of them per node.
        most = nodes if pod.get("hostNetwork") else MAX_WORKERS
        if key.lower() == "worker" and spec.get("replicas", 1) > most:
            where = "one node" if nodes == 1 else f"{nodes} nodes"
            why = f" (host network, {where})" if pod.get("hostNetwork") else ""
            edits[f"Worker replicas {spec['replicas']} -> {most}{why}"] = None
            spec["replicas"] = most
        main = next(c for c in pod["containers"] if c["name"] == MAIN)
        if MINDSPORE:
            edits[f"image {main['image']} -> localhost/mindspore-cpu:{MINDSPORE} (MSGEN_LIVE_MINDSPORE)"] = None
            main["image"] = f"localhost/mindspore-cpu:{MINDSPORE}"
        elif main["image"].removeprefix("docker.io/") not in KIT_IMAGES:
            edits[f"image {main['image']} (not on the test cluster) -> {IMAGE}"] = None
            main["image"] = IMAGE
        _mount_script(pod, main)
        for volume in pod.get("volumes") or []:
            if "persistentVolumeClaim" in volume:
                del volume["persistentVolumeClaim"]
                volume["emptyDir"] = {}
                edits["PVC -> emptyDir (no StorageClass)"] = None
        for amounts in ((main.get("resources") or {}).get(k) or {} for k in ("requests", "limits")):
            for name in list(amounts):
                if name in ("cpu", "memory"):
                    del amounts[name]
                    edits["cpu/memory requests dropped (2-core node)"] = None
                elif name in DEVICES and int(amounts[name]) > MAX_DEVICES:
                    edits[f"{name} {amounts[name]} -> {MAX_DEVICES} per pod"] = None
                    amounts[name] = MAX_DEVICES
    roles = {key.lower(): spec for key, spec in specs.items()}
    processes = 0
    if "worker" in roles:
        worker = roles["worker"]
        main = next(c for c in worker["template"]["spec"]["containers"] if c["name"] == MAIN)
        limits = (main.get("resources") or {}).get("limits") or {}
        per_pod = max([int(limits[d]) for d in DEVICES if d in limits] or [1])
        processes = worker.get("replicas", 1) * per_pod
    ps = roles["ps"].get("replicas", 1) if "ps" in roles else 0
    return Prepared(job, list(edits), processes, ps, "scheduler" in roles)


def _mount_script(pod: dict[str, Any], main: dict[str, Any]) -> None:
    """tests/live/train.py at the path the command runs, from the ConfigMap: through the
    volume the job mounts there (its source replaced), else a volume of its own."""
    words = " ".join(str(w) for w in [*(main.get("command") or []), *(main.get("args") or [])]).split()
    script = next(w for w in words if w.endswith(".py"))
    mounts = main.setdefault("volumeMounts", [])
    mount = next((m for m in mounts if script.startswith(m["mountPath"].rstrip("/") + "/")), None)
    if mount is None:
        name, relative = "live-train", os.path.basename(script)
        pod.setdefault("volumes", []).append({"name": name})
        mounts.append({"name": name, "mountPath": os.path.dirname(script)})
    else:
        name, relative = mount["name"], script[len(mount["mountPath"].rstrip("/")) + 1 :]
    volume = next(v for v in pod["volumes"] if v["name"] == name)
    volume.clear()
    volume.update({"name": name, "configMap": {"name": CONFIG_MAP, "items": [{"key": "train.py", "path": relative}]}})


class PodLogs:
    """Every run of the main container (`FOLLOWED`) in a namespace, its log followed from its start.

    A Job that succeeds deletes its running pods and their logs with them, so logs are read
    while the pods run: one `kubectl logs -f` per container run (a restarted container is a
    new run), found by polling the pods every second.
    """

    def __init__(self, namespace: str):
        self.namespace = namespace
        self.logs: dict[str, list[str]] = {}
        self._containers: dict[str, str] = {}  # pod#container ID → the container's name
        self._followers: list[tuple[threading.Thread, subprocess.Popen[str]]] = []
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True)
        self._poller.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            done = kubectl("get", "pods", "-n", self.namespace, "-o", "json", check=False)
            if done.returncode == 0:
                for pod in json.loads(done.stdout)["items"]:
                    self._follow_new(pod)
            self._stop.wait(1)

    def _follow_new(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        for status in pod.get("status", {}).get("containerStatuses") or []:
            if status["name"] not in FOLLOWED:
                continue
            previous = (status.get("lastState") or {}).get("terminated") or {}
            if previous.get("containerID") and f"{name}#{previous['containerID']}" not in self.logs:
                self._start(name, status["name"], previous["containerID"], "--previous")
            if status.get("containerID") and f"{name}#{status['containerID']}" not in self.logs:
                self._start(name, status["name"], status["containerID"], "-f")

    def _start(self, pod: str, container: str, container_id: str, how: str) -> None:
        lines: list[str] = []
        self.logs[f"{pod}#{container_id}"] = lines
        self._containers[f"{pod}#{container_id}"] = container
        assert KUBECTL
        process = subprocess.Popen([KUBECTL, "--kubeconfig", str(KUBECONFIG), "logs", how, pod, "-c", container,
                                    "-n", self.namespace], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line.rstrip("\n"))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        self._followers.append((reader, process))

    def stop(self, grace: float = 30) -> None:
        """Stop looking for new runs; let the followers read to the end of their runs."""
        self._stop.set()
        self._poller.join(timeout=30)
        deadline = time.monotonic() + grace
        for reader, process in self._followers:
            reader.join(timeout=max(0.1, deadline - time.monotonic()))
            if reader.is_alive():
                process.kill()
                reader.join(timeout=5)
        self._read_again()

    def _read_again(self) -> None:
        """Read each run's log once more where its pod is still there: a follow stream can end
        before its run does (the API server or kubelet drops it on a loaded node, or the grace
        ran out), and a run's last lines (the Scheduler's `role-done`) would be missing. The
        log read whole replaces a shorter one, as long as the pod still shows that run."""
        done = kubectl("get", "pods", "-n", self.namespace, "-o", "json", check=False)
        if done.returncode != 0:
            return
        shown: dict[str, list[str]] = {}  # pod#container ID → how `kubectl logs` reads that run now
        for pod in json.loads(done.stdout)["items"]:
            name = pod["metadata"]["name"]
            for status in pod.get("status", {}).get("containerStatuses") or []:
                if status["name"] not in FOLLOWED:
                    continue
                previous = (status.get("lastState") or {}).get("terminated") or {}
                if previous.get("containerID"):
                    shown[f"{name}#{previous['containerID']}"] = ["--previous"]
                if status.get("containerID"):
                    shown[f"{name}#{status['containerID']}"] = []
        for key in self.logs:
            if key not in shown:
                continue
            container = self._containers[key]
            again = kubectl("logs", key.split("#")[0], "-c", container, "-n", self.namespace, *shown[key], check=False)
            lines = again.stdout.splitlines()
            if again.returncode == 0 and len(lines) > len(self.logs[key]):
                self.logs[key][:] = lines

    def of(self, prefix: str) -> str:
        """The logs of every run of the pods whose names start with `prefix`."""
        return "\n".join("\n".join(lines) for key, lines in self.logs.items() if key.startswith(prefix))


@dataclass
class Outcome:
    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    logs: PodLogs
    runs: list[str] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for key, text in list(self.logs.logs.items()):
            if self.runs is not None and key not in self.runs:
                continue
            for line in text:
                self.events.extend(events_in(line))

    def without_crashed_runs(self) -> Outcome:
        """The same outcome without the container runs that crashed on purpose (`crash`)."""
        kept = [key for key, lines in self.logs.logs.items() if not any('"event": "crash"' in line for line in lines)]
        return Outcome(self.exit_code, self.stdout, self.stderr, self.seconds, self.logs, kept)

    def first_runs(self) -> Outcome:
        """The same outcome, read from each pod's first container run only."""
        first: dict[str, str] = {}
        for key in self.logs.logs:
            first.setdefault(key.split("#")[0], key)
        return Outcome(self.exit_code, self.stdout, self.stderr, self.seconds, self.logs, list(first.values()))

    def of(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == event]


def run_job(namespace: str, prepared: Prepared, tmp_path: Path, *options: str, wait: bool = True,
            until: Any = None, timeout: float = 900) -> Outcome:
    """Apply the job with `msgen apply` (and `--wait`), following its pods' logs.

    Without `wait` (a StatefulSet job never ends), it returns once `until(outcome)` holds or
    `timeout` passed.
    """
    path = tmp_path / f"{prepared.name}.yaml"
    path.write_text(yaml.safe_dump(prepared.job))
    return apply_file(namespace, path, *options, wait=wait, until=until, timeout=timeout)


def apply_file(namespace: str, path: Path, *options: str, wait: bool = True, until: Any = None,
               timeout: float = 900) -> Outcome:
    """`msgen apply` of a file (a job, or objects a kustomize build compiled already, which it
    passes through), following the pods' logs; as `run_job`."""
    env = {**os.environ, "KUBECONFIG": str(KUBECONFIG)}
    argv = [sys.executable, "-m", "msgen", "apply", str(path), "-n", namespace, "--kube-version",
            server_version(), *(["--mindspore-version", MINDSPORE] if MINDSPORE else []), *options]
    if wait:
        argv += ["--wait", "--timeout", f"{int(timeout)}s"]
    logs = PodLogs(namespace)
    started = time.monotonic()
    applying = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        out, err = applying.communicate(timeout=timeout + 120)
    except subprocess.TimeoutExpired:
        applying.kill()
        out, err = applying.communicate()
    seconds = time.monotonic() - started
    if not wait:
        while time.monotonic() - started < timeout:
            outcome = Outcome(applying.returncode, out, err, time.monotonic() - started, logs)
            if until is None or until(outcome):
                break
            time.sleep(2)
        seconds = time.monotonic() - started
    logs.stop()
    return Outcome(applying.returncode, out, err, seconds, logs)


def create_script_config_map(namespace: str) -> None:
    kubectl("create", "configmap", CONFIG_MAP, "-n", namespace, f"--from-file=train.py={SCRIPT}")


def report(row: dict[str, Any]) -> None:
    """Append one result row to MSGEN_LIVE_REPORT (JSON lines), when it names a file."""
    target = os.environ.get("MSGEN_LIVE_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(json.dumps({**row, "mindspore": MINDSPORE or "2.10.0"}, sort_keys=True) + "\n")


def copy_job(prepared: Prepared) -> Prepared:
    return Prepared(copy.deepcopy(prepared.job), list(prepared.edits), prepared.worker_processes,
                    prepared.ps, prepared.scheduler)
