"""Server-side dry runs on a real API server, many at a time, for the differential test.

`ApiServer.dry_run` sends one object (`POST ...?dryRun=All&fieldValidation=Strict`): the
server decodes, defaults, validates and admits it exactly as for a real create, and stores
nothing. Requests go over kept-alive connections from a few threads, and an object already
judged (the same JSON) is not sent again. `made_by_controllers` adds what the workload
controllers would create from msgen's objects (a JobSet's Jobs, each workload's first pod),
so that rules the server applies only to those (a pod's labels, a Job's pod template inside
a JobSet) are judged too.
"""

from __future__ import annotations

import base64
import copy
import http.client
import json
import os
import ssl
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlparse

import yaml

#: kind → (API path prefix, plural) for every kind msgen writes or a controller creates.
RESOURCES = {
    "ConfigMap": ("/api/v1", "configmaps"),
    "Service": ("/api/v1", "services"),
    "ServiceAccount": ("/api/v1", "serviceaccounts"),
    "Pod": ("/api/v1", "pods"),
    "Job": (None, "jobs"),  # batch/v1 or batch.volcano.sh/v1alpha1, from apiVersion
    "StatefulSet": ("/apis/apps/v1", "statefulsets"),
    "JobSet": ("/apis/jobset.x-k8s.io/v1alpha2", "jobsets"),
    "TrainJob": ("/apis/trainer.kubeflow.org/v1alpha1", "trainjobs"),
    "TrainingRuntime": ("/apis/trainer.kubeflow.org/v1alpha1", "trainingruntimes"),
    "PodGroup": (None, "podgroups"),  # Volcano's, scheduler-plugins' or Kubernetes' own
    "Workload": (None, "workloads"),
    "Namespace": ("/api/v1", "namespaces"),
}
#: Refusals caused by the test namespace lacking an object a pod names (not by the object).
ENVIRONMENT = ("error looking up service account", "no PriorityClass with name",
               # Volcano's admission webhooks, where they run: the job's queue is not on the cluster
               "unable to find queue: queue.scheduling.volcano.sh", "unable to find job queue: queue.scheduling.volcano.sh")


class ApiServer:
    def __init__(self, kubeconfig: str, workers: int = 4):
        config = yaml.safe_load(open(kubeconfig, encoding="utf-8"))
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        self.url = urlparse(cluster["server"])
        self.context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        self._files = tempfile.TemporaryDirectory()
        cert, key = os.path.join(self._files.name, "c"), os.path.join(self._files.name, "k")
        for path, field in ((cert, "client-certificate-data"), (key, "client-key-data")):
            with open(path, "wb") as stream:
                stream.write(base64.b64decode(user[field]))
        self.context.load_cert_chain(cert, key)
        self.local = threading.local()
        self.pool = ThreadPoolExecutor(workers)
        self.verdicts: dict[str, tuple[int, str]] = {}
        self.requests = 0

    def close(self) -> None:
        self.pool.shutdown()
        self._files.cleanup()

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        connection = getattr(self.local, "connection", None)
        for attempt in range(3):
            if connection is None:
                connection = http.client.HTTPSConnection(self.url.hostname, self.url.port, context=self.context, timeout=60)
                self.local.connection = connection
            try:
                data = json.dumps(body).encode() if body is not None else None
                connection.request(method, path, data, {"Content-Type": "application/json"})
                response = connection.getresponse()
                payload = response.read()
                try:
                    return response.status, json.loads(payload) if payload else {}
                except ValueError:  # not a Status: a proxy's or the mux's plain text
                    return response.status, {"message": payload.decode(errors="replace")}
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = self.local.connection = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def version(self) -> tuple[int, int]:
        _, found = self.request("GET", "/version")
        return int(found["major"]), int(found["minor"].rstrip("+"))

    def dry_run(self, obj: dict[str, Any], namespace: str) -> tuple[int, str]:
        """(HTTP status, the server's message) of creating `obj` in `namespace`, stored nowhere."""
        if obj["kind"] != "Namespace":
            obj = {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}
        key = json.dumps(obj, sort_keys=True)
        if key in self.verdicts:
            return self.verdicts[key]
        prefix, plural = RESOURCES[obj["kind"]]
        if prefix is None:
            prefix = "/api/" + obj["apiVersion"] if "/" not in obj["apiVersion"] else "/apis/" + obj["apiVersion"]
        scope = "" if obj["kind"] == "Namespace" else f"/namespaces/{namespace}"
        path = f"{prefix}{scope}/{plural}?dryRun=All&fieldValidation=Strict"
        self.requests += 1
        status, found = self.request("POST", path, obj)
        verdict = (status, "" if status < 300 else str(found.get("message", found)))
        self.verdicts[key] = verdict
        return verdict

    def forget(self, which: Any) -> None:
        """Drop the verdicts `which` selects, so their objects are sent again."""
        self.verdicts = {key: verdict for key, verdict in self.verdicts.items() if not which(verdict)}

    def dry_run_all(self, objects: list[dict[str, Any]], namespace: str) -> list[tuple[int, str]]:
        return list(self.pool.map(lambda o: self.dry_run(o, namespace), objects))


