"""The controller's metrics, work queue and memory of its own writes, with plain data; and
/metrics served on its port, read back with Prometheus' own text parser."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any
from urllib.request import urlopen

import pytest

from msgen.reconcile import actions, informer, metrics, status, workqueue
from msgen.reconcile.writes import KEEP_SECONDS, Writes
from msgen.model.run_policy import JobPolicy, RoleRule

from .fake_clock import Clock

#: No API server: the code under test never reaches one (a typed stand-in for lightkube's Client).
NO_CLIENT: Any = None

pytest.importorskip("prometheus_client")

#: The families an operator of a controller-runtime based controller looks for, and msgen's own.
FAMILIES = {
    "controller_runtime_reconcile": "counter", "controller_runtime_reconcile_errors": "counter",
    "controller_runtime_reconcile_time_seconds": "histogram", "controller_runtime_active_workers": "gauge",
    "controller_runtime_max_concurrent_reconciles": "gauge", "workqueue_depth": "gauge",
    "workqueue_adds": "counter", "workqueue_queue_duration_seconds": "histogram",
    "workqueue_work_duration_seconds": "histogram", "workqueue_retries": "counter",
    "workqueue_unfinished_work_seconds": "gauge", "workqueue_longest_running_processor_seconds": "gauge",
    "leader_election_master_status": "gauge", "rest_client_requests": "counter",
    "rest_client_request_duration_seconds": "histogram",
    "msgen_policy_actions": "counter", "msgen_policy_action_delay_seconds": "histogram",
    "msgen_watch_lists": "counter", "msgen_watch_events": "counter", "msgen_watch_restarts": "counter",
    "msgen_watch_errors": "counter", "msgen_jobs": "gauge", "msgen_build_info": "gauge",
    "process_resident_memory_bytes": "gauge", "process_cpu_seconds": "counter",
}  # fmt: skip


def sample(found: dict[str, Any], family: str, suffix: str = "", **labels: str) -> float:
    for each in found[family].samples:
        if each.name == family + suffix and all(each.labels.get(k) == v for k, v in labels.items()):
            return float(each.value)
    raise AssertionError(f"no sample {family}{suffix} {labels}")


def test_every_family_is_exposed_with_its_type_and_counts_what_it_was_told() -> None:
    recorded = metrics.Metrics("9.9.9", "my-lease")
    recorded.reconciled("success", 0.02)
    recorded.reconciled("error", 0.5)
    recorded.action("cleanPodPolicy", "delete", "Pod", True, 0.3)
    recorded.action("cleanPodPolicy", "delete", "Pod", False, 0.3)
    recorded.request("PATCH", 200, 0.3)
    recorded.request("GET", 200)  # a watch's answer: counted, not timed
    recorded.watch_event("pods", "MODIFIED")
    recorded.watch_failed("pods", 410)
    recorded.leading(True)
    recorded.jobs({"Running": 3, "Succeeded": 1})
    text, content_type = recorded.exposition()
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    found = metrics.families(text.decode())
    assert {name: found[name].type for name in FAMILIES if name in found} == FAMILIES
    assert sample(found, "controller_runtime_reconcile", "_total", controller="msgen", result="error") == 1
    assert sample(found, "controller_runtime_reconcile_errors", "_total", controller="msgen") == 1
    assert sample(found, "controller_runtime_reconcile_time_seconds", "_count", controller="msgen") == 2
    assert sample(found, "msgen_policy_actions", "_total", policy="cleanPodPolicy", action="delete", kind="Pod",
                  result="success") == 1
    # A failed action has no delay: it was not done.
    assert sample(found, "msgen_policy_action_delay_seconds", "_count", policy="cleanPodPolicy") == 1
    assert sample(found, "msgen_policy_action_delay_seconds", "_bucket", policy="cleanPodPolicy", le="0.35") == 1
    assert sample(found, "rest_client_requests", "_total", code="200", method="PATCH") == 1
    assert sample(found, "rest_client_request_duration_seconds", "_bucket", verb="PATCH", le="0.25") == 0
    assert sample(found, "rest_client_request_duration_seconds", "_bucket", verb="PATCH", le="0.5") == 1
    with pytest.raises(AssertionError):
        sample(found, "rest_client_request_duration_seconds", "_count", verb="GET")
    assert sample(found, "msgen_watch_errors", "_total", resource="pods", code="410") == 1
    assert sample(found, "leader_election_master_status", name="my-lease") == 1
    assert [sample(found, "msgen_jobs", phase=p) for p in metrics.PHASES] == [0, 3, 1, 0]
    assert sample(found, "msgen_build_info", version="9.9.9") == 1


def test_no_label_names_a_job_so_the_series_stay_few_at_any_number_of_jobs() -> None:
    def series(jobs: int) -> int:
        recorded = metrics.Metrics("1")
        for n in range(jobs):
            recorded.reconciled("success", 0.01)
            recorded.action("cleanPodPolicy", "delete", "Pod", True, 0.1)
            recorded.action("verdict", "publish", "Job", True, 0.1)
            recorded.watch_event("pods", "MODIFIED")
            recorded.queue_added()
            recorded.jobs({"Succeeded": n})
        return len(recorded.exposition()[0].decode().splitlines())

    assert series(10) == series(1000)


def test_the_resource_label_is_the_resource_as_kubernetes_names_it() -> None:
    assert informer.resource_of("v1", "Pod") == "pods"
    assert informer.resource_of("batch/v1", "Job") == "jobs.batch"
    assert informer.resource_of("batch.volcano.sh/v1alpha1", "Job") == "jobs.batch.volcano.sh"


def test_the_metrics_port_serves_metrics_that_prometheus_parses() -> None:
    from msgen.reconcile.probes import serve_metrics

    recorded = metrics.Metrics("1.2.3")
    recorded.reconciled("success", 0.1)
    server = serve_metrics(recorded.exposition, 0, "127.0.0.1")
    try:
        answer = urlopen(f"http://127.0.0.1:{server.server_address[1]}/metrics", timeout=10)
        assert answer.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        found = metrics.families(answer.read().decode())
        assert sample(found, "controller_runtime_reconcile", "_total", result="success") == 1
        assert sample(found, "process_resident_memory_bytes") > 0
    finally:
        server.shutdown()


def test_a_job_queued_many_times_is_taken_once_with_its_first_time() -> None:
    clock = Clock()
    woken: list[int] = []
    queue = workqueue.WorkQueue(wake=lambda: woken.append(1), clock=clock)
    queue.add(("ns", "a"))
    clock.now = 101
    queue.add_all([("ns", "a"), ("ns", "b")])
    assert queue.depth() == 2 and len(woken) == 2
    assert queue.take() == [(("ns", "a"), 100.0, False), (("ns", "b"), 101.0, False)]
    assert queue.take() == [] and queue.depth() == 0


def test_changes_go_before_a_resyncs_jobs_and_a_long_pass_gives_the_rest_back() -> None:
    clock = Clock()
    queue = workqueue.WorkQueue(clock=clock)
    queue.add_all([("ns", "a"), ("ns", "b"), ("ns", "c")], background=True)
    clock.now = 105
    queue.add(("ns", "z"))  # a pod of z ended
    queue.add(("ns", "b"))  # b changed too: no longer only the resync's, and timed from the change
    taken = queue.take()
    assert taken == [(("ns", "b"), 105.0, False), (("ns", "z"), 105.0, False), (("ns", "a"), 100.0, True),
                     (("ns", "c"), 100.0, True)]
    clock.now = 106
    queue.add(("ns", "y"))
    queue.give_back(taken[2:])  # the pass reached b and z only
    assert queue.take() == [(("ns", "y"), 106.0, False), (("ns", "a"), 100.0, True), (("ns", "c"), 100.0, True)]


def test_a_job_queued_for_later_is_ready_then_and_a_failing_job_backs_off() -> None:
    clock = Clock()
    queue = workqueue.WorkQueue(clock=clock)
    queue.add_after(("ns", "ttl"), 30)
    assert queue.take() == [] and queue.next_in() == 30
    clock.now += 30
    assert queue.take() == [(("ns", "ttl"), 130.0, workqueue.URGENT)]
    assert [queue.retry(("ns", "bad")) for _ in range(3)] == [0.5, 1.0, 2.0]
    queue.forget(("ns", "bad"))
    assert queue.retry(("ns", "bad")) == 0.5
    queue.drop([("ns", "bad")])
    assert queue.next_in() is None
    assert [workqueue.retry_delay(n) for n in (1, 2, 8, 20)] == [0.5, 1.0, 60.0, 60.0]


def pod(name: str, version: str, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns",
                                                            "resourceVersion": version, **metadata}}


def test_a_write_is_taken_as_done_until_the_watch_brings_it_back() -> None:
    clock = Clock()
    writes = Writes(clock)
    writes.wrote("delete", pod("p", "5"))
    assert writes.pending("delete", pod("p", "5")) == ""  # the copy is behind: done already
    assert writes.pending("suspend", pod("p", "5")) is None  # another verb
    assert writes.pending("delete", pod("p", "6", deletionTimestamp="2026-01-01T00:00:00Z")) is None  # caught up
    assert len(writes) == 0
    writes.wrote("status", pod("p", "7"), '{"phase":"Running"}')
    clock.now += KEEP_SECONDS + 1
    writes.expire()
    assert len(writes) == 0


def test_the_informer_keeps_objects_without_managed_fields_and_tells_what_a_relist_changed() -> None:
    heavy = pod("a", "1", managedFields=[{"manager": "kubectl"}], labels={"x": "y"})
    assert informer.trimmed(heavy)["metadata"] == {"name": "a", "namespace": "ns", "resourceVersion": "1",
                                                   "labels": {"x": "y"}}
    assert "managedFields" in heavy["metadata"]  # not changed in place
    before = informer.relisted([pod("a", "1"), pod("b", "2"), pod("c", "3")], "3")
    after = informer.relisted([pod("a", "1"), pod("b", "9"), pod("d", "9")], "9")
    assert sorted((o["metadata"]["name"], gone) for o, gone in informer.relist_changes(before, after)) == [
        ("b", False), ("c", True), ("d", False)]


def test_the_view_keeps_objects_by_job_and_queues_each_change() -> None:
    """A pass looks up the jobs it takes; only jobs with a workload msgen rendered count."""
    from msgen.reconcile.controller import ClusterView

    def labelled(name: str, job: str, **annotations: str) -> dict[str, Any]:
        return pod(name, "1", labels={"training.kubeflow.org/job-name": job}, annotations=annotations)

    view = ClusterView(NO_CLIENT, [])  # no namespace: no watch starts; changes are told by hand
    ours = labelled("a-worker-0", "a", **{"msgen/run-policy": "{}"})
    view._changed(ours, False)
    view._changed(labelled("a-scheduler-0", "a"), False)
    view._changed(labelled("b-worker-0", "b"), False)  # not rendered by msgen
    assert [k for k, _, _ in view.queue.take()] == [("ns", "a"), ("ns", "b")]
    assert {k: sorted(o["metadata"]["name"] for o in objs) for k, objs in view.jobs().items()} == {
        ("ns", "a"): ["a-scheduler-0", "a-worker-0"]}
    view._changed(ours, True)
    assert view.jobs() == {} and view.jobs([("ns", "a")]) == {}


def test_ttl_expiries_say_when_to_come_back() -> None:
    policy = JobPolicy(job="j", target="pod", roles={"Worker": RoleRule(1, "Never")}, ttl_seconds_after_finished=60)
    ended = status.JobStatus(job="j", phase="Succeeded", completion_time="2026-01-01T00:00:00Z")
    assert actions.ttl_expiries(policy, ended, []) == [datetime(2026, 1, 1, 0, 1, tzinfo=timezone.utc)]
    running = status.JobStatus(job="j", phase="Running")
    assert actions.ttl_expiries(policy, running, []) == []
    indexed = JobPolicy(job="j", target="indexed-job", roles={"Worker": RoleRule(1, "Never")},
                        ttl_seconds_after_finished=10)
    stopped = {"apiVersion": "batch/v1", "kind": "Job", "spec": {"suspend": True},
               "metadata": {"name": "j-worker", "annotations": {actions.STOPPED_AT: "2026-01-01T00:00:05Z"}}}
    assert actions.ttl_expiries(indexed, running, [stopped]) == [datetime(2026, 1, 1, 0, 0, 15, tzinfo=timezone.utc)]


@pytest.mark.parametrize("target", ["pod", "indexed-job"])
def test_the_controllers_trimmed_copies_decide_as_the_full_objects(target: str) -> None:
    """`informer.essentials` drops pod specs and pod templates' specs: every decision
    (status, actions, the published status's holder) must come out the same on what is left."""
    from msgen.reconcile import published, watch

    from .fake_kubelet import msjob, rendered

    objects = rendered(msjob("j", 3, ttl=0), "ns", target)
    if target == "indexed-job":  # the Job controller's pods, from the templates, owned by their Job
        for o in objects:
            o["metadata"].setdefault("uid", f"uid-{o['kind']}-{o['metadata']['name']}")
        objects += [{"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"{o['metadata']['name']}-{i}-x{i:04d}", "namespace": "ns",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": o["metadata"]["name"],
                                 "uid": o["metadata"]["uid"], "controller": True}],
            "labels": {**o["spec"]["template"]["metadata"]["labels"], "batch.kubernetes.io/job-completion-index": str(i),
                       "batch.kubernetes.io/controller-uid": o["metadata"]["uid"]}},
            "spec": o["spec"]["template"]["spec"]} for o in list(objects) if o["kind"] == "Job"
            for i in range(o["spec"]["completions"])]
    for n, obj in enumerate(o for o in objects if o["kind"] == "Pod"):
        obj["status"] = {"phase": "Succeeded" if n == 1 else "Running", "startTime": "2026-01-01T00:00:00Z",
                         "containerStatuses": [{"name": "mindspore", "restartCount": 0, "state": {
                             "terminated": {"exitCode": 0, "finishedAt": "2026-01-01T00:01:00Z",
                                            "startedAt": "2026-01-01T00:00:01Z"}} if n == 1 else
                             {"running": {"startedAt": "2026-01-01T00:00:01Z"}}}]}
    kept = [informer.essentials(o) for o in objects]
    assert len(json_size(kept)) < len(json_size(objects))

    def decided(found: list[dict[str, Any]]) -> Any:
        policy, workloads, pods = watch.select("j", "ns", found)
        now = datetime(2026, 1, 1, 1, tzinfo=timezone.utc)
        verdict = status.aggregate(policy, workloads, pods)
        services = [o for o in found if o["kind"] == "Service"]
        return (verdict, actions.due(policy, verdict, workloads, pods, now, services),
                (published.keeper(policy, workloads, services) or {}).get("metadata", {}).get("name"))

    assert decided(kept) == decided(objects)
    assert decided(objects)[0].phase == "Succeeded" and decided(objects)[1]


