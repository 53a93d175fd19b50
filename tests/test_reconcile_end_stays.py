"""A job's end, once published, is what the job reads as for the rest of its run, whatever is
left of its objects and whoever reads them.

On a real API server (bench/controller_scale.py, 1,000 jobs, the API server restarted) a
bare-Pod job's TTL deleted worker 0's pod, which held the published end, and its other pods,
which were still terminating (their phase still Running); deleting a Service of the job
failed (the connection reset by the restart). The next passes saw Running pods, no record,
and a Service to publish on: `JobRunning` was announced again, for a run that had ended.
With cleanPodPolicy None on indexed-job, Kubernetes' TTL deleted the finished Worker Job that
held the end, and the Scheduler Job left running made the job read Running again.

Against the API server in process (tests/fake_api.py), with pods that stay terminating after
their deletion until their kubelet is done, the target's own controllers' TTLs, every
deletion msgen makes failing once (a pass stops at a failed request, as the controller's
does), and every pass made by a new replica from a new list (a restart, a leader killed).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.model.run_policy import JobPolicy, RoleRule
from msgen.reconcile import actions, controller, kube, published, records, status, watch
from msgen.reconcile.writes import Writes
from msgen.targets import NAMES as TARGETS

from .conftest import msgen
from .controller_clock import later
from .fake_api import CUSTOM, SERVED, Cluster
from .fake_api_client import job_objects, served
from .fake_kubelet import end, msjob, place, start
from .fake_kubelet import rendered as rendered_in
from .made_by_controllers import NAMESPACE, made, pod_status, pods_by_replica, rendered, workload_status

#: Spread over the Pythons CI runs: its time is many passes over an API server in process; the reconcile logic's own tests run on every Python (tests/python_share.py).
pytestmark = pytest.mark.spread

pytest.importorskip("lightkube")

TTL = 30
ENDS = {"Succeeded": "JobSucceeded", "Failed": "JobFailed"}
#: Passes enough for every deletion to fail once and be made again, and the pods to go.
PASSES = 24


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Cluster, Any, Path]]:
    """The API server, a client, and the kubeconfig `msgen status` reads it with."""
    with served(tmp_path, NAMESPACE, Cluster({**SERVED, **CUSTOM}, graceful_pods=True)) as (cluster, client):
        yield cluster, client, tmp_path / "kubeconfig"


def of_the_job(cluster: Cluster) -> list[dict[str, Any]]:
    """Every object of the job, as a replica's watches keep them (records)."""
    return [records.essentials(o) for collection in cluster.served for o in cluster.listing(collection, NAMESPACE, "")[0]
            if controller.job_key(o) == (NAMESPACE, "j")]


def watched(cluster: Cluster) -> list[dict[str, Any]] | None:
    """The job's objects as the controller takes them, or None once nothing of it is left
    that it follows (no workload msgen rendered)."""
    return controller.group(of_the_job(cluster)).get((NAMESPACE, "j"))


def announced(said: list[str]) -> list[str]:
    return [line.rsplit(": ", 1)[1] for line in said if line.startswith(f"{NAMESPACE}/j: ") and ": policy: " not in line
            and "skipped" not in line]


