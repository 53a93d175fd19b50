"""A pod or workload is a job's only through the chain its target really builds.

Each target's pods are made through a chain of controllers, declared with the target's facts
(`Facts.chain`): TrainJob -> JobSet -> Job -> Pod, JobSet -> Job -> Pod, StatefulSet -> Pod,
Indexed Job -> Pod, Volcano Job -> Pod, or the bare Pod itself. Anyone who may create a Job or
a pod in the namespace can write any `ownerReferences` they like, the UID of another job's
workload included: Kubernetes does not stop it. So an object counts only where every link is
of the apiVersion, kind and name msgen derives for it, controlled (by UID) by the link above,
and, for the Job controller's pods, carrying that Job's UID in its selector's label as the Job
controller requires; an ownerReference alone never extends trust.

The forgeries of a tenant are each tried on every target (plain data, shaped as the API server
returns it: tests/made_by_controllers.py); the same against a real cluster and the controller
is in tests/test_live_hostile_tenants.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from msgen.reconcile import actions, ownership, status, watch
from msgen.targets import NAMES as TARGETS
from msgen.targets import facts_of

from .made_by_controllers import (NAMESPACE, controlled_by, made, pod_status, pods_by_replica, rendered,
                                  workload_status)
from .test_reconcile_decisions import NOW

JOB = "j"
JOB_LABELS = {"training.kubeflow.org/job-name": JOB, "app.kubernetes.io/managed-by": "msgen"}
WORKER_0 = {"training.kubeflow.org/replica-type": "worker", "training.kubeflow.org/replica-index": "0",
            "batch.kubernetes.io/job-completion-index": "0"}
#: Targets whose pods a controller makes (not bare Pods).
CONTROLLED = [t for t in TARGETS if not facts_of(t).bare_pods]


def running_job(target: str, kube_version: tuple[int, int] = (1, 31)) -> list[dict[str, Any]]:
    """Job `j` rendered for `target` and what its controllers made of it, every pod running."""
    objects = rendered(target, kube_version=kube_version)
    everything = [*objects, *made(target, objects)]
    for pod in pods_by_replica(everything).values():
        pod_status(pod, "running")
    return everything


def verdict(objects: list[dict[str, Any]]) -> tuple[str, list[str], list[str]]:
    """The job's phase, the actions due and the pods it counts as its own."""
    policy, workloads, pods = watch.select(JOB, NAMESPACE, objects)
    found = status.aggregate(policy, workloads, pods)
    due = actions.due(policy, found, workloads, pods, NOW, [])
    return found.phase, [f"{a.verb} {a.kind} {a.name}" for a in due], sorted(p["metadata"]["name"] for p in pods)