def json_size(objects: list[dict[str, Any]]) -> str:
    import json

    return json.dumps(objects)


def test_a_job_queued_for_later_is_no_longer_background_work_when_due() -> None:
    """A TTL falling due for a job a resync had queued must not wait behind any change, and
    is timed from when it fell due, not from the resync."""
    clock = Clock()
    queue = workqueue.WorkQueue(clock=clock)
    queue.add_after(("ns", "ttl"), 5)
    queue.add_all([("ns", "ttl"), ("ns", "other")], background=True)
    clock.now += 5
    assert queue.best() == workqueue.URGENT  # due: a pass gives back what it has not started
    assert queue.take() == [(("ns", "ttl"), 105.0, workqueue.URGENT), (("ns", "other"), 100.0, True)]


def test_a_replica_that_stopped_leading_does_no_more_of_a_jobs_actions() -> None:
    """Leadership checked before each action: a slow API server must not let a replica whose
    Lease ran out go on deleting (client None: any call would fail the test)."""
    from msgen.reconcile.controller import reconcile_job

    from .fake_kubelet import msjob, rendered

    objects = rendered(msjob("j", 2), "ns", "pod")
    for n, obj in enumerate(o for o in objects if o["kind"] == "Pod"):
        obj["status"] = {"phase": "Succeeded" if n == 1 else "Running", "containerStatuses": [{
            "name": "mindspore", "state": {"terminated": {"exitCode": 0, "finishedAt": "2026-01-01T00:01:00Z"}}
            if n == 1 else {"running": {"startedAt": "2026-01-01T00:00:01Z"}}}]}
    said: list[str] = []
    found, again = reconcile_job(NO_CLIENT, "ns", "j", objects, said.append, leading=lambda: False)
    assert found.phase == "Succeeded" and again is None and said == []


def test_what_a_follower_queued_long_ago_waits_behind_the_latest_changes() -> None:
    """A replica that does not lead queues every change it sees, and acts on none. When it
    takes over, the changes of the last moments (the old leader may have missed them) go
    first; what it queued long before, which the old leader acted on, is only background
    work, or the newest pod end would wait behind a thousand old ones, oldest first."""
    clock = Clock()
    queue = workqueue.WorkQueue(clock=clock)
    queue.add_all([("ns", "old-1"), ("ns", "old-2")])
    clock.now = 200
    queue.add(("ns", "new"))
    queue.demote(before=150)
    assert queue.take() == [(("ns", "new"), 200.0, False), (("ns", "old-1"), 100.0, True),
                            (("ns", "old-2"), 100.0, True)]