def judged(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """`obj`, its namespace (objects are sent to the test's own, so the name msgen wrote is
    judged as a Namespace of its own), and what the controllers would create from it."""
    out = [obj, *made_by_controllers(obj)]
    namespace = obj["metadata"].get("namespace")
    if namespace:
        out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    return out


def made_by_controllers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """What the controllers would create from `obj` first: its first pod, a JobSet's Jobs, the
    JobSet Trainer builds from a TrainingRuntime (named after the TrainJob, its job)."""
    kind, meta = obj["kind"], obj["metadata"]
    name = meta["name"]
    if kind == "Job" and obj["apiVersion"] == "batch/v1":
        spec = obj["spec"]
        labels = {"batch.kubernetes.io/job-name": name, "job-name": name,
                  "batch.kubernetes.io/controller-uid": "0a1b2c3d-0000-4000-8000-000000000000"}  # fmt: skip
        pod = _pod(spec["template"], f"{name}-0-x7k2q", labels)
        if spec.get("completionMode") == "Indexed":
            pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = "0"
            pod["spec"].setdefault("hostname", f"{name}-0")
        return [pod]
    if kind == "StatefulSet":
        labels = {"controller-revision-hash": f"{name}-7b9c8d6f5d", "apps.kubernetes.io/pod-index": "0",
                  "statefulset.kubernetes.io/pod-name": f"{name}-0"}  # fmt: skip
        pod = _pod(obj["spec"]["template"], f"{name}-0", labels)
        pod["spec"]["hostname"] = f"{name}-0"
        pod["spec"]["subdomain"] = obj["spec"].get("serviceName", "")
        return [pod]
    if kind == "JobSet":
        out = []
        for replicated in obj["spec"]["replicatedJobs"]:
            job_name = f"{name}-{replicated['name']}-0"
            template = copy.deepcopy(replicated["template"])
            labels = {"jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/replicatedjob-name": replicated["name"]}
            job = {"apiVersion": "batch/v1", "kind": "Job",
                   "metadata": {"name": job_name, "labels": {**(template.get("metadata") or {}).get("labels", {}), **labels}},
                   "spec": template["spec"]}  # fmt: skip
            out += [job, *made_by_controllers(job)]
        return out
    if kind == "TrainingRuntime":
        job = (meta.get("labels") or {}).get("training.kubeflow.org/job-name", name)
        jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": job},
                  "spec": copy.deepcopy(obj["spec"]["template"]["spec"])}
        return [jobset, *made_by_controllers(jobset)]
    if kind == "Job" and obj["apiVersion"].startswith("batch.volcano.sh/"):
        labels = {"volcano.sh/job-name": name}
        return [_pod(task["template"], f"{name}-{task['name']}-0", {**labels, "volcano.sh/task-spec": task["name"]})
                for task in obj["spec"]["tasks"]]  # fmt: skip
    return []


def _pod(template: dict[str, Any], name: str, labels: dict[str, str]) -> dict[str, Any]:
    meta = copy.deepcopy(template.get("metadata") or {})
    meta["name"] = name
    meta["labels"] = {**(meta.get("labels") or {}), **labels}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(template["spec"])}
