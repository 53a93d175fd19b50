"""bench/controller_scale.py's jobs on a real cluster whose pods run on kwok nodes.

The cluster is MSGEN_TEST_KUBECONFIG's (the live harness: `tests/live/cluster up --with
kwok`). kwok nodes carry the label `type: kwok` and the taint `kwok.x-k8s.io/node=fake`; each
pod template gets that node selector and toleration, so no real node runs a pod. kwok makes
the pods Running; the Job controller, the garbage collector and the API server are the
cluster's own. This driver ends a pod as its container would, by writing its status
(`pods/status`): kwok must not end pods by itself (no stage that completes pods of Jobs).

What the controller does is seen from watches in this process: a deletion when the object
is gone, a suspension when a Job first shows `spec.suspend`, an Event when it is listed; each
with the time this process saw it (a little after the API server did). A deletion of what was
already gone is a 404 only the controller sees: the benchmark reads it from the leader's
`rest_client_requests_total`. Written before that harness existed: not yet run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from msgen.reconcile import kube  # noqa: E402
from tests.fake_api import Write  # noqa: E402

KWOK_SELECTOR = {"type": "kwok"}
KWOK_TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
JOB_NAME = "training.kubeflow.org/job-name"
WATCHED = [("v1", "Pod"), ("v1", "Service"), ("batch/v1", "Job"), ("v1", "Event")]


def on_kwok(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with its pods (its own spec, or its template's) placed on kwok nodes."""
    spec = obj.get("spec") or {}
    pod_spec = spec if obj.get("kind") == "Pod" else (spec.get("template") or {}).get("spec")
    if isinstance(pod_spec, dict):
        pod_spec["nodeSelector"] = {**(pod_spec.get("nodeSelector") or {}), **KWOK_SELECTOR}
        pod_spec["tolerations"] = [*(pod_spec.get("tolerations") or []), KWOK_TOLERATION]
    return obj


class KwokDriver:
    def __init__(self, namespace: str, restart_command: str | None) -> None:
        config = os.environ.get("MSGEN_TEST_KUBECONFIG")
        if not config:
            sys.exit("--api cluster needs MSGEN_TEST_KUBECONFIG (a cluster with kwok nodes)")
        self.kubeconfig_path = Path(config)
        self.namespace, self.restart_command = namespace, restart_command
        self.client = kube.connect(config, None)
        if not kube.namespace_exists(self.client, namespace):
            kube.create(self.client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        self.seen: list[Write] = []
        self.suspended: set[str] = set()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        for api_version, kind in WATCHED:
            threading.Thread(target=self._watch, args=(api_version, kind), daemon=True).start()

    def _watch(self, api_version: str, kind: str) -> None:
        version = None
        while not self.stopping.is_set():
            try:
                if version is None:
                    _, version = kube.listing_with_version(self.client, api_version, kind, self.namespace, {})
                for event, obj in kube.watch_events(self.client, api_version, kind, self.namespace, {}, version):
                    version = (obj.get("metadata") or {}).get("resourceVersion") or version
                    self._saw(kind, event, obj)
            except kube.KubeError as exc:
                if exc.code == 410:
                    version = None
                time.sleep(1)

    def _saw(self, kind: str, event: str, obj: dict[str, Any]) -> None:
        metadata = obj.get("metadata") or {}
        name = str(metadata.get("name"))
        write = None
        if kind == "Event" and event == "ADDED" and (obj.get("source") or {}).get("component") == "msgen-controller":
            write = Write(time.monotonic(), "POST", "Event", self.namespace, name, obj, obj)
        elif event == "DELETED" and kind != "Event":
            write = Write(time.monotonic(), "DELETE", kind, self.namespace, name, {}, obj)
        elif kind == "Job" and (obj.get("spec") or {}).get("suspend") and name not in self.suspended:
            self.suspended.add(name)
            write = Write(time.monotonic(), "PATCH", "Job", self.namespace, name, {"spec": {"suspend": True}}, obj)
        if write is not None:
            with self.lock:
                self.seen.append(write)

    def place(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Apply the job; its pods start on kwok nodes, by kwok: none to start here."""
        for obj in objects:
            kube.apply(self.client, on_kwok(obj))
        return []

    def start(self, pod: str) -> None:
        pass

    def end(self, job: Any, index: int, code: int) -> bool:
        pods = kube.listing(self.client, "v1", "Pod", self.namespace, {JOB_NAME: job.name})
        for pod in pods:
            labels = pod["metadata"].get("labels") or {}
            found = labels.get("training.kubeflow.org/replica-index") or labels.get(
                "batch.kubernetes.io/job-completion-index")
            if str(labels.get("training.kubeflow.org/replica-type", "")).lower() == "worker" and found == str(index):
                return self._end_pod(pod, code)
        return False

    def _end_pod(self, pod: dict[str, Any], code: int) -> bool:
        status = pod.get("status") or {}
        if status.get("phase") != "Running":
            return False
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        containers = [{"name": c["name"], "ready": False, "restartCount": 0, "image": c.get("image", ""),
                       "imageID": "", "state": {"terminated": {"exitCode": code, "startedAt": now, "finishedAt": now,
                                                               "reason": "Completed" if code == 0 else "Error"}}}
                      for c in pod["spec"]["containers"]]
        body = {"status": {"phase": "Succeeded" if code == 0 else "Failed", "containerStatuses": containers}}
        done = subprocess.run(["kubectl", "--kubeconfig", str(self.kubeconfig_path), "patch", "pod", "-n",
                               self.namespace, pod["metadata"]["name"], "--subresource=status", "--type=merge",
                               "-p", json.dumps(body)], capture_output=True, text=True)
        return done.returncode == 0

    def writes(self) -> list[Write]:
        with self.lock:
            return list(self.seen)

    def pods(self) -> list[dict[str, Any]]:
        return kube.listing(self.client, "v1", "Pod", self.namespace, {JOB_NAME: None})

    def lease_holder(self) -> str:
        lease = kube.get(self.client, "coordination.k8s.io/v1", "Lease", "msgen-controller", self.namespace) or {}
        return str((lease.get("spec") or {}).get("holderIdentity") or "")

    def restart(self) -> str:
        if not self.restart_command:
            return "API server not restarted (no --restart-api COMMAND)"
        done = subprocess.run(self.restart_command, shell=True, capture_output=True, text=True)
        return f"API server restarted by {self.restart_command!r} (exit {done.returncode})"

    def requests(self) -> dict[str, int]:
        return {}  # the API server's own count is not read here: the controller's /metrics has it

    def stop(self) -> None:
        self.stopping.set()
