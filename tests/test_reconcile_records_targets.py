"""The controller decides the same on its slim records (`records.essentials`) as on the full
objects a cluster returns, on every target it reconciles and in every state its policies act on.

Each case is a job msgen rendered for a target, with what that target's controllers make of it
(tests/made_by_controllers.py) in one state: running, a pod waiting for its image, a worker
failed or evicted, succeeded by the success policy, a pod deleted while it ran, ended long
enough ago for cleanPodPolicy All and the TTL, forged pods and workloads of other tenants, two
workloads disagreeing on the run-policy, and a GitOps tool's tracking marks. Every decision the controller (and `msgen status`, `apply --wait`) takes from
the objects is computed on the full objects and on their records, and must be the same.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any

import pytest

from msgen.model import run_policy
from msgen.reconcile import actions, controller, ownership, published, publisher, records, retries, status, watch
from msgen.reconcile.pods import killed, pod_failure, pod_index, pod_role, restarted
from msgen.reconcile.witness import Witness
from msgen.reconcile.writes import Writes
from msgen.targets import NAMES as TARGETS
from msgen.targets.labels import JOB_NAME, MANAGED_BY

from .made_by_controllers import (ENDED, NAMESPACE, Pods, as_the_api_server_returns, controlled_by, made,
                                  pod_status, pods_by_replica, rendered, workload_status)

#: Spread over the Pythons CI runs: its time is many passes over an API server in process; the reconcile logic's own tests run on every Python (tests/python_share.py).
pytestmark = pytest.mark.spread

#: When the decisions are taken: while the job runs, just after its end, and once its TTL passed.
TIMES = (datetime(2026, 1, 1, 10, 30, tzinfo=timezone.utc), datetime(2026, 1, 1, 11, 0, 30, tzinfo=timezone.utc),
         datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc))
STATES = ("running", "pending", "worker-failed", "worker-evicted", "succeeded", "pod-deleted", "ended-clean-ttl", "forged",
          "disagreeing", "gitops")


def _replicas(state: str, target: str) -> dict[tuple[str, int], str]:
    """How each pod is (default: running); a StatefulSet's pods restart in place, never end."""
    restarts = target == "statefulset"
    return {
        "pending": {key: "pending" for key in (("scheduler", 0), ("worker", 0), ("worker", 1), ("worker", 2))},
        "worker-failed": {("worker", 1): "restarted-failed" if restarts else "failed"},
        "worker-evicted": {("worker", 1): "evicted"},
        "succeeded": {("worker", 0): "restarted-succeeded" if restarts else "succeeded"},
        "pod-deleted": {("worker", 1): "killed"},
        "ended-clean-ttl": {("worker", 0): "restarted-succeeded" if restarts else "succeeded",
                            ("worker", 1): "killed", ("scheduler", 0): "killed"},
        "gitops": {("worker", 0): "restarted-succeeded" if restarts else "succeeded"},
    }.get(state, {})


def _verdict(state: str) -> str | None:
    return {"worker-failed": "failed", "worker-evicted": "failed", "succeeded": "succeeded", "ended-clean-ttl": "ended",
            "gitops": "ended"}.get(state)


def job_in(target: str, state: str) -> list[dict[str, Any]]:
    """Every object of the job in the namespace, in `state` (`watched`: what the controller sees)."""
    ended = state in ("ended-clean-ttl", "gitops")
    objects = rendered(target, clean="All" if ended else "Running", ttl=60 if ended else None)
    children = made(target, objects)
    pods: Pods = pods_by_replica([*objects, *children])
    for key, pod in pods.items():
        pod_status(pod, _replicas(state, target).get(key, "running"))
    for obj in [*objects, *children]:
        workload_status(obj, _verdict(state))
    everything = [*objects, *children]
    if state == "ended-clean-ttl":
        _ended_an_hour_ago(target, everything)
    elif state == "forged":
        everything += _forgeries(target, everything)
    elif state == "disagreeing":
        everything += _a_copy_with_another_policy(everything)
    elif state == "gitops":
        for obj in everything:
            if obj["kind"] != "Pod" or target == "pod":
                obj["metadata"].setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = "app:/x:ns/y"
            else:
                obj["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"] = "apps"
    return [as_the_api_server_returns(o, n) for n, o in enumerate(everything)]


def _ended_an_hour_ago(target: str, objects: list[dict[str, Any]]) -> None:
    """The job ended at ENDED; cleanPodPolicy suspended the Jobs still active (marking when),
    the controller published the end on the holder; the Scheduler's pod is gone."""
    for obj in objects:
        metadata = obj["metadata"]
        if obj["kind"] == "Job" and obj["apiVersion"] == "batch/v1" and target == "indexed-job":
            obj["spec"]["suspend"] = True
            metadata.update(generation=2)
            metadata["annotations"].update({actions.STOPPED_ANNOTATION: "job succeeded; cleanPodPolicy All",
                                            actions.STOPPED_AT: ENDED, actions.STOPPED_GENERATION: "1"})
    holder = next(o for o in objects if run_policy.ANNOTATION in (o["metadata"].get("annotations") or {}))
    holder["metadata"]["annotations"][published.ANNOTATION] = json.dumps({
        "phase": "Succeeded", "conditions": [{"type": "Succeeded", "status": "True", "reason": "JobSucceeded",
                                              "lastTransitionTime": ENDED}], "completionTime": ENDED})
    objects[:] = [o for o in objects if not (o["kind"] == "Pod" and o["metadata"]["name"].startswith("j-scheduler")
                                             and target != "pod")]


