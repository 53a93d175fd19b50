"""bench/controller_scale.py's jobs on a real cluster whose pods run on kwok nodes.

The cluster is MSGEN_TEST_KUBECONFIG's (the live harness: `tests/live/cluster up --with
kwok`). kwok nodes carry the label `type: kwok` and the taint `kwok.x-k8s.io/node=fake`; each
pod template gets that node selector and toleration, so no real node runs a pod. kwok makes
the pods Running; the Job controller, the garbage collector and the API server are the
cluster's own. This driver ends a pod as its container would, by writing its status
(`pods/status`), once its watch shows the pod Running (no list per attempt). kwok's `general`
pod stages would end a Job's pods by themselves 1-6 s after they are ready; each pod
template asks kwok, by the stage's own annotations, to wait a year, and to run the pod 1-5 s
after it is made (the scenario's start). How many pods kwok moves at once is the harness's
(`POD_PARALLELISM` in tests/live/harness/components/kwok.py).

The replicas reach the API server through `OutageProxy` (bench/outage_proxy.py), so that
`restart()` plays an API server outage for them alone: the cluster is shared, and restarting
its kube-apiserver would break other people's work. `--restart-api COMMAND` runs a command
instead (a cluster of one's own), and the replicas then reach the API server directly.

What the controller does is seen from watches in this process: a deletion when the object
first shows its deletionTimestamp (or is gone), a suspension when a Job first shows
`spec.suspend`, an Event when it is added; each with the time this process saw it (a little
after the API server did); after a restarted API server's 410, a list tells what the watch
missed (seen then). A deletion of what was
already gone is a 404 only the controller sees: the benchmark reads it from the leader's
`rest_client_requests_total`, and the API requests from every replica's.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from msgen.reconcile import at_once, kube  # noqa: E402
from bench.outage_proxy import OutageProxy  # noqa: E402
from tests.fake_api import Write  # noqa: E402

KWOK_SELECTOR = {"type": "kwok"}
KWOK_TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}
JOB_NAME = "training.kubeflow.org/job-name"
#: kwok's pod-complete stage reads its delay from these; a year is "never" for a benchmark.
#: Its pod-create and pod-ready stages (each 1 s plus up to 4 s by default: a pod ran 2-10 s
#: after it was made) are asked for the scenario's 1-5 s in all.
POD_STAGES = {"pod-complete.stage.kwok.x-k8s.io/delay": "8760h",
              "pod-complete.stage.kwok.x-k8s.io/jitter-delay": "8760h",
              "pod-create.stage.kwok.x-k8s.io/delay": "0s", "pod-create.stage.kwok.x-k8s.io/jitter-delay": "2s",
              "pod-ready.stage.kwok.x-k8s.io/delay": "1s", "pod-ready.stage.kwok.x-k8s.io/jitter-delay": "3s"}
WATCHED = [("v1", "Pod"), ("v1", "Service"), ("batch/v1", "Job"), ("v1", "Event")]


def on_kwok(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with its pods (its own spec, or its template's) placed on kwok nodes."""
    spec = obj.get("spec") or {}
    template = obj if obj.get("kind") == "Pod" else spec.get("template")
    pod_spec = spec if obj.get("kind") == "Pod" else (spec.get("template") or {}).get("spec")
    if isinstance(template, dict) and isinstance(pod_spec, dict):
        metadata = template.setdefault("metadata", {})
        metadata["annotations"] = {**(metadata.get("annotations") or {}), **POD_STAGES}
        pod_spec["nodeSelector"] = {**(pod_spec.get("nodeSelector") or {}), **KWOK_SELECTOR}
        pod_spec["tolerations"] = [*(pod_spec.get("tolerations") or []), KWOK_TOLERATION]
    return obj


def through(config: Path, proxy: OutageProxy, out: Path) -> Path:
    """A copy of kubeconfig `config` whose clusters are reached through `proxy`."""
    text = yaml.safe_load(config.read_text())
    for cluster in text.get("clusters") or []:
        cluster["cluster"]["server"] = f"https://127.0.0.1:{proxy.port}"
    out.write_text(yaml.safe_dump(text))
    return out


def upstream(config: Path) -> tuple[str, int]:
    server = urlsplit(yaml.safe_load(config.read_text())["clusters"][0]["cluster"]["server"])
    return str(server.hostname), int(server.port or 443)