def failing_once(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every deletion msgen asks for fails the first time (no answer: the API server being
    restarted), and goes the next; the names it was asked for, in order."""
    delete, asked = kube.delete, []

    def once(client: Any, obj: dict[str, Any], **options: Any) -> None:
        name = f"{obj['kind']} {obj['metadata']['name']}"
        asked.append(name)
        if asked.count(name) == 1:
            raise kube.KubeError(f"deleting {name}: no answer: Connection reset by peer (ConnectError)")
        delete(client, obj, **options)

    monkeypatch.setattr(kube, "delete", once)
    return asked


def reads(config: Path) -> str | None:
    """The phase `msgen status` reads the job as now (None: nothing of it is left to read)."""
    run = msgen("status", "j", "-n", NAMESPACE, "-o", "json", "--kubeconfig", str(config))
    if run.exit_code != 0:
        assert "no workload of job 'j'" in run.stderr, run.stderr
        return None
    return str(json.loads(run.stdout)["j"]["phase"])


def after_the_end(cluster: Cluster, client: Any, config: Path, phase: str, said: list[str],
                  world: Callable[[], None] = lambda: None) -> list[str]:
    """Passes, each by a new replica on a new list, until nothing of the job is left to
    follow or nothing changes any more; after each, the target's controllers act (`world`)
    and the kubelets end the pods that were already terminating before it. Each pass must
    show the job's end, and so must what a reader of the cluster sees; the phases shown,
    pass by pass."""
    shown: list[str] = []
    version: int | None = None
    for _ in range(PASSES):
        objects = watched(cluster)
        if objects is None or version == cluster.version:
            break
        version = cluster.version
        terminating = [o["metadata"]["name"] for o in objects
                       if o["kind"] == "Pod" and o["metadata"].get("deletionTimestamp")]
        try:
            found, _ = controller.reconcile_job(client, NAMESPACE, "j", objects, said.append, writes=Writes())
            shown.append(found.phase)
        except kube.KubeError as exc:
            assert "Connection reset" in str(exc), exc
            version = None  # the next pass makes that request again
        except watch.NotFound:
            shown.append("(no workload)")
        world()
        for name in terminating:
            cluster.delete("v1", "pods", NAMESPACE, name, force=True)
        assert reads(config) in (phase, None), said
        # What is left of the job holds the end, or nothing (a record of a former holder
        # may say Running: the furthest phase is the one read).
        assert (published.read(of_the_job(cluster)) or {"phase": phase})["phase"] == phase, said
    return shown


# --- the bare-Pod job of the incident -------------------------------------------------------------


@pytest.mark.parametrize("seen", ["late", "in time"])
@pytest.mark.parametrize(("phase", "ends"), [("Succeeded", {"j-worker-0": 0}), ("Failed", {"j-worker-1": 1})])
@pytest.mark.parametrize("clean", ["None", "Running"])
def test_a_bare_pod_jobs_end_stays_through_a_ttl_whose_deletions_fail(
        api: tuple[Cluster, Any, Path], monkeypatch: pytest.MonkeyPatch, seen: str, phase: str, ends: dict[str, int],
        clean: str) -> None:
    """`late`: the TTL had passed when the controller first saw the end (the API server was
    away), as in the incident; `in time`: the end published first, its TTL due later. Every
    object of the job is deleted in the end, worker 0's holder last; nothing is announced
    twice, nothing but the end after it."""
    cluster, client, config = api
    pods = place(cluster, rendered_in(msjob("j", 3, clean=clean, ttl=TTL), NAMESPACE, "pod"))
    for pod in pods:
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    said: list[str] = []
    controller.reconcile_job(client, NAMESPACE, "j", watched(cluster) or [], said.append, writes=Writes())
    for name, code in ends.items():
        end(cluster, NAMESPACE, name, code)
    if seen == "in time":
        found, _ = controller.reconcile_job(client, NAMESPACE, "j", watched(cluster) or [], said.append,
                                            writes=Writes())
        assert found.phase == phase and announced(said)[-1] == phase, said
    later(monkeypatch, 2 * TTL)
    asked = failing_once(monkeypatch)
    shown = after_the_end(cluster, client, config, phase, said)
    assert shown and set(shown) == {phase}, (shown, said)
    assert announced(said) == ["Running", phase], said
    left = [(o["kind"], o["metadata"]["name"]) for o in job_objects(cluster, NAMESPACE, "j")]
    assert watched(cluster) is None and left == [], ("the TTL deletes every object of the job", left, said)
    # The end's keeper goes last: worker 0's pod, or worker 1's once cleanPodPolicy deleted
    # worker 0's running pod at the end (the end moved to it first).
    moved = (phase, clean, seen) == ("Failed", "Running", "in time")
    assert asked[-1] == ("Pod j-worker-1" if moved else "Pod j-worker-0"), asked
    events = [w.body["reason"] for w in cluster.writes if w.kind == "Event" and w.method == "POST" and w.result]
    assert events == ["JobRunning", ENDS[phase]], said


# --- every target ---------------------------------------------------------------------------------


def _the_job(cluster: Cluster, target: str, clean: str) -> list[dict[str, Any]]:
    """The job rendered for `target` (a Scheduler and 3 Workers, ttlSecondsAfterFinished),
    with what its controllers make of it, running; created in the cluster."""
    objects = rendered(target, clean=clean, ttl=TTL)
    children = made(target, objects)
    for pod in pods_by_replica([*objects, *children]).values():
        pod_status(pod, "running")
    for obj in [*objects, *children]:
        workload_status(obj, None)
        cluster.put(obj)
    return [*objects, *children]


def _ends(cluster: Cluster, target: str, everything: list[dict[str, Any]], phase: str) -> None:
    """The job ends, an hour ago: worker 0 succeeded or worker 1 failed (a StatefulSet's pod
    restarted in place after it), and each workload says so as its controller does."""
    restarts = target == "statefulset"
    key, how = (("worker", 0), "succeeded") if phase == "Succeeded" else (("worker", 1), "failed")
    pod = pods_by_replica(everything)[key]
    pod_status(pod, f"restarted-{how}" if restarts else how)
    for obj in everything:
        if obj["kind"] != "Pod":
            workload_status(obj, "ended" if phase == "Succeeded" else "failed")
    for obj in [pod, *(o for o in everything if o["kind"] != "Pod" and "status" in o)]:
        live = cluster.get(obj["apiVersion"], _plural(cluster, obj), NAMESPACE, obj["metadata"]["name"])
        if live is not None:
            cluster.put({**live, "status": obj["status"]})


def _plural(cluster: Cluster, obj: dict[str, Any]) -> str:
    return next(p for (v, p), k in cluster.served.items() if v == obj["apiVersion"] and k == obj["kind"])


def _their_ttl(cluster: Cluster, target: str) -> Callable[[], None]:
    """What the target's own controllers do once the job's TTL passed: Kubernetes' TTL
    controller deletes the finished Jobs (indexed-job), JobSet's the finished JobSet (the one
    Trainer made for a TrainJob too), Volcano's the finished Volcano Job; what they own goes
    with them, the running pods gracefully."""
    def act() -> None:
        for collection in cluster.served:
            for obj in cluster.listing(collection, NAMESPACE, "")[0]:
                conditions = {c["type"] for c in (obj.get("status") or {}).get("conditions") or []
                              if c.get("status") == "True"}
                finished = (obj["kind"] == "Job" and obj["apiVersion"] == "batch/v1" and target == "indexed-job"
                            and conditions & {"Complete", "Failed"})
                finished = finished or (obj["kind"] == "JobSet" and conditions & {"Completed", "Failed"})
                finished = finished or (obj["apiVersion"].startswith("batch.volcano.sh/") and
                                        ((obj.get("status") or {}).get("state") or {}).get("phase")
                                        in ("Completed", "Failed", "Terminated", "Aborted"))
                if finished:
                    cluster.delete(collection[0], collection[1], NAMESPACE, obj["metadata"]["name"])
    return act


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
@pytest.mark.parametrize("clean", ["None", "Running"])
@pytest.mark.parametrize("target", TARGETS)
def test_on_every_target_an_end_is_never_followed_by_an_earlier_phase(
        api: tuple[Cluster, Any, Path], monkeypatch: pytest.MonkeyPatch, target: str, clean: str, phase: str) -> None:
    cluster, client, config = api
    everything = _the_job(cluster, target, clean)
    said: list[str] = []
    found, _ = controller.reconcile_job(client, NAMESPACE, "j", watched(cluster) or [], said.append, writes=Writes())
    assert found.phase == "Running", said
    _ends(cluster, target, everything, phase)
    failing_once(monkeypatch)
    if target == "statefulset":
        phase = "Running"  # a StatefulSet never finishes: its pods restart in place, and no end is read
    shown = after_the_end(cluster, client, config, phase, said, _their_ttl(cluster, target))
    assert shown and set(shown) <= {phase, "(no workload)"} and shown[0] == phase, (shown, said)
    assert announced(said) == ["Running", phase][:1 if target == "statefulset" else 2], said
    if target == "pod":
        assert job_objects(cluster, NAMESPACE, "j") == [], "msgen's TTL deletes every object of a bare-Pod job"


def test_status_watch_of_a_job_whose_end_its_objects_no_longer_show_returns_the_end(
        api: tuple[Cluster, Any, Path]) -> None:
    """Kubernetes' TTL deleted the finished Worker Job of an indexed-job with cleanPodPolicy
    None: its Scheduler Job still runs. `msgen status --watch` (and `apply --wait`) follow
    until the job ends: it has, as published, and they say so at once."""
    cluster, client, config = api
    everything = _the_job(cluster, "indexed-job", "None")
    said: list[str] = []
    controller.reconcile_job(client, NAMESPACE, "j", watched(cluster) or [], said.append, writes=Writes())
    _ends(cluster, "indexed-job", everything, "Failed")
    controller.reconcile_job(client, NAMESPACE, "j", watched(cluster) or [], said.append, writes=Writes())
    _their_ttl(cluster, "indexed-job")()
    assert {o["metadata"]["name"] for o in of_the_job(cluster) if o["kind"] == "Job"} == {"j-scheduler"}
    run = msgen("status", "j", "-n", NAMESPACE, "--watch", "--timeout", "20s", "--kubeconfig", str(config))
    assert run.exit_code == 1 and "j: Failed after" in run.stdout, (run.stdout, run.stderr)
    assert announced(said) == ["Running", "Failed"], said


# --- another run ----------------------------------------------------------------------------------


def test_a_job_applied_again_is_another_run_not_the_end_a_service_kept(api: tuple[Cluster, Any, Path]) -> None:
    """cleanPodPolicy All deleted a bare-Pod job's pods at its end, which a Service keeps;
    applied again, the job runs again: its new pods must read Running (and be announced so,
    and their own end), not the end of the run before."""
    cluster, client, config = api
    objects = rendered_in(msjob("j", 2, clean="All"), NAMESPACE, "pod")
    for pod in place(cluster, copy.deepcopy(objects)):
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    said: list[str] = []
    for _ in range(3):
        controller.reconcile_job(client, NAMESPACE, "j", watched(cluster) or [], said.append, writes=Writes())
        end(cluster, NAMESPACE, "j-worker-0", 0)
    cluster.finish_terminating()
    assert watched(cluster) is None and reads(config) == "Succeeded"
    time.sleep(1.1)  # the new run's pods are created a second later at least (creationTimestamp's unit)
    for pod in place(cluster, [o for o in copy.deepcopy(objects) if o["kind"] == "Pod"]):
        start(cluster, NAMESPACE, pod["metadata"]["name"])
    found, _ = controller.reconcile_job(client, NAMESPACE, "j", watched(cluster) or [], said.append, writes=Writes())
    assert found.phase == "Running" and reads(config) == "Running", said
    end(cluster, NAMESPACE, "j-worker-0", 1)
    found, _ = controller.reconcile_job(client, NAMESPACE, "j", watched(cluster) or [], said.append, writes=Writes())
    assert found.phase == "Failed", said
    assert announced(said) == ["Running", "Succeeded", "Running", "Failed"], said


# --- the decisions ------------------------------------------------------------------------------


def _pod(role: str, index: int, phase: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"j-{role.lower()}-{index}", "namespace": "ns", "uid": f"u-{role}-{index}",
                         "creationTimestamp": "2026-01-01T10:00:00Z", **metadata,
                         "labels": {"training.kubeflow.org/replica-type": role.lower(),
                                    "training.kubeflow.org/replica-index": str(index)}},
            "status": {"phase": phase}}


def test_the_object_that_keeps_a_jobs_end_is_deleted_last() -> None:
    rule = JobPolicy(job="j", target="pod", roles={"Worker": RoleRule(2, "Never")}, ttl_seconds_after_finished=TTL)
    ended = status.JobStatus(job="j", phase="Succeeded", completion_time="2026-01-01T10:00:00Z")
    now = actions._parse_time("2026-01-01T11:00:00Z")
    assert now is not None
    holder, other = _pod("Worker", 0, "Succeeded"), _pod("Worker", 1, "Running")
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "j", "namespace": "ns"}}

    def deleted(*objects: dict[str, Any]) -> list[str]:
        pods = [o for o in objects if o["kind"] == "Pod"]
        return [a.name for a in actions.due(rule, ended, pods, pods, now, [o for o in objects if o["kind"] == "Service"])]

    assert deleted(holder, other, service) == ["j-worker-1", "j"]
    terminating = {**other, "metadata": {**other["metadata"], "deletionTimestamp": "2026-01-01T11:00:00Z"}}
    assert deleted(holder, terminating) == []  # until the rest is gone, not only being deleted
    assert deleted(holder) == ["j-worker-0"]
    # What stays has a keeper of its own (the end moves there first): nothing waits.
    clean = rule._replace(ttl_seconds_after_finished=None, clean_pod_policy="All")
    assert [a.name for a in actions.due(clean, ended, [holder, other], [holder, other], now, [service])] == [
        "j-worker-0", "j-worker-1"]
    # Alone, the holder may not decide the job (every worker must succeed): its published end does.
    rule = rule._replace(success_policy="AllWorkers")
    alone = status.aggregate(rule, [holder], [holder])
    assert not alone.finished
    assert actions.due(rule, alone, [holder], [holder], now, []) == []
    assert [a.name for a in actions.due(rule, alone, [holder], [holder], now, [], ended)] == ["j-worker-0"]


def test_an_end_is_read_for_its_run_only() -> None:
    record = {"phase": "Succeeded", published.RUN_CREATED: "2026-01-01T10:00:00Z"}
    service = {"kind": "Service", "metadata": {"annotations": {published.ANNOTATION: json.dumps(record)}}}
    same = _pod("Worker", 0, "Running")
    again = _pod("Worker", 0, "Running", creationTimestamp="2026-01-01T10:00:01Z")
    assert published.read([service], [same]) == record
    assert published.read([service], [same, again]) is None
    assert published.read([service]) == record  # nothing left of any run: the last end
    running = {"phase": "Running"}
    assert published.read([service, {"metadata": {"annotations": {published.ANNOTATION: json.dumps(running)}}}],
                          [again]) == running
    # An end written before runs were named, or a mark that is no time, is read as before.
    for mark in (None, "yesterday", 7, "2026-01-01T10:00:00", "9" * 100):
        hostile = {**record, published.RUN_CREATED: mark}
        kept = {"metadata": {"annotations": {published.ANNOTATION: json.dumps(hostile)}}}
        assert published.read([kept], [again]) == hostile, mark
    assert published.run_created([same, again, {"metadata": {}}]) == "2026-01-01T10:00:01Z"
