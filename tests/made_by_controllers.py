"""A job msgen rendered, with what each target's controllers make of it, as the API server returns it.

For every target the controller reconciles: the workloads msgen renders, the objects their
controllers make (the Job controller's pods, a StatefulSet's pods, a JobSet's Jobs, Volcano's
pods, the JobSet Trainer builds for a TrainJob), each labelled and annotated as those
controllers do, and everything a cluster adds (managedFields, finalizers, kubectl's
last-applied annotation, a tenant's labels, a pod's whole spec, IPs, conditions, images).
Pod and workload statuses are set by the tests (`pod_status`, `workload_status`), in the
shapes the kubelet and those controllers write. Plain data: no cluster, no network.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

import msgen
from msgen.targets.labels import REPLICA_TYPE

from .fake_kubelet import msjob

NAMESPACE = "ns"
STARTED, ENDED = "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z"
INDEX = "batch.kubernetes.io/job-completion-index"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

#: (role, index) → the pod of that replica (each target's controllers name them differently).
Pods = dict[tuple[str, int], dict[str, Any]]


def rendered(target: str, *, clean: str = "Running", ttl: int | None = None,
             kube_version: tuple[int, int] = (1, 31)) -> list[dict[str, Any]]:
    """msgen's objects for an MSJob `j` with a Scheduler and 3 Workers (by default for
    Kubernetes 1.31: an Indexed Job carries the success policy), as `kubectl apply` creates them."""
    text = msgen.render(msjob("j", 3, clean=clean, ttl=ttl), target=target, namespace=NAMESPACE,
                        kube_version=kube_version)
    objects = [d for d in yaml.safe_load_all(text) if d]
    for obj in objects:
        obj["metadata"]["namespace"] = NAMESPACE
        obj["metadata"].setdefault("annotations", {})[LAST_APPLIED] = json.dumps(obj, sort_keys=True)
    return objects


def uid(obj: dict[str, Any]) -> str:
    return f"uid-{obj['kind'].lower()}-{obj['metadata']['name']}"


def controlled_by(obj: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _pod(name: str, template: dict[str, Any], owner: dict[str, Any] | None, labels: dict[str, str],
         annotations: dict[str, str]) -> dict[str, Any]:
    metadata = template.get("metadata") or {}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": NAMESPACE, "generateName": name.rpartition("-")[0] + "-",
                        "labels": {**(metadata.get("labels") or {}), **labels},
                        "annotations": {**(metadata.get("annotations") or {}), **annotations}},
           "spec": copy.deepcopy(template["spec"])}
    if owner is not None:
        pod["metadata"]["ownerReferences"] = [owner]
    return pod


def _job_pods(job: dict[str, Any], labels: dict[str, str], annotations: dict[str, str]) -> list[dict[str, Any]]:
    """The Job controller's pods: one per completion index, `<job>-<index>-<random>`."""
    name, job_uid = job["metadata"]["name"], job["metadata"]["uid"]
    made = {"job-name": name, "controller-uid": job_uid, "batch.kubernetes.io/job-name": name,
            "batch.kubernetes.io/controller-uid": job_uid}
    return [_pod(f"{name}-{i}-x{i:04d}", job["spec"]["template"], controlled_by(job),
                 {**labels, **made, INDEX: str(i)}, {**annotations, INDEX: str(i)})
            for i in range(int(job["spec"].get("completions") or 1))]


