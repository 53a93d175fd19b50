"""Tenants' Jobs and pods that claim another job's workload as their controller, against msgen's
controller on a real cluster, on every target the cluster serves.

Nothing in Kubernetes stops anyone who may create a Job from writing an `ownerReference` that
names another job's StatefulSet, Job, JobSet, Volcano Job, TrainJob or bare Pod, with its UID,
as its controller. The controller used to trust any object so claimed, and then its pods: a
tenant's Job labelled as msgen's and as the victim's, whose pod (worker 0) exits 0, made it
publish JobSucceeded for the victim's running job. Now a pod counts for a job only through
the chain its target really builds (`Facts.chain`, tests/test_reconcile_ownership_chains.py):
the forged Job and its pod change no verdict, delete nothing, suspend nothing, complete
nothing, and the job's own worker 0 still ends it (a StatefulSet's pods restart: it never ends).

The controller is deployed as a user deploys it (`overlays/controller-namespaces`, the image
built from this checkout: tests/live_scoped_controller.py), watching namespaces of its own.
Needs MSGEN_TEST_KUBECONFIG; the custom resources' targets are skipped, saying so, on a
cluster that does not serve them.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from .live import IMAGE, get, kubectl, msjob, needs_cluster, pods, script, wait_for
from .live_scoped_controller import Deployment
from .test_live_controller import image  # noqa: F401  (a fixture)
from .test_live_hostile_tenants import SETTLE, acted_on, apply_rendered, create, present, published

pytestmark = needs_cluster
MANAGED_BY, JOB_NAME = "app.kubernetes.io/managed-by", "training.kubeflow.org/job-name"


@pytest.fixture(scope="module")
def deployed(image: str) -> Iterator[Deployment]:  # noqa: F811
    yield from Deployment().running(image)


class Case(NamedTuple):
    """A target: the resources it needs served, the objects a tenant claims (kind as kubectl
    names it, name, apiVersion, kind), the object its status is published on, and whether
    its worker 0 ends the job (a StatefulSet's pods restart in place)."""

    resources: tuple[str, ...]
    claimed: tuple[tuple[str, str, str, str], ...]
    holder: tuple[str, str]
    ends: bool = True
    options: tuple[str, ...] = ()


def cases(job: str) -> dict[str, Case]:
    return {
        "statefulset": Case(("statefulsets.apps",), (("statefulset", f"{job}-worker", "apps/v1", "StatefulSet"),),
                            ("statefulset", f"{job}-worker"), ends=False),
        # rendered for 1.30: no success policy on the Job, so the pods' rule decides (and,
        # on the old code, both Jobs were suspended)
        "indexed-job": Case(("jobs.batch",), (("job", f"{job}-worker", "batch/v1", "Job"),), ("job", f"{job}-worker"),
                            options=("--kube-version", "1.30")),
        "pod": Case(("pods",), (("pod", f"{job}-worker-1", "v1", "Pod"),), ("pod", f"{job}-worker-0")),
        "jobset": Case(("jobsets.jobset.x-k8s.io",), (
            ("jobset.jobset.x-k8s.io", job, "jobset.x-k8s.io/v1alpha2", "JobSet"),
            ("job", f"{job}-worker-0", "batch/v1", "Job")), ("jobset.jobset.x-k8s.io", job)),
        "volcano": Case(("jobs.batch.volcano.sh",), (("job.batch.volcano.sh", job, "batch.volcano.sh/v1alpha1", "Job"),),
                        ("job.batch.volcano.sh", job)),
        "trainjob": Case(("trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org",
                          "jobsets.jobset.x-k8s.io"), (
            ("trainjob.trainer.kubeflow.org", job, "trainer.kubeflow.org/v1alpha1", "TrainJob"),
            ("jobset.jobset.x-k8s.io", job, "jobset.x-k8s.io/v1alpha2", "JobSet")),
            ("trainjob.trainer.kubeflow.org", job)),
    }


def forged_job(name: str, victim: str, owner: dict[str, Any]) -> dict[str, Any]:
    """The tenant's Job: msgen's label and the victim's job name, `owner` as its controller,
    one pod labelled worker 0 that exits 0."""
    labels = {MANAGED_BY: "msgen", JOB_NAME: victim, "training.kubeflow.org/replica-type": "worker",
              "training.kubeflow.org/replica-index": "0"}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": name, "labels": {MANAGED_BY: "msgen", JOB_NAME: victim}, "ownerReferences": [owner]},
        "spec": {"completionMode": "Indexed", "completions": 1, "parallelism": 1, "backoffLimit": 0,
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "c", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                                     "command": ["sh", "-c", "exit 0"]}]}}}}  # fmt: skip


def forged_pod(name: str, victim: str, owner: dict[str, Any]) -> dict[str, Any]:
    """A tenant's pod, worker 0 of the victim by its labels, `owner` as its controller, exit 0."""
    job = forged_job(name, victim, owner)
    template = job["spec"]["template"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {**template["metadata"], "name": name,
                                                             "ownerReferences": [owner]}, "spec": template["spec"]}