def succeeded_pod(name: str, owner: dict[str, Any] | None, **labels: str) -> dict[str, Any]:
    """A tenant's pod with worker 0's labels that exited 0, controlled by `owner` (a reference)."""
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": NAMESPACE, "uid": f"uid-{name}", "labels": {**JOB_LABELS, **WORKER_0, **labels},
        "annotations": {"batch.kubernetes.io/job-completion-index": "0"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
    if owner is not None:
        pod["metadata"]["ownerReferences"] = [owner]
    pod_status(pod, "succeeded")
    return pod


def tenant_job(owner: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's forgery: a tenant's Job labelled as msgen's and as the job's, naming one of
    the job's objects (its UID copied) as its controller, and its pod, worker 0, exited 0, made
    by that Job as the Job controller makes pods (its selector's label, its name)."""
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "tenant", "namespace": NAMESPACE, "uid": "uid-tenant", "labels": dict(JOB_LABELS),
        "ownerReferences": [controlled_by(owner)]},
        "spec": {"completionMode": "Indexed", "completions": 1, "parallelism": 1,
                 "template": {"metadata": {"labels": {**JOB_LABELS, **WORKER_0}}, "spec": {}}},
        "status": {"active": 0, "succeeded": 1}}  # fmt: skip
    pod = succeeded_pod("tenant-0-abcde", controlled_by(job), **{"batch.kubernetes.io/controller-uid": "uid-tenant",
                                                                 "controller-uid": "uid-tenant"})
    return [job, pod]


def chain_objects(target: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects of the job's chain above its pods: its workloads and what they control."""
    kinds = {(link.api_version, link.kind) for link in facts_of(target).chain[:-1]}
    return [o for o in objects if (o["apiVersion"], o["kind"]) in kinds]


def unchanged(target: str, objects: list[dict[str, Any]], forged: list[dict[str, Any]]) -> None:
    before = verdict(objects)
    assert before[0] == "Running" and before[1] == []
    assert verdict([*objects, *forged]) == before, [o["metadata"]["name"] for o in forged]


# ---- the forgeries the issue reproduced -----------------------------------------------------

@pytest.mark.parametrize(("target", "kube_version"), [
    ("statefulset", (1, 31)), ("volcano", (1, 31)), ("jobset", (1, 31)), ("indexed-job", (1, 29)),
    ("indexed-job", (1, 30)), ("trainjob", (1, 31)),
])  # fmt: skip
def test_a_tenants_job_claiming_the_jobs_workload_changes_nothing(target: str, kube_version: tuple[int, int]) -> None:
    """A Job labelled managed-by msgen and with the job's name, whose controller reference
    names the job's workload (StatefulSet `j-worker`, the Volcano Job, the JobSet, the Worker
    Job, the TrainJob) with its UID, and whose pod, worker 0, exits 0: the job's verdict, its
    pods and the actions due stay as they were (on today's code: Succeeded, the job's pods
    deleted, its Volcano Job completed, both Jobs suspended)."""
    objects = running_job(target, kube_version)
    workloads = watch.select(JOB, NAMESPACE, objects)[1]
    victim = next((w for w in workloads if w["metadata"]["name"] == f"{JOB}-worker"), workloads[0])
    unchanged(target, objects, tenant_job(victim))


@pytest.mark.parametrize("target", CONTROLLED)
def test_a_tenants_job_claiming_any_object_of_the_chain_changes_nothing(target: str) -> None:
    """The same Job, claiming each object of the chain in turn (the JobSet Trainer built, a
    JobSet's Jobs, ...): none of them controls Jobs of that name."""
    objects = running_job(target)
    for owner in chain_objects(target, objects):
        unchanged(target, objects, tenant_job(owner))


@pytest.mark.parametrize("target", CONTROLLED)
def test_a_pod_claiming_an_object_of_the_chain_under_a_name_it_never_makes_changes_nothing(target: str) -> None:
    """A tenant's pod whose controller reference is an object of the job's chain, UID and
    all (and the Job controller's selector label where the object is a Job), named as that
    object never names a pod."""
    objects = running_job(target)
    for owner in chain_objects(target, objects):
        uid = owner["metadata"]["uid"]
        forged = succeeded_pod("not-yours", controlled_by(owner), **{"batch.kubernetes.io/controller-uid": uid})
        unchanged(target, objects, [forged])


def _replace_worker_0(objects: list[dict[str, Any]], edit: Any) -> list[dict[str, Any]]:
    """The job with its worker 0 replaced by a tenant's pod of the same name, exited 0, whose
    metadata `edit` changes (the job's own worker 0 is gone: deleted, or not made yet)."""
    real = pods_by_replica(objects)[("worker", 0)]
    forged = copy.deepcopy(real)
    forged["metadata"]["uid"] = "uid-forged"
    pod_status(forged, "succeeded")
    edit(forged["metadata"])
    return [o for o in objects if o is not real] + [forged]


def _wrong_api_version(metadata: dict[str, Any]) -> None:
    owner = metadata["ownerReferences"][0]
    group, _, version = owner["apiVersion"].rpartition("/")
    owner["apiVersion"] = f"{group}/v9" if group else "apps/v1"


def _forged_uid(metadata: dict[str, Any]) -> None:
    metadata["ownerReferences"][0]["uid"] = "a-forged-uid"


def _no_selector_label(metadata: dict[str, Any]) -> None:
    for key in ("batch.kubernetes.io/controller-uid", "controller-uid"):
        metadata["labels"].pop(key, None)


@pytest.mark.parametrize("target", CONTROLLED)
@pytest.mark.parametrize("edit", [_wrong_api_version, _forged_uid], ids=["owner-of-another-apiversion", "forged-uid"])
def test_worker_0_with_a_link_not_of_the_chain_is_not_the_jobs(target: str, edit: Any) -> None:
    """Worker 0's name and labels, its controller reference right but for its apiVersion (a
    kind of the same name in another group or version), or for its UID (a JobSet's Job named
    right, whose UID is forged): not the job's pod, and its success not the job's."""
    objects = running_job(target, (1, 30))
    before = verdict(objects)
    phase, due, pods = verdict(_replace_worker_0(objects, edit))
    assert (phase, due) == (before[0], before[1])
    assert len(pods) == len(before[2]) - 1


@pytest.mark.parametrize("target", [t for t in CONTROLLED if facts_of(t).chain[-1].named == "indexed-pod"])
def test_a_pod_without_its_jobs_selector_label_is_not_the_jobs(target: str) -> None:
    """The Job controller counts only the pods that match its Job's selector (the Job's UID in
    `batch.kubernetes.io/controller-uid`), and releases the others: so does msgen."""
    objects = running_job(target, (1, 30))
    before = verdict(objects)
    phase, due, pods = verdict(_replace_worker_0(objects, _no_selector_label))
    assert (phase, due) == (before[0], before[1])
    assert len(pods) == len(before[2]) - 1


# ---- the chains themselves ----------------------------------------------------------------

@pytest.mark.parametrize("target", TARGETS)
def test_every_pod_the_targets_controllers_make_is_the_jobs(target: str) -> None:
    """Through the chain, as each target's controllers build it: every pod is the job's,
    and its worker 0 succeeding ends it (where its workload says so too, as a TrainJob's)."""
    objects = running_job(target, (1, 30))
    pods = pods_by_replica(objects)
    assert verdict(objects)[2] == sorted(p["metadata"]["name"] for p in pods.values())
    pod_status(pods[("worker", 0)], "succeeded")
    if target == "trainjob":
        for obj in objects:
            workload_status(obj, "succeeded")
    assert verdict(objects)[0] == "Succeeded"


@pytest.mark.parametrize("target", [t for t in CONTROLLED if len(facts_of(t).chain) > 2])
def test_a_link_not_seen_is_not_trusted(target: str) -> None:
    """Without the Jobs between the JobSet and the pods (a watch that does not show them),
    no pod is the job's: the chain is followed link by link, never guessed."""
    objects = [o for o in running_job(target) if (o["apiVersion"], o["kind"]) != ("batch/v1", "Job")]
    assert verdict(objects)[2] == []


@pytest.mark.parametrize("target", TARGETS)
def test_each_chain_begins_with_the_workload_msgen_renders_and_ends_with_a_pod(target: str) -> None:
    chain = facts_of(target).chain
    workloads = watch.select(JOB, NAMESPACE, running_job(target))[1]
    assert {(w["apiVersion"], w["kind"]) for w in workloads} == {(chain[0].api_version, chain[0].kind)}
    assert (chain[-1].api_version, chain[-1].kind) == ("v1", "Pod")
    assert chain[0].named == "rendered" and all(link.named != "rendered" for link in chain[1:])


LONG = "a" * 50 + "-worker"  # 57 characters: `<Job>-<i>-` is longer than a generated name's 58


@pytest.mark.parametrize(("name", "job", "completions", "made"), [
    ("j-worker-0-bcdfg", "j-worker", 3, True),
    ("j-worker-2-24567", "j-worker", 3, True),  # the random part may be digits only
    ("j-worker-3-bcdfg", "j-worker", 3, False),  # no such index
    ("j-worker-00-bcdfg", "j-worker", 3, False),  # not as Kubernetes writes it
    ("j-worker-0-bcdf", "j-worker", 3, False),
    ("j-worker-0-BCDFG", "j-worker", 3, False),
    ("j-worker-x-0-bcdfg", "j-worker", 3, False),
    ("j-workers-0-bcdfg", "j-worker", 3, False),
    (LONG[:55] + "-0-bcdfg", LONG, 1, True),  # cut as podGenerateNameWithIndex cuts it
    (LONG + "-0-bcdfg", LONG, 1, False),
    (LONG[:54] + "-12-bcdfg", LONG, 13, True),
])  # fmt: skip
def test_the_job_controllers_pod_names(name: str, job: str, completions: int, made: bool) -> None:
    assert ownership._generated_from(name, job, completions) is made