def _forgeries(target: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Other tenants' objects: a pod with worker 0's labels, Succeeded, carrying the job's
    run-policy; one claiming a Job of the job as its controller with a forged uid; a Job
    carrying the job's run-policy under a name msgen never renders, failed, and its pod."""
    workload = next(o for o in objects if run_policy.ANNOTATION in (o["metadata"].get("annotations") or {}))
    text = workload["metadata"]["annotations"][run_policy.ANNOTATION]
    worker0 = copy.deepcopy(pods_by_replica(objects)[("worker", 0)])
    pod_status(worker0, "succeeded")
    copied = copy.deepcopy(worker0)
    copied["metadata"].update(name="not-yours", uid="uid-not-yours", annotations={run_policy.ANNOTATION: text})
    copied["metadata"].pop("ownerReferences", None)
    stray = copy.deepcopy(worker0)
    stray["metadata"].update(name="j-worker-0-stray", uid="uid-stray", ownerReferences=[
        {"apiVersion": "batch/v1", "kind": "Job", "name": "j-worker", "uid": "a-forged-uid", "controller": True}])
    tenant = copy.deepcopy(workload)
    tenant["metadata"].update(name="j-tenant", uid="uid-tenant")
    workload_status(tenant, "failed")
    theirs = copy.deepcopy(worker0)
    theirs["metadata"].update(name="j-tenant-0", uid="uid-tenant-0", ownerReferences=[controlled_by(tenant)])
    return [copied, stray, tenant, theirs]


def _a_copy_with_another_policy(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A second workload of a name msgen renders for the job, with another run-policy: which
    is the job's is not known, so nothing is decided (the same error on both)."""
    workload = next(o for o in objects if run_policy.ANNOTATION in (o["metadata"].get("annotations") or {}))
    other = copy.deepcopy(workload)
    text = json.loads(other["metadata"]["annotations"][run_policy.ANNOTATION])
    other["metadata"]["annotations"][run_policy.ANNOTATION] = json.dumps({**text, "cleanPodPolicy": "All"})
    other["metadata"]["uid"] += "-copy"
    return [other]


def _names(objects: list[dict[str, Any]] | None) -> list[tuple[str, str]]:
    return [(str(o.get("kind")), str(o["metadata"]["name"])) for o in objects or []]


def _written(writes: Writes, obj: dict[str, Any]) -> str | None:
    """What the controller's memory of its writes says of `obj` (matched by its version)."""
    writes.wrote("delete", obj, "deleted")
    return writes.pending("delete", obj)


def decisions(objects: list[dict[str, Any]], now: datetime) -> dict[str, Any]:
    """Everything decided from `objects` at `now`: the job's workloads and pods, its status,
    the due actions and TTLs, what is published where and the Events, each pod's role,
    index, failure and deletion, each workload's suspension and run, the GitOps marks, the
    counts against backoffLimit, the waiting reasons, and what a follower keeps."""
    out: dict[str, Any] = {"jobs": {k: _names(v) for k, v in controller.group(objects).items()},
                           "keys": [controller.job_key(o) for o in objects]}
    try:
        policy, workloads, pods = watch.select("j", NAMESPACE, objects)
    except (watch.NotFound, run_policy.PolicyError) as exc:
        return {**out, "refused": (type(exc).__name__, str(exc))}
    services = [o for o in objects if o["kind"] == "Service"]
    found = status.aggregate(policy, workloads, pods)
    before = published.read([*workloads, *services])
    shown = published.merged(before, found, "2026-01-01T12:00:00Z")
    events = [{k: v for k, v in publisher.event(o, "j", shown).items() if k not in ("firstTimestamp", "lastTimestamp")}
              for o in workloads]
    witness = Witness(lambda failure: [f"log of {failure.pod}"])
    witness.saw(pods)
    witness.explain(found)
    writes = Writes(lambda: 0.0)
    return {
        **out, "workloads": _names(workloads), "pods": _names(pods), "status": found, "shown": shown,
        "published": before, "due": actions.due(policy, found, workloads, pods, now, services),
        "expiries": actions.ttl_expiries(policy, found, workloads), "events": events,
        "holder": _names([h] if (h := published.holder(policy, workloads)) else []),
        "keeper": _names([k] if (k := published.keeper(policy, workloads, services)) else []),
        "owned": _names(ownership.owned_pods(policy, str(ownership.policy_text(workloads[0])), workloads, objects,
                                             [o for o in objects if o["kind"] == "Pod"])),
        "each pod": [(pod_role(p, policy), pod_index(p), pod_failure(p), restarted(p), killed(p),
                      actions.reapplied(policy, p)) for p in objects if p["kind"] == "Pod"],
        "each workload": [(actions.stopped_by_policy(o), actions.run_generation(o), actions.reapplied(policy, o),
                           actions.volcano_command(o)) for o in workloads],
        "retries": retries.failures_by_role(policy, workloads, pods),
        "past the limit": retries.past_backoff_limit(policy._replace(backoff_limit=0), workloads, pods),
        "progress": watch.progress(found), "waiting": watch.pending_reasons([], pods),
        "witnessed": (witness.logs, witness.deleted, found.failures),
        "written": [_written(writes, o) for o in objects],
    }


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("target", TARGETS)
def test_a_record_decides_as_the_object_a_cluster_returns(target: str, state: str) -> None:
    """On what the controller watches (its workloads and the pods labelled with a job), and
    on every object of the namespace (which also has the Jobs a JobSet makes, and the JobSet
    Trainer builds, whose ownership of the pods `ownership` follows)."""
    everything = job_in(target, state)
    for objects in (watched(everything), everything):
        kept = [records.essentials(o) for o in objects]
        assert len(json.dumps(kept)) < len(json.dumps(objects)) / 3
        for now in TIMES:
            assert decisions(kept, now) == decisions(objects, now), (target, state, now)


def watched(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What `msgen controller`'s watches list (controller.ClusterView): objects msgen manages,
    pods labelled with a job's name, and the Jobs a JobSet made that carry no job name."""
    def labels(o: dict[str, Any]) -> dict[str, str]:
        return o["metadata"].get("labels") or {}

    return [o for o in objects if labels(o).get(MANAGED_BY) == "msgen" and o["kind"] != "Pod"
            or o["kind"] == "Pod" and JOB_NAME in labels(o)
            or (o["apiVersion"], o["kind"]) == ("batch/v1", "Job") and ownership.JOBSET_NAME_LABEL in labels(o)
            and JOB_NAME not in labels(o)]


#: What each state is for the job, on the full objects: the cases must be what they claim.
#: A StatefulSet's pods never end (they restart in place) and it has no verdict of its own:
#: such a job never finishes (targets/statefulset.py).
PHASES = {
    "running": "Running", "pending": "Created", "worker-failed": "Failed", "worker-evicted": "Failed",
    "succeeded": "Succeeded",
    "pod-deleted": "Running", "ended-clean-ttl": "Succeeded", "forged": "Running", "gitops": "Succeeded",
}
STATEFULSET_PHASES = {**PHASES, "worker-failed": "Running", "worker-evicted": "Running", "succeeded": "Running", "ended-clean-ttl": "Running",
                      "gitops": "Running"}


@pytest.mark.parametrize("target", TARGETS)
def test_each_case_is_the_state_it_names(target: str) -> None:
    for state in STATES:
        found = decisions(job_in(target, state), TIMES[-1])
        if state == "disagreeing":
            assert found["refused"][0] == "Disagreeing"
            continue
        expected = (STATEFULSET_PHASES if target == "statefulset" else PHASES)[state]
        if target == "pod" and state == "pod-deleted":
            expected = "Failed"  # nothing re-creates a bare Pod
        assert found["status"].phase == expected, (target, state)
        if state == "forged":
            assert not {"not-yours", "j-worker-0-stray", "j-tenant-0"} & {n for _, n in found["pods"]}
        if state == "ended-clean-ttl" and target in ("pod", "indexed-job"):
            assert actions.TTL in {a.policy for a in found["due"]}, found["due"]
        if state == "gitops" and target == "pod":
            assert found["due"] == []  # Argo CD would create them again


@pytest.mark.parametrize(("target", "state", "where", "key"), [
    ("pod", "pod-deleted", None, "deletionTimestamp"),
    ("volcano", "succeeded", "labels", "training.kubeflow.org/replica-type"),
    ("indexed-job", "ended-clean-ttl", "annotations", actions.STOPPED_AT),
    ("jobset", "running", "labels", "jobset.sigs.k8s.io/jobset-name"),
    ("indexed-job", "forged", None, "ownerReferences"),
])  # fmt: skip
def test_the_comparison_sees_a_field_the_records_would_drop(target: str, state: str, where: str | None,
                                                             key: str) -> None:
    """The check is not blind: a record without a field a decision reads decides otherwise."""
    objects = watched(job_in(target, state))
    kept = [records.essentials(o) for o in objects]
    for record in kept:
        metadata = record["metadata"]
        (metadata if where is None else metadata.get(where) or {}).pop(key, None)
    assert decisions(kept, TIMES[-1]) != decisions(objects, TIMES[-1])
