"""What each field of msgen's own input models means, for the JSON Schemas (`msgen schema`).

Editors show a schema's `description` when a user writes a job file; without one they show
nothing, or pydantic's made-up title ("Restartpolicy"). The Kubernetes parts of a job (pod
template, container, object metadata) take Kubernetes' own descriptions from
`kubernetes_docs.json`; the job-level fields, which the operators' CRDs describe in a word or
not at all, are described here: what the operator did with the field, and what msgen does.
Keyed by the model's name as it appears under `$defs`; a test fails for any property a schema
leaves undescribed, so a field added to a model needs its line here.
"""

from __future__ import annotations

import json
import os

#: Kubernetes' own descriptions of the pod-template types, built from kubernetes-validate's
#: schemas by `python -m tests.generators.kubernetes_docs_build`.
KUBERNETES_DOCS = os.path.join(os.path.dirname(__file__), "kubernetes_docs.json")

#: The top of every job kind.
ROOT = {
    "apiVersion": "The job kind's API group and version; msgen compiles exactly this one.",
    "kind": "The job kind.",
    "metadata": "The job's name (every rendered object is named after it), namespace, labels "
    "and annotations; `msgen/<option>` annotations set msgen's options for this job.",
    "spec": "The job: its replicas (roles), their pod templates and its run policies.",
    "status": "Written by the operator in a cluster; msgen ignores it.",
}

_REPLICAS = "How many pods of this role (default 1)."
_TEMPLATE = (
    "The pod template of this role's pods, as Kubernetes defines it; msgen adds the framework's "
    "cluster environment, ports and device settings to the container it configures."
)
_RESTART = (
    "What happens to a failed pod of this role: Always, OnFailure, Never (default), or ExitCode "
    "(retry exit codes 128 and above, fail on 1-127). How each target expresses it: "
    "docs/targets.md, Policies per target."
)
_SCHEDULING = {
    "minAvailable": "Gang scheduling: how many pods must be schedulable together (default: every "
    "pod of the job); the PodGroup's or Volcano Job's minMember.",
    "minResources": "Gang scheduling: the resources the gang needs before any pod starts "
    "(default: the sum of the pods' requests).",
    "priorityClass": "PriorityClass of the job's PodGroup and pods.",
    "queue": "Volcano queue of the job's PodGroup or Volcano Job.",
    "scheduleTimeoutSeconds": "How long the operator let the gang wait to be scheduled; msgen "
    "accepts it and renders nothing for it.",
}
_RUN_POLICY = {
    "cleanPodPolicy": "Which pods to delete when the job ends: All, Running (ms-operator's "
    "default) or None (kubeflow's default). How each target expresses it: docs/targets.md, "
    "Policies per target.",
    "ttlSecondsAfterFinished": "Delete the job's objects this many seconds after it finished.",
    "activeDeadlineSeconds": "Fail the job when it has run this many seconds.",
    "backoffLimit": "How many pod failures to retry before the job fails.",
    "schedulingPolicy": "Gang scheduling: how many pods (and resources) must be schedulable "
    "together; rendered as a PodGroup with --gang-scheduler, natively by --target volcano.",
    "suspend": "Create the job without starting pods until it is resumed (Kueue sets this).",
}
_SUCCESS = (
    "When the job succeeds: \"\" (the default) when worker 0 does, AllWorkers when every "
    "worker does."
)