class KwokDriver:
    parallel = 8  # threads creating jobs: each call waits tens of ms for the server (more on a loaded one)
    pod_parallel = 8  # threads ending pods, of their own: an end never waits behind a creation

    def __init__(self, namespace: str, restart_command: str | None, scratch: Path, keep: bool = False) -> None:
        config = os.environ.get("MSGEN_TEST_KUBECONFIG")
        if not config:
            sys.exit("--api cluster needs MSGEN_TEST_KUBECONFIG (a cluster with kwok nodes)")
        self.direct = Path(config)
        # A restart of one's own needs no relay: the replicas talk to the API server directly,
        # not through this busy process's threads (its watches, the scenario's writes).
        self.proxy = None if restart_command else OutageProxy(upstream(self.direct))
        self.kubeconfig_path = self.direct if self.proxy is None else through(self.direct, self.proxy,
                                                                              scratch / "kubeconfig")
        self.namespace, self.restart_command, self.keep = namespace, restart_command, keep
        self.restarting: subprocess.Popen[bytes] | None = None
        self.client = kube.connect(config, None)
        if not kube.namespace_exists(self.client, namespace):
            subprocess.run(["kubectl", "--kubeconfig", config, "create", "namespace", namespace], check=True,
                           capture_output=True)  # kube.create makes namespaced objects only
        self.seen: list[Write] = []
        self.suspended: set[str] = set()
        self.events: set[str] = set()
        self.deleted: set[tuple[str, str]] = set()
        self.listed: dict[str, bool] = {}
        #: job → pod name → what `end` reads of it (labels, containers, phase), from the watch:
        #: a list of the job's pods for every attempt to end one was 12 lists a second on an
        #: API server already behind
        self.pods_of: dict[str, dict[str, dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        for api_version, kind in WATCHED:
            threading.Thread(target=self._watch, args=(api_version, kind), daemon=True).start()

    def _watch(self, api_version: str, kind: str) -> None:
        """Watch `kind`; after a 410 (an API server restarted with a new watch cache), list
        again and tell what the list shows that the watch did not: Events created and
        objects deleted meanwhile (seen then, so a little late), never nothing."""
        version = None
        known: dict[str, dict[str, Any]] = {}
        while not self.stopping.is_set():
            try:
                if version is None:
                    items, version = kube.listing_with_version(self.client, api_version, kind, self.namespace, {})
                    listed = {str((o.get("metadata") or {}).get("name")): o for o in items}
                    if kind == "Pod":
                        self._keep_pods(items)
                    if self.listed.get(kind):
                        for name, obj in listed.items():
                            self._saw(kind, "ADDED" if name not in known else "MODIFIED", obj)
                        for name in set(known) - set(listed):
                            self._saw(kind, "DELETED", known[name])
                    self.listed[kind] = True
                    known = listed
                for event, obj in kube.watch_events(self.client, api_version, kind, self.namespace, {}, version):
                    version = (obj.get("metadata") or {}).get("resourceVersion") or version
                    name = str((obj.get("metadata") or {}).get("name"))
                    if event == "DELETED":
                        known.pop(name, None)
                    elif event != "BOOKMARK":
                        known[name] = {"metadata": obj.get("metadata") or {}}
                    if kind == "Pod" and event != "BOOKMARK":
                        self._keep_pod(obj, event == "DELETED")
                    self._saw(kind, event, obj)
            except kube.KubeError as exc:
                if exc.code == 410:
                    version = None
                time.sleep(1)

    def _keep_pods(self, items: list[dict[str, Any]]) -> None:
        """A list's pods replace what the watch kept (a restarted API server's 410)."""
        with self.lock:
            self.pods_of = {}
        for pod in items:
            self._keep_pod(pod, False)

    def _keep_pod(self, pod: dict[str, Any], deleted: bool) -> None:
        metadata = pod.get("metadata") or {}
        job, name = (metadata.get("labels") or {}).get(JOB_NAME), str(metadata.get("name"))
        if not job:
            return
        with self.lock:
            pods = self.pods_of.setdefault(str(job), {})
            if deleted:
                pods.pop(name, None)
                return
            pods[name] = {"metadata": {"name": name, "labels": metadata.get("labels") or {}},
                          "spec": {"containers": [{"name": c.get("name"), "image": c.get("image", "")}
                                                  for c in (pod.get("spec") or {}).get("containers") or []]},
                          "status": {"phase": (pod.get("status") or {}).get("phase"),
                                     "containerStatuses": (pod.get("status") or {}).get("containerStatuses") or []}}

    def _saw(self, kind: str, event: str, obj: dict[str, Any]) -> None:
        """Record what the controller did: an Event of its own when first seen; a deletion
        when the object first shows its deletionTimestamp (the API server accepted the DELETE;
        kwok, as kubelet, removes the pod a moment later) or, without one, when it is gone; a
        suspension when a Job first shows `spec.suspend`. Each once per object."""
        metadata = obj.get("metadata") or {}
        name = str(metadata.get("name"))
        write = None
        if kind == "Event":
            if event == "ADDED" and (obj.get("source") or {}).get("component") == "msgen-controller" \
                    and name not in self.events:
                self.events.add(name)
                write = Write(time.monotonic(), "POST", "Event", self.namespace, name, obj, obj)
        elif event == "DELETED" or metadata.get("deletionTimestamp"):
            if (kind, name) not in self.deleted:
                self.deleted.add((kind, name))
                write = Write(time.monotonic(), "DELETE", kind, self.namespace, name, {}, obj)
        elif kind == "Job" and (obj.get("spec") or {}).get("suspend") and name not in self.suspended:
            self.suspended.add(name)
            write = Write(time.monotonic(), "PATCH", "Job", self.namespace, name, {"spec": {"suspend": True}}, obj)
        if write is not None:
            with self.lock:
                self.seen.append(write)

    def place(self, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Apply the job's objects together, `at_once.AT_MOST` in flight (one after another, a
        job's applies, 6 on average at 0.5-1 s each at load 14-20, made 0.7 jobs a second on
        8 threads against the 1.85 that arrive); its pods start on kwok nodes, by kwok: none to start here. One
        apply refused fails the job's creation (applied again whole: apply is idempotent)."""
        at_once.send([functools.partial(self._apply, on_kwok(obj)) for obj in objects], "apply")
        return []

    def _apply(self, obj: dict[str, Any]) -> None:
        kube.apply(self.client, obj)

    def start(self, pod: str) -> None:
        pass

    def end(self, job: Any, index: int, code: int) -> bool:
        """End worker `index` of `job` with exit `code`, once the watch shows it Running
        (False until then: the caller tries again)."""
        with self.lock:
            pods = list(self.pods_of.get(job.name, {}).values())
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
        started = next((s.get("state", {}).get("running", {}).get("startedAt") for s in status.get("containerStatuses") or []
                        if s.get("state", {}).get("running")), now)
        containers = [{"name": c["name"], "ready": False, "restartCount": 0, "image": c.get("image", ""),
                       "imageID": "", "state": {"terminated": {"exitCode": code, "startedAt": started, "finishedAt": now,
                                                               "reason": "Completed" if code == 0 else "Error"}}}
                      for c in pod["spec"]["containers"]]
        body = {"status": {"phase": "Succeeded" if code == 0 else "Failed", "containerStatuses": containers}}
        url = f"{kube.api_path('v1', 'Pod', self.namespace)}/{pod['metadata']['name']}/status"
        answer = kube._watch_http(self.client).patch(url, content=json.dumps(body),
                                                     headers={"Content-Type": "application/merge-patch+json"})
        return answer.status_code == 200

    def writes(self) -> list[Write]:
        with self.lock:
            return list(self.seen)

    def pods(self) -> list[dict[str, Any]]:
        return kube.listing(self.client, "v1", "Pod", self.namespace, {JOB_NAME: None})

    def lease_holder(self) -> str:
        lease = kube.get(self.client, "coordination.k8s.io/v1", "Lease", "msgen-controller", self.namespace) or {}
        return str((lease.get("spec") or {}).get("holderIdentity") or "")

    def restart(self) -> str:
        if self.proxy is not None:
            cut = self.proxy.outage(5.0)
            return (f"API server outage played for the replicas (through {self.proxy.connections} connections so far: "
                    f"{cut} cut, none accepted for 5 s; the server itself kept running)")
        # In the background: the rest of the scenario (the leader's kill at 70 %) keeps its time,
        # however long the command takes after the server answers (`tests/live/cluster up`
        # went on for 4 minutes, and the seventh round's kill came 76 s late).
        self.restarting = subprocess.Popen(str(self.restart_command), shell=True, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
        return f"API server restart begun by {self.restart_command!r} (in the background)"

    def requests(self) -> dict[str, int]:
        return {}  # the API server's own count is not read here: the controller's /metrics has it

    def stop(self) -> None:
        """Stop watching; delete the namespace (its jobs, pods, Events) unless asked to keep it."""
        if self.restarting is not None:
            self.restarting.wait()
        self.stopping.set()
        if not self.keep:
            subprocess.run(["kubectl", "--kubeconfig", str(self.direct), "delete", "namespace", self.namespace,
                            "--wait=true", "--timeout=600s"], capture_output=True, text=True)
