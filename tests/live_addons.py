"""What the live tests of the systems msgen's output goes into (JobSet, Volcano, Kueue, Trainer) share.

Each test needs its system on the cluster MSGEN_TEST_KUBECONFIG names (`tests/live/cluster up
--with jobset,volcano,kueue,trainer` installs them) and skips, naming what is missing, when it is not:
a CRD alone is not enough (nothing would reconcile the job), so the controller's own objects
are looked for too.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from datetime import datetime
from typing import Any, Callable

import pytest

from .live_cluster import KUBECONFIG, KUBECTL, kubectl

#: What shows that each system runs: its CRD, and an object only its running controller makes.
COMPONENTS: dict[str, tuple[str, list[str]]] = {
    "jobset": ("jobsets.jobset.x-k8s.io",
               ["get", "secret", "jobset-webhook-server-cert", "-n", "jobset-system", "-o", "jsonpath={.data.ca\\.crt}"]),
    "volcano": ("jobs.batch.volcano.sh", ["get", "queues.scheduling.volcano.sh", "default", "-o", "name"]),
    "kueue": ("workloads.kueue.x-k8s.io",
              ["get", "secret", "kueue-webhook-server-cert", "-n", "kueue-system", "-o", "jsonpath={.data.ca\\.crt}"]),
    "trainer": ("trainjobs.trainer.kubeflow.org",
                ["get", "secret", "kubeflow-trainer-webhook-cert", "-n", "kubeflow-system", "-o",
                 "jsonpath={.data.ca\\.crt}"]),
}
_present: dict[str, str | None] = {}


def missing(component: str) -> str | None:
    """Why `component` cannot be tested on the cluster, or None when it runs there."""
    if not KUBECONFIG:
        return "MSGEN_TEST_KUBECONFIG names no cluster"
    if component not in _present:
        crd, evidence = COMPONENTS[component]
        if not kubectl("get", "crd", crd, "--ignore-not-found", "-o", "name", check=False).stdout.strip():
            _present[component] = f"{component} is not installed (no CRD {crd}): tests/live/cluster up --with {component}"
        elif not kubectl(*evidence, check=False).stdout.strip():
            _present[component] = f"{component}'s CRDs are there but its controller never ran: tests/live/cluster up --with {component}"
        else:
            _present[component] = None
    return _present[component]


def require(*components: str) -> None:
    for component in components:
        why = missing(component)
        if why:
            pytest.skip(why)


def kubectl_with_input(text: str, *args: str) -> str:
    assert KUBECTL, "kubectl must be on the PATH for the live tests"
    return subprocess.run([KUBECTL, "--kubeconfig", str(KUBECONFIG), *args], input=text, capture_output=True,
                          text=True, check=True, timeout=120).stdout


def get_json(*args: str) -> Any:
    return json.loads(kubectl("get", *args, "-o", "json").stdout)


def pods(namespace: str, selector: str = "") -> list[dict[str, Any]]:
    args = ["pods", "-n", namespace] + (["-l", selector] if selector else [])
    return list(get_json(*args)["items"])


def wait_until(what: str, check: Callable[[], Any], timeout: float, every: float = 2) -> Any:
    """`check()`'s first true value within `timeout` seconds; fails naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f}s")
        time.sleep(every)


def timestamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def condition_time(pod: dict[str, Any], kind: str) -> float | None:
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition["type"] == kind and condition["status"] == "True":
            return timestamp(condition["lastTransitionTime"])
    return None


def running_pods(namespace: str, job: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods(namespace, f"training.kubeflow.org/job-name={job}")
                  if p.get("status", {}).get("phase") == "Running")


# --- Kueue -------------------------------------------------------------------------------------

def kueue_queues(namespace: str, cluster_queue: str, pods_quota: int) -> None:
    """A ResourceFlavor, a ClusterQueue `cluster_queue` admitting at most `pods_quota` pods (and
    any CPU and memory), and the LocalQueue `cluster_queue` in `namespace` that feeds it."""
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "msgen-live"}}
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": cluster_queue},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu", "memory", "pods"],
            "flavors": [{"name": "msgen-live", "resources": [
                {"name": "cpu", "nominalQuota": "64"}, {"name": "memory", "nominalQuota": "256Gi"},
                {"name": "pods", "nominalQuota": pods_quota}]}]}]},
    }
    local = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
             "metadata": {"name": cluster_queue, "namespace": namespace}, "spec": {"clusterQueue": cluster_queue}}
    # A YAML stream: kubectl reads one that starts with `{` as JSON, which has no `---`.
    text = "".join(f"---\n{json.dumps(o)}\n" for o in (flavor, queue, local))
    kubectl_with_input(text, "apply", "--server-side", "--force-conflicts", "-f", "-")


def set_pods_quota(cluster_queue: str, pods_quota: int) -> None:
    patch = [{"op": "replace", "path": "/spec/resourceGroups/0/flavors/0/resources/2/nominalQuota", "value": pods_quota}]
    kubectl("patch", "clusterqueue", cluster_queue, "--type=json", "-p", json.dumps(patch))


def workloads(namespace: str) -> list[dict[str, Any]]:
    return list(get_json("workloads.kueue.x-k8s.io", "-n", namespace)["items"])


def admitted(workload: dict[str, Any]) -> bool:
    return any(c["type"] == "Admitted" and c["status"] == "True" for c in workload.get("status", {}).get("conditions") or [])


# --- Volcano -----------------------------------------------------------------------------------

def volcano_queue_for(job: dict[str, Any]) -> None:
    """The Volcano queue the job's `runPolicy.schedulingPolicy.queue` names, made open (Volcano
    refuses a job whose queue does not exist); nothing for the `default` queue."""
    queue = ((job["spec"].get("runPolicy") or {}).get("schedulingPolicy") or {}).get("queue")
    if queue and queue != "default":
        text = json.dumps({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": queue},
                           "spec": {"reclaimable": True, "weight": 1}})
        kubectl_with_input(text, "apply", "-f", "-")


def podgroup_phase(namespace: str, name: str) -> str:
    found = kubectl("get", "podgroups.scheduling.volcano.sh", name, "-n", namespace, "--ignore-not-found", "-o",
                    "jsonpath={.status.phase}", check=False).stdout
    return found.strip()


class PodTimes:
    """When each pod of a namespace was created and bound, polled every second while a job
    runs (a job's end may delete its pods, and with them these facts)."""

    def __init__(self, namespace: str):
        self.namespace = namespace
        self.created: dict[str, float] = {}
        self.scheduled: dict[str, float] = {}
        self.scheduler: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            done = kubectl("get", "pods", "-n", self.namespace, "-o", "json", check=False)
            if done.returncode == 0:
                for pod in json.loads(done.stdout)["items"]:
                    uid = f"{pod['metadata']['name']}#{pod['metadata']['uid']}"
                    self.created[uid] = timestamp(pod["metadata"]["creationTimestamp"])
                    self.scheduler[uid] = pod["spec"].get("schedulerName", "")
                    bound = condition_time(pod, "PodScheduled")
                    if bound is not None:
                        self.scheduled.setdefault(uid, bound)
            self._stop.wait(1)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