FIELDS: dict[str, dict[str, str]] = {
    # mindspore.gitee.com/v1 MSJob (ms-operator)
    "MSJobSpec": {
        "msReplicaSpecs": "The roles, keyed Scheduler, PS and Worker (any case): each a number "
        "of pods from one template. One Scheduler coordinates the MindSpore cluster; a job "
        "without one runs a standalone Worker.",
        "runPolicy": "Clean-up, deadlines, retries and gang scheduling of the whole job.",
        "successPolicy": _SUCCESS,
        "enableDynamicWorker": "Workers may fail and be replaced one by one without failing "
        "the job (each Worker index retried on its own).",
    },
    "MSReplicaSpec": {"replicas": _REPLICAS, "restartPolicy": _RESTART, "template": _TEMPLATE},
    "MSRunPolicy": {k: v for k, v in _RUN_POLICY.items() if k != "suspend"},
    "MSSchedulingPolicy": {k: v for k, v in _SCHEDULING.items() if k != "scheduleTimeoutSeconds"},
    # mindxdl.gitee.com/v1 AscendJob (ascend-operator)
    "AscendJobSpec": {
        "replicaSpecs": "The roles of the MindSpore form, keyed Scheduler and Worker (any case): "
        "each a number of pods from one template, Workers on Ascend NPUs.",
        "runPolicy": "Clean-up, deadlines, retries, suspension and gang scheduling of the job.",
        "schedulerName": "The scheduler ascend-operator's pods used (volcano); msgen expresses "
        "gang scheduling with --gang-scheduler or --target volcano instead, and says so.",
        "successPolicy": _SUCCESS,
    },
    "AscendRunPolicy": _RUN_POLICY,
    "AscendSchedulingPolicy": _SCHEDULING,
    # kubeflow.org/v1 MXJob (training-operator) and its inline form (mxnet-operator)
    "MXJobSpec": {
        "jobMode": "MXTrain: a ps-lite Scheduler, Servers and Workers; MXTune: TunerTracker, "
        "TunerServer and Tuner.",
        "mxReplicaSpecs": "The roles, keyed by replica type (Scheduler, Server, Worker; for "
        "MXTune TunerTracker, TunerServer, Tuner): each a number of pods from one template.",
        "runPolicy": "Clean-up, deadlines, retries, suspension and gang scheduling of the job "
        "(training-operator's form).",
        "cleanPodPolicy": _RUN_POLICY["cleanPodPolicy"] + " (mxnet-operator's inline form)",
        "ttlSecondsAfterFinished": _RUN_POLICY["ttlSecondsAfterFinished"] + " (inline form)",
        "activeDeadlineSeconds": _RUN_POLICY["activeDeadlineSeconds"] + " (inline form)",
        "backoffLimit": _RUN_POLICY["backoffLimit"] + " (inline form)",
        "schedulingPolicy": "Gang scheduling's minAvailable (mxnet-operator's inline form).",
        "successPolicy": "A v1beta1 field mxnet-operator's BytePS example writes; no v1 MXJob "
        "has it, so msgen ignores it and warns.",
    },
    "MXReplicaSpec": {
        "replicas": _REPLICAS,
        "restartPolicy": _RESTART,
        "template": _TEMPLATE,
        "label": "The role's label in MX_CONFIG for tuning jobs, as mxnet-operator 1.0 read it.",
    },
    "MXRunPolicy": _RUN_POLICY,
    "MXSchedulingPolicy": _SCHEDULING,
    "MXInlineSchedulingPolicy": {"minAvailable": _SCHEDULING["minAvailable"]},
    # mxnet.mlkube.io/v1beta1 and mlkube.io/v1beta1 MxJob (the original mxnet-operator)
    "MxJobSpec": {
        "jobMode": "dist: a SCHEDULER (one pod), SERVERs and WORKERs; local: one WORKER.",
        "replicaSpecs": "The roles, a list: each a replica type, a number of pods and a template.",
    },
    "MxReplicaSpec": {
        "mxReplicaType": "The role: SCHEDULER, SERVER or WORKER.",
        "replicas": _REPLICAS,
        "PsRootPort": "The ps-lite scheduler's port (default 9091): the mxjob-port of the "
        "SCHEDULER's container.",
        "template": _TEMPLATE,
    },
    # kubeflow.org/v1alpha1 Caffe2Job (caffe2-operator)
    "Caffe2JobSpec": {
        "replicaSpecs": "The workers: how many, and their pod template.",
        "backendSpecs": "Where the workers meet to share gradients: Redis or an NFS path.",
        "terminationPolicy": "Which worker's end ends the job (the operator itself did not read "
        "it: the job succeeds when every worker has).",
    },
    "ReplicaSpec": {
        "replicas": "How many worker pods (at least 1).",
        "template": _TEMPLATE,
    },
    "BackendSpec": {
        "backendType": "none, redis or nfs: how workers find each other (REDIS_HOST and "
        "REDIS_PORT, or NFS_PATH, in their environment).",
        "redisHost": "The Redis host workers meet at (REDIS_HOST).",
        "redisPort": "The Redis port (REDIS_PORT).",
        "nfsPath": "The shared NFS path workers meet in (NFS_PATH).",
    },
    "TerminationPolicy": {"chief": "The worker whose end ends the job."},
    "Chief": {
        "replicaName": "The chief's replica type.",
        "replicaIndex": "The chief's index among its replicas.",
    },
    # kubeflow.org/v1 MSJob (the 2020 ms-operator)
    "LegacyMSJobSpec": {
        "backend": "The 2020 operator's communication backend (tcp); MindSpore today sets its "
        "own, so msgen ignores it.",
        "masterPort": "The MASTER's port (default 23456), for every replica that names none: "
        "the port the Scheduler listens on.",
        "replicaSpecs": "The roles, a list: one MASTER and WORKERs, each with a template.",
    },
    "LegacyReplicaSpec": {
        "replicaType": "MASTER (one pod: today's Scheduler, which also trained as rank 0) or "
        "WORKER.",
        "replicas": _REPLICAS,
        "masterPort": "This replica's MASTER port (default: the spec's, else 23456).",
        "template": _TEMPLATE,
    },
}

#: A model's own description where its docstring speaks to msgen's developers, not its users.
TYPES: dict[str, str] = {
    "MXJobSpec": "The MXJob's spec, in either form: training-operator's (runPolicy) or "
    "mxnet-operator's (the run policy's fields inline).",
}


def kubernetes_docs() -> dict[str, dict[str, object]]:
    """Kubernetes' descriptions by `$defs` name: {"description": ..., "properties": {field: ...}}."""
    with open(KUBERNETES_DOCS, encoding="utf-8") as stream:
        types: dict[str, dict[str, object]] = json.load(stream)["types"]
    return types
