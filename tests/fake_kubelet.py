"""What a kubelet and the Job controller would do to the objects of tests/fake_api.py.

The controller's decisions read pods' phases and container states and Jobs' conditions;
these functions write them as Kubernetes does (a pod starts, runs, ends with an exit code;
an Indexed Job makes one pod per index, counts them as they end, fails at `backoffLimit`
with FailureTarget then Failed, completes when its completions have succeeded, and deletes
its active pods when suspended or failed). Simplified: no retries of failed pods (the jobs
msgen renders use `backoffLimit: 0`), no successPolicy (jobs are rendered for 1.30).
"""

from __future__ import annotations

import time
from typing import Any

from .fake_api import Cluster

JOB_NAME = "training.kubeflow.org/job-name"
INDEX = "batch.kubernetes.io/job-completion-index"


def stamp(at: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if at is None else at))


def _container(pod: dict[str, Any]) -> str:
    return str(pod["spec"]["containers"][0]["name"])


def start(cluster: Cluster, namespace: str, name: str) -> dict[str, Any] | None:
    """The pod's container runs."""
    now = stamp()
    pod = cluster.get("v1", "pods", namespace, name)
    if pod is None or (pod.get("status") or {}).get("phase") not in (None, "Pending"):
        return None
    return cluster.patch("v1", "pods", namespace, name, {"status": {
        "phase": "Running", "startTime": now,
        "containerStatuses": [{"name": _container(pod), "ready": True, "restartCount": 0,
                               "state": {"running": {"startedAt": now}}}]}})


def end(cluster: Cluster, namespace: str, name: str, exit_code: int) -> dict[str, Any] | None:
    """The pod's container exits with `exit_code`: the pod Succeeded (0) or Failed."""
    pod = cluster.get("v1", "pods", namespace, name)
    if pod is None or (pod.get("status") or {}).get("phase") != "Running" or pod["metadata"].get("deletionTimestamp"):
        return None
    started = pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
    now = stamp()
    ended = cluster.patch("v1", "pods", namespace, name, {"status": {
        "phase": "Succeeded" if exit_code == 0 else "Failed",
        "containerStatuses": [{"name": _container(pod), "ready": False, "restartCount": 0, "state": {"terminated": {
            "exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
            "startedAt": started, "finishedAt": now}}}]}})
    owner = _owner_job(pod)
    if owner is not None:
        sync_job(cluster, namespace, owner)
    return ended


def _owner_job(pod: dict[str, Any]) -> str | None:
    for ref in pod["metadata"].get("ownerReferences") or []:
        if ref.get("kind") == "Job":
            return str(ref["name"])
    return None


def job_pods(cluster: Cluster, namespace: str, job: str) -> list[dict[str, Any]]:
    items, _ = cluster.listing(("v1", "pods"), namespace, f"job-name={job}")
    return items


def create_job_pods(cluster: Cluster, job: dict[str, Any]) -> list[dict[str, Any]]:
    """The Job controller's first step: one pod per index, from the template."""
    metadata, spec = job["metadata"], job["spec"]
    template = spec["template"]
    made = []
    for index in range(int(spec.get("completions") or 1)):
        # the Job's selector labels (the API server adds them to its template), the index
        labels = {**(template.get("metadata") or {}).get("labels", {}), "job-name": metadata["name"],
                  "controller-uid": metadata["uid"], "batch.kubernetes.io/job-name": metadata["name"],
                  "batch.kubernetes.io/controller-uid": metadata["uid"], INDEX: str(index)}
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": f"{metadata['name']}-{index}-x{index:04d}", "namespace": metadata["namespace"],
                            "labels": labels,
                            "annotations": {**(template.get("metadata") or {}).get("annotations", {}),
                                            INDEX: str(index)},
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": metadata["name"],
                                                 "uid": metadata["uid"], "controller": True}]},
               "spec": template["spec"], "status": {"phase": "Pending"}}
        made.append(cluster.put(pod))
    cluster.patch("batch/v1", "jobs", metadata["namespace"], metadata["name"],
                  {"status": {"active": len(made), "startTime": stamp()}})
    return made


