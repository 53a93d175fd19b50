"""`msgen controller` follows a TrainJob's pods through the JobSet Kubeflow Trainer builds.

Trainer (v2.3) gives that JobSet only the labels of the runtime template's metadata, and the
JobSet controller gives its Jobs only those of their replicated Job's template: msgen renders
its labels there, so the controller's watches (objects managed by msgen, pods labelled with a
job) list the JobSet and its Jobs, and the pods' controller references lead back to the
TrainJob. Each case is what the controller watches (tests/made_by_controllers.py builds the
JobSet as Trainer does), in a state its decisions act on; a JobSet or Job carrying msgen's
labels that the TrainJob does not control still decides nothing.
"""

from __future__ import annotations

import copy
from typing import Any

from msgen.reconcile import controller

from .made_by_controllers import controlled_by, pod_status
from .test_reconcile_records_targets import TIMES, decisions, job_in, watched


def _watched(state: str) -> list[dict[str, Any]]:
    return watched(job_in("trainjob", state))


def test_the_controller_watches_the_jobset_and_jobs_trainer_builds() -> None:
    grouped = controller.group(_watched("running"))
    assert {("JobSet", "j"), ("Job", "j-scheduler-0"), ("Job", "j-node-0")} <= {
        (o["kind"], o["metadata"]["name"]) for o in grouped[("ns", "j")]}


def test_a_running_trainjob_is_published_running_with_its_replicas() -> None:
    found = decisions(_watched("running"), TIMES[0])
    assert found["shown"]["phase"] == "Running"
    assert found["shown"]["replicaStatuses"] == {"Scheduler": {"running": 1}, "Worker": {"running": 3}}
    assert [n for _, n in found["pods"]] == ["j-scheduler-0-0-x0000", "j-node-0-0-x0000", "j-node-0-1-x0001",
                                             "j-node-0-2-x0002"]


def test_a_failed_trainjob_names_its_failed_pod() -> None:
    found = decisions(_watched("worker-failed"), TIMES[-1])
    assert found["status"].phase == "Failed"
    assert [(f.pod, f.container, f.reason) for f in found["status"].failures] == [
        ("j-node-0-1-x0001", "node", "OOMKilled")]


def test_clean_pod_policy_all_deletes_the_finished_pods_of_a_trainjob() -> None:
    found = decisions(_watched("ended-clean-ttl"), TIMES[-1])
    assert [(a.verb, a.name, a.policy) for a in found["due"]] == [("delete", "j-node-0-0-x0000", "cleanPodPolicy")]


def test_a_jobset_with_msgens_labels_the_trainjob_does_not_control_decides_nothing() -> None:
    """Anyone who may create a JobSet or Job can copy msgen's labels: a failed pod under one
    that the TrainJob does not control (no controller, another uid) is not the job's."""
    objects = _watched("running")
    jobset = next(o for o in objects if o["kind"] == "JobSet")
    job = next(o for o in objects if o["kind"] == "Job" and o["metadata"]["name"] == "j-node-0")
    pod = next(o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == "j-node-0-1-x0001")
    forged: list[dict[str, Any]] = []
    for n, owner in enumerate(({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": "j",
                                "uid": "a-forged-uid", "controller": True}, None)):
        theirs = copy.deepcopy(jobset)
        theirs["metadata"].update(name=f"j-{n}", uid=f"uid-theirs-{n}", ownerReferences=[owner] if owner else [])
        their_job = copy.deepcopy(job)
        their_job["metadata"].update(name=f"j-{n}-node-0", uid=f"uid-their-job-{n}",
                                     ownerReferences=[controlled_by(theirs)])
        their_pod = copy.deepcopy(pod)
        their_pod["metadata"].update(name=f"j-{n}-node-0-0-x", uid=f"uid-their-pod-{n}",
                                     ownerReferences=[controlled_by(their_job)])
        pod_status(their_pod, "failed")
        forged += [theirs, their_job, their_pod]
    found = decisions([*objects, *forged], TIMES[-1])
    assert found["status"].phase == "Running" and found["status"].failures == []
    assert not {n for _, n in found["pods"]} & {"j-0-node-0-0-x", "j-1-node-0-0-x"}
    assert found["due"] == []