def pod_succeeded(namespace: str, pod: str) -> bool:
    """Whether the tenant's pod `pod` ran to its end with status 0."""
    return bool((get("pod", namespace, pod).get("status") or {}).get("phase") == "Succeeded")


def succeeded(namespace: str, job: str) -> bool:
    """Whether the tenant's Job `job` completed (its pod, worker 0, exited 0)."""
    conditions = (get("job", namespace, job).get("status") or {}).get("conditions") or []
    return any(c["type"] == "Complete" and c["status"] == "True" for c in conditions)


def victims(namespace: str, job: str) -> set[str]:
    return {p["metadata"]["name"] for p in pods(namespace, f"{JOB_NAME}={job}")
            if not (p["metadata"].get("ownerReferences") or [{}])[0].get("name", "").startswith("tenant")
            and not p["metadata"]["name"].startswith("tenant")}


@pytest.mark.parametrize("target", ["statefulset", "indexed-job", "pod", "jobset", "volcano", "trainjob"])
def test_a_tenants_job_claiming_a_jobs_workload_changes_nothing_and_the_job_still_ends(
        deployed: Deployment, tmp_path: Path, target: str) -> None:
    """For each object of the job's chain a tenant claims: a Job labelled managed-by msgen and
    with the job's name, controlled (by UID) by that object, whose pod, worker 0, exits 0 (and,
    on a StatefulSet and a Volcano Job, such a pod claiming the workload directly). After
    they end: no policy action, no verdict published, every pod of the job still there, no
    Job suspended; then, once the tenant's Jobs are gone, the job's own worker 0 ends it."""
    job = f"f{target.replace('-', '')}"
    case = cases(job)[target]
    missing = set(case.resources) - set(kubectl("api-resources", "-o", "name").stdout.split()) - {"pods", "jobs.batch"}
    if missing:
        pytest.skip(f"the cluster does not serve {', '.join(sorted(missing))}")
    ns = deployed.watched[0]
    apply_rendered(tmp_path, ns, job, msjob(job, script({0: (90, 0)}, default=(900, 0))), "--target", target,
                   *case.options)
    wait_for("the job's pods to run", lambda: len([p for p in pods(ns, f"{JOB_NAME}={job}")
                                                   if (p.get("status") or {}).get("phase") == "Running"]) >= 3,
             timeout=300)
    before = victims(ns, job)
    forged_jobs, forged_pods = [], []
    for n, (kind, name, api_version, owner_kind) in enumerate(case.claimed):
        owned = get(kind, ns, name)
        owner = {"apiVersion": api_version, "kind": owner_kind, "name": name, "uid": owned["metadata"]["uid"],
                 "controller": True}
        create(ns, forged_job(f"tenant-{job}-{n}", job, owner))
        forged_jobs.append(f"tenant-{job}-{n}")
        if target in ("statefulset", "volcano"):
            create(ns, forged_pod(f"tenant-{job}-pod", job, owner))
            forged_pods.append(f"tenant-{job}-pod")
    for name in forged_jobs:
        wait_for(f"the tenant's Job {name} to succeed", functools.partial(succeeded, ns, name), timeout=300)
    for name in forged_pods:
        wait_for(f"the tenant's pod {name} to succeed", functools.partial(pod_succeeded, ns, name))
    time.sleep(SETTLE)
    assert acted_on(deployed, ns, job) == [], "the forgery made the controller act"
    assert published(ns, *case.holder) in ("", "Created", "Running")
    assert present(ns) >= before, before - present(ns)
    for selector in (f"{JOB_NAME}={job}", f"jobset.sigs.k8s.io/jobset-name={job}"):
        for each in get("jobs", ns, selector=selector) or []:
            assert not each["spec"].get("suspend"), f"Job {each['metadata']['name']} suspended"
    if target == "volcano":
        assert get("commands.bus.volcano.sh", ns) == [], "a Volcano Command was sent"
    if not case.ends:
        wait_for("the job's status published", lambda: published(ns, *case.holder) == "Running", timeout=120)
        return
    # The tenant leaves: a Job claiming a JobSet stops the JobSet controller (v0.12.0) from
    # reconciling it ("invalid value for label jobset.sigs.k8s.io/restart-attempt"), so the
    # JobSet, and the TrainJob above it, could not end while it is there.
    for name in forged_jobs:
        kubectl("delete", "job", name, "-n", ns, "--cascade=foreground", "--wait=true", timeout=300)
    wait_for("the job's own worker 0 to end it", lambda: published(ns, *case.holder) == "Succeeded", timeout=420)


def test_the_admission_policies_never_refused_the_controller(deployed: Deployment) -> None:
    """Last in the module: every write the controller made above was admitted."""
    said = deployed.logs()
    assert not any(word in said for word in ("forbidden", "denied", "ValidatingAdmissionPolicy")), said