def sync_job(cluster: Cluster, namespace: str, name: str) -> None:
    """Count the Job's pods; fail it past backoffLimit, complete it at its completions,
    stop its active pods when it is suspended or failed."""
    job = cluster.get("batch/v1", "jobs", namespace, name)
    if job is None:
        return
    spec, status = job["spec"], job.get("status") or {}
    conditions = {c["type"] for c in status.get("conditions") or []}
    pods = job_pods(cluster, namespace, name)
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    failed, succeeded = phases.count("Failed"), phases.count("Succeeded")
    active = [p for p in pods if (p.get("status") or {}).get("phase") in ("Pending", "Running")]
    now = stamp()
    new: list[dict[str, Any]] = []
    if "Failed" not in conditions and failed > int(spec.get("backoffLimit") or 0):
        new = [{"type": t, "status": "True", "reason": "BackoffLimitExceeded", "lastTransitionTime": now,
                "message": "Job has reached the specified backoff limit"} for t in ("FailureTarget", "Failed")]
    elif "Complete" not in conditions and succeeded >= int(spec.get("completions") or 1):
        new = [{"type": t, "status": "True", "reason": "CompletionsReached", "lastTransitionTime": now}
               for t in ("SuccessCriteriaMet", "Complete")]
    elif spec.get("suspend") and "Suspended" not in conditions:
        new = [{"type": "Suspended", "status": "True", "reason": "JobSuspended", "lastTransitionTime": now}]
    if new or (spec.get("suspend") or "Failed" in conditions) and active:
        for pod in active if spec.get("suspend") or any(c["type"] == "Failed" for c in new) or "Failed" in conditions else []:
            cluster.delete("v1", "pods", namespace, pod["metadata"]["name"])
        finished = any(c["type"] in ("Failed", "Complete") for c in new)
        patch: dict[str, Any] = {"status": {"failed": failed, "succeeded": succeeded,
                                            "conditions": (status.get("conditions") or []) + new,
                                            "active": 0 if spec.get("suspend") or finished else len(active)}}
        if finished:
            patch["status"]["completionTime"] = now
        cluster.patch("batch/v1", "jobs", namespace, name, patch)
    else:
        cluster.patch("batch/v1", "jobs", namespace, name,
                      {"status": {"failed": failed, "succeeded": succeeded, "active": len(active)}})


def msjob(name: str, workers: int, *, clean: str = "Running", ttl: int | None = None) -> str:
    """An MSJob with a Scheduler and `workers` Workers that do not restart."""
    ttl_line = f"\n    ttlSecondsAfterFinished: {ttl}" if ttl is not None else ""
    container = ("{spec: {containers: [{name: mindspore, image: mindspore/mindspore-cpu:2.2.14, "
                 "imagePullPolicy: IfNotPresent, command: [python, train.py]}]}}")
    return f"""apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: {name}
spec:
  runPolicy:
    cleanPodPolicy: {clean}{ttl_line}
  msReplicaSpecs:
    Scheduler:
      replicas: 1
      restartPolicy: Never
      template: {container}
    Worker:
      replicas: {workers}
      restartPolicy: Never
      template: {container}
"""


def rendered(text: str, namespace: str, target: str, **options: Any) -> list[dict[str, Any]]:
    """msgen's objects for the job, as `kubectl apply` would create them in `namespace`."""
    import yaml

    import msgen

    objects = [d for d in yaml.safe_load_all(msgen.render(text, target=target, namespace=namespace,
                                                           kube_version=(1, 30), **options)) if d]
    for obj in objects:
        obj["metadata"]["namespace"] = namespace
    return objects


def place(cluster: Cluster, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Create the objects, and the pods of their Jobs (what the Job controller does first);
    returns the job's pods."""
    pods = []
    for obj in objects:
        made = cluster.put(obj)
        if obj["kind"] == "Pod":
            pods.append(made)
        elif obj["kind"] == "Job":
            pods += create_job_pods(cluster, made)
    return pods


def react(cluster: Cluster) -> None:
    """The Job controller reacts to what clients write on Jobs (a suspend stops the pods)."""
    def hook(write: Any) -> None:
        if write.kind == "Job" and write.method in ("PATCH", "PUT") and write.result is not None:
            sync_job(cluster, write.namespace, write.name)

    cluster.hooks.append(hook)