def _jobset_children(jobset: dict[str, Any]) -> list[dict[str, Any]]:
    """A JobSet's Jobs (`<jobset>-<replicated job>-<i>`) and their pods, labelled as JobSet
    v0.12.0 does (pkg/controllers/jobset_controller.go constructJob, labelAndAnnotateObject):
    a Job has its replicated Job template's labels and annotations and JobSet's marks, never
    the JobSet's own labels."""
    out: list[dict[str, Any]] = []
    name = jobset["metadata"]["name"]
    for replicated in jobset["spec"]["replicatedJobs"]:
        for i in range(int(replicated.get("replicas") or 1)):
            marks = {"jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/replicatedjob-name": replicated["name"],
                     "jobset.sigs.k8s.io/replicatedjob-replicas": str(replicated.get("replicas") or 1),
                     "jobset.sigs.k8s.io/job-index": str(i), "jobset.sigs.k8s.io/job-global-index": str(i),
                     "jobset.sigs.k8s.io/job-key": f"{len(out):040x}", "jobset.sigs.k8s.io/restart-attempt": "0"}
            template = replicated["template"]
            job = {"apiVersion": "batch/v1", "kind": "Job",
                   "metadata": {"name": f"{name}-{replicated['name']}-{i}", "namespace": NAMESPACE,
                                "labels": {**((template.get("metadata") or {}).get("labels") or {}), **marks},
                                "annotations": {**((template.get("metadata") or {}).get("annotations") or {}),
                                                **marks, "alpha.jobset.sigs.k8s.io/exclusive-topology": "none"},
                                "ownerReferences": [controlled_by(jobset)]},
                   "spec": copy.deepcopy(template["spec"])}
            job["metadata"]["uid"] = uid(job)
            out += [job, *_job_pods(job, marks, {**marks, "jobset.sigs.k8s.io/coordinator": f"{name}-scheduler-0-0.{name}"})]
    return out


def made(target: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the target's controllers make of the rendered `objects` (uids set on these)."""
    for obj in objects:
        obj["metadata"]["uid"] = uid(obj)
    out: list[dict[str, Any]] = []
    for obj in objects:
        kind, spec = obj["kind"], obj.get("spec") or {}
        if kind == "Job" and obj["apiVersion"] == "batch/v1":
            out += _job_pods(obj, {}, {})
        elif kind == "StatefulSet":
            name = obj["metadata"]["name"]
            out += [_pod(f"{name}-{i}", spec["template"], controlled_by(obj),
                         {"apps.kubernetes.io/pod-index": str(i), "statefulset.kubernetes.io/pod-name": f"{name}-{i}",
                          "controller-revision-hash": f"{name}-5d8f7c9b6d"}, {})
                    for i in range(int(spec["replicas"]))]
        elif kind == "JobSet":
            out += _jobset_children(obj)
        elif kind == "Job":  # Volcano's: `<job>-<task>-<i>`, its index a label and an annotation
            name = obj["metadata"]["name"]
            for task in spec["tasks"]:
                for i in range(int(task["replicas"])):
                    marks = {"volcano.sh/job-name": name, "volcano.sh/job-namespace": NAMESPACE,
                             "volcano.sh/queue-name": "default", "volcano.sh/task-spec": task["name"],
                             "volcano.sh/task-index": str(i)}
                    out.append(_pod(f"{name}-{task['name']}-{i}", task["template"], controlled_by(obj),
                                    {**marks, "volcano.sh/job-retry-count": "0"},
                                    {**marks, "scheduling.k8s.io/group-name": f"{name}-{obj['metadata']['uid']}",
                                     "volcano.sh/job-version": "0", "volcano.sh/template-uid": f"{name}-{task['name']}"}))
        elif kind == "TrainJob":
            out += _trainer_jobset(obj, next(o for o in objects if o["kind"] == "TrainingRuntime"))
    return out


def _trainer_jobset(train_job: dict[str, Any], runtime: dict[str, Any]) -> list[dict[str, Any]]:
    """The JobSet `<job>` Trainer v2.3.0 builds from the runtime's template, and what the JobSet
    controller makes of it. Trainer (pkg/runtime/core/trainingruntime.go newRuntimeInfo,
    pkg/runtime/framework/plugins/jobset/jobset.go Build) gives the JobSet the labels and
    annotations of the template's metadata only (none of the TrainJob's, no label of its own),
    the TrainJob as its controller, the template's spec with the trainer step's `numNodes`
    (msgen renders them already), and, with a `podGroupPolicy`, the PodGroup's label
    (coscheduling) or annotation (volcano) on every pod template (builder.go PodLabels)."""
    template = copy.deepcopy(runtime["spec"]["template"])
    metadata = template.get("metadata") or {}
    policy = runtime["spec"].get("podGroupPolicy") or {}
    name = train_job["metadata"]["name"]
    for replicated in template["spec"]["replicatedJobs"]:
        pod = replicated["template"]["spec"]["template"].setdefault("metadata", {})
        if "coscheduling" in policy:
            pod["labels"] = {**(pod.get("labels") or {}), "scheduling.x-k8s.io/pod-group": name}
        if "volcano" in policy:
            pod["annotations"] = {**(pod.get("annotations") or {}), "scheduling.k8s.io/group-name": name}
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": name, "namespace": NAMESPACE,
                           "labels": dict(metadata.get("labels") or {}),
                           "annotations": dict(metadata.get("annotations") or {}),
                           "ownerReferences": [controlled_by(train_job)]},
              "spec": template["spec"]}
    jobset["metadata"]["uid"] = uid(jobset)
    return [jobset, *_jobset_children(jobset)]


def pods_by_replica(objects: list[dict[str, Any]]) -> Pods:
    """The pods of `objects` by (role, index), read from the labels their controllers set."""
    found: Pods = {}
    for obj in objects:
        if obj["kind"] != "Pod":
            continue
        labels, annotations = obj["metadata"]["labels"], obj["metadata"]["annotations"]
        index = next(where[k] for where in (labels, annotations)
                     for k in ("training.kubeflow.org/replica-index", INDEX, "apps.kubernetes.io/pod-index",
                               "volcano.sh/task-index") if k in where)
        found[(labels[REPLICA_TYPE], int(index))] = obj
    return found


def pod_status(pod: dict[str, Any], how: str) -> None:
    """The kubelet's status of `pod`: Running, Pending (a Secret missing, its image not
    pulled), Succeeded, Failed (OOMKilled), evicted (the pod's own reason), killed by a
    deletion (Failed after it was asked), or restarted in place after a failure or a success
    (a StatefulSet's pods restart, never end)."""
    name = pod["spec"]["containers"][0]["name"]
    container: dict[str, Any] = {
        "name": name, "image": "mindspore/mindspore-cpu:2.2.14", "imageID": "docker.io/mindspore@sha256:00",
        "containerID": "containerd://0", "ready": how == "running", "started": how == "running", "restartCount": 0,
        "state": {"running": {"startedAt": "2026-01-01T10:00:05Z"}}}
    phase = "Running"
    if how == "pending":
        phase = "Pending"
        container["state"] = {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}
    elif how in ("succeeded", "failed", "evicted", "killed"):
        code, reason, at = {"succeeded": (0, "Completed", ENDED), "failed": (137, "OOMKilled", ENDED),
                            "evicted": (137, "Error", ENDED), "killed": (143, "Error", "2026-01-01T11:00:10Z")}[how]
        phase = "Succeeded" if code == 0 else "Failed"
        container["state"] = {"terminated": {"exitCode": code, "reason": reason, "startedAt": "2026-01-01T10:00:05Z",
                                             "finishedAt": at, "containerID": "containerd://0"}}
    elif how in ("restarted-failed", "restarted-succeeded"):
        code = 137 if how == "restarted-failed" else 0
        container.update(restartCount=1, lastState={"terminated": {
            "exitCode": code, "reason": "OOMKilled" if code else "Completed", "finishedAt": ENDED}})
    if how == "killed":  # asked at 11:00:00 with 30 s to stop; stopped 10 s later
        pod["metadata"].update(deletionTimestamp="2026-01-01T11:00:30Z", deletionGracePeriodSeconds=30)
    pod["spec"].update(nodeName="node-1", schedulerName="default-scheduler", serviceAccountName="default",
                       tolerations=[{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                     "effect": "NoExecute", "tolerationSeconds": 300}])
    evicted = {"reason": "Evicted", "message": "The node was low on resource: memory."} if how == "evicted" else {}
    pod["status"] = {**evicted,
        "phase": phase, "startTime": STARTED, "hostIP": "10.0.0.1", "podIP": "10.1.0.7", "qosClass": "BestEffort",
        "podIPs": [{"ip": "10.1.0.7"}], "hostIPs": [{"ip": "10.0.0.1"}],
        "conditions": [{"type": t, "status": "True", "lastTransitionTime": STARTED}
                       for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")],
        "containerStatuses": [container]}
    if how == "pending":  # a missing Secret stops its init container first
        pod["status"]["initContainerStatuses"] = [{
            "name": "init", "image": "busybox", "imageID": "", "ready": False, "restartCount": 0,
            "state": {"waiting": {"reason": "CreateContainerConfigError", "message": 'secret "s3" not found'}}}]


def workload_status(obj: dict[str, Any], verdict: str | None) -> None:
    """A workload's status as its controller writes it while the job runs, once it failed
    (`failed`), once worker 0 succeeded (`succeeded`: by its success policy where it has one;
    a Volcano Job runs on until every worker ends, or msgen's Command ends it) and once the
    job has ended (`ended`)."""
    kind, api = obj["kind"], obj["apiVersion"]
    if verdict == "ended" and not api.startswith("batch.volcano.sh/"):
        verdict = "succeeded"

    def conditions(*pairs: str) -> list[dict[str, Any]]:
        return [{"type": p.split(":")[0], "status": "True", "reason": p.split(":")[1], "message": "",
                 "lastTransitionTime": ENDED, "lastProbeTime": ENDED} for p in pairs]

    if kind == "Job" and api == "batch/v1":
        worker = obj["metadata"]["name"].split("-")[1] in ("worker", "node")
        obj["status"] = {"active": int(obj["spec"].get("parallelism") or 1), "ready": 1, "startTime": STARTED,
                         "uncountedTerminatedPods": {}, "terminating": 0}
        if verdict == "failed" and worker:
            obj["status"].update(active=0, failed=1, conditions=conditions(
                "FailureTarget:BackoffLimitExceeded", "Failed:BackoffLimitExceeded"))
        elif verdict == "succeeded" and worker:
            obj["status"].update(active=0, succeeded=1, completedIndexes="0", completionTime=ENDED,
                                 conditions=conditions("SuccessCriteriaMet:SuccessPolicy", "Complete:SuccessPolicy"))
    elif kind == "StatefulSet":
        replicas = obj["spec"]["replicas"]
        obj["status"] = {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                         "currentReplicas": replicas, "updatedReplicas": replicas, "observedGeneration": 1,
                         "currentRevision": f"{obj['metadata']['name']}-5d8f7c9b6d", "collisionCount": 0}
    elif kind == "JobSet":
        ended = {"failed": conditions("Failed:FailedJobs"), "succeeded": conditions("Completed:AllJobsCompleted")}
        obj["status"] = {"conditions": conditions("StartupPolicyCompleted:AllReplicatedJobsStarted")
                         + ended.get(str(verdict), []), "terminalState": {"failed": "Failed", "succeeded": "Completed"}
                         .get(str(verdict)), "replicatedJobsStatus": [{"name": "worker", "active": 1, "ready": 1}]}
    elif kind == "Job":  # Volcano's
        phase = {"failed": "Terminated", "ended": "Completed"}.get(str(verdict), "Running")
        obj["status"] = {"state": {"phase": phase, "lastTransitionTime": ENDED}, "minAvailable": 4, "running": 4,
                         "taskStatusCount": {"worker": {"phase": {"Running": 3}}}, "version": 1,
                         "conditions": [{"status": phase, "lastTransitionTime": ENDED}]}
    elif kind == "TrainJob":
        ended = {"failed": conditions("Failed:FailedJobs"), "succeeded": conditions("Complete:JobsCompleted")}
        obj["status"] = {"conditions": ended.get(str(verdict), []),
                         "jobsStatus": [{"name": "node", "active": 3, "ready": 3, "failed": 0, "succeeded": 0}]}


def as_the_api_server_returns(obj: dict[str, Any], n: int) -> dict[str, Any]:
    """`obj` with what a cluster adds to every object: versions, times, managedFields,
    finalizers, and a tenant's labels and annotations (which no decision reads)."""
    metadata = obj["metadata"]
    metadata.setdefault("uid", uid(obj))
    metadata.update(resourceVersion=str(1000 + n), generation=metadata.get("generation", 1),
                    creationTimestamp="2026-01-01T09:59:00Z",
                    managedFields=[{"manager": m, "operation": "Update", "apiVersion": obj["apiVersion"],
                                    "time": STARTED, "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}, "f:status": {}}}
                                   for m in ("kubectl-client-side-apply", "kube-controller-manager", "kubelet")])
    if obj["kind"] in ("Pod", "Job"):
        metadata["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    metadata.setdefault("labels", {}).update({f"team.example.com/label-{i}": "x" * 40 for i in range(30)})
    metadata.setdefault("annotations", {}).update({"prometheus.io/scrape": "true", "example.com/owner": "team-a"})
    return obj
