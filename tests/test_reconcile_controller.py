"""The controller's pure parts with plain data: grouping jobs, the published status (holder,
read-back, merge across restarts, when an Event is due) and the Lease decisions."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from msgen.reconcile import controller, lease, published, status
from msgen.model.run_policy import RoleRule, JobPolicy

#: No API server: the code under test never reaches one (a typed stand-in for lightkube's Client).
NO_CLIENT: Any = None

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
POLICY = JobPolicy(job="j", target="pod",
                   roles={"Scheduler": RoleRule(1, "Never"), "Worker": RoleRule(2, "Never")})


def pod(role: str, index: int, annotations: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"j-{role}-{index}", "namespace": "ns", "annotations": annotations or {},
                         "labels": {"training.kubeflow.org/job-name": "j",
                                    "training.kubeflow.org/replica-type": role,
                                    "training.kubeflow.org/replica-index": str(index)}, **extra}}


def test_group_keeps_jobs_with_a_workload_msgen_rendered() -> None:
    ours = pod("worker", 0, {"msgen/run-policy": "{}"})
    theirs = {**pod("worker", 0), "metadata": {**pod("worker", 0)["metadata"], "namespace": "other"}}
    grouped = controller.group([ours, pod("scheduler", 0), theirs])
    assert list(grouped) == [("ns", "j")] and len(grouped[("ns", "j")]) == 2


def test_the_holder_is_worker_0_then_the_worker_workload() -> None:
    pods = [pod("scheduler", 0), pod("worker", 1), pod("worker", 0)]
    assert published.holder(POLICY, pods) == pods[2]
    jobs = [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": n},
             "spec": {"template": {"metadata": {"labels": {"training.kubeflow.org/replica-type": r}}}}}
            for n, r in (("j-scheduler", "scheduler"), ("j-worker", "worker"))]
    assert published.holder(POLICY, jobs) == jobs[1]
    gone = {**pods[2], "metadata": {**pods[2]["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    assert published.holder(POLICY, [pods[0], pods[1], gone]) == pods[1]


def computed(phase: str, *conditions: status.Condition) -> status.JobStatus:
    return status.JobStatus(job="j", phase=phase, conditions=list(conditions),
                            replicas={"Worker": status.RoleCounts(running=2)})


def test_merge_keeps_times_seen_before_and_stamps_new_conditions() -> None:
    first = published.merged(None, computed("Running", status.Condition("Created", "JobCreated", time="T0"),
                                            status.Condition("Running", "JobRunning")), "T1")
    assert [(c["type"], c["lastTransitionTime"]) for c in first["conditions"]] == [("Created", "T0"), ("Running", "T1")]
    # After a restart: the Running time read back is kept, not replaced by the restart's time.
    again = published.merged(first, computed("Running", status.Condition("Created", "JobCreated", time="T0"),
                                             status.Condition("Running", "JobRunning")), "T9")
    assert again == first and not published.announce(first, again)
    assert published.text(again) == published.text(first)


def test_a_published_end_is_final() -> None:
    ended = {"phase": "Succeeded", "conditions": [{"type": "Succeeded", "reason": "JobSucceeded"}]}
    assert published.merged(ended, computed("Created"), "T9") == ended
    # Final: counts that change as the policies remove pods do not rewrite it.
    assert published.merged(ended, computed("Succeeded", status.Condition("Succeeded", "JobSucceeded")), "T9") == ended
    assert published.read([pod("worker", 0, {"msgen/status": json.dumps({"phase": "Running"})}),
                           pod("worker", 1, {"msgen/status": json.dumps(ended)}),
                           pod("worker", 2, {"msgen/status": "not json"})]) == ended
    assert published.announce({"phase": "Running"}, {"phase": "Succeeded"})
    assert published.announce(None, {"phase": "Created"})


def test_the_lease_is_taken_only_when_free_or_expired() -> None:
    mine = lease.claimed(None, "a", NOW)
    assert mine["holderIdentity"] == "a" and mine["leaseDurationSeconds"] == lease.LEASE_SECONDS
    assert mine["renewTime"] == "2026-01-01T12:00:00.000000Z" and mine["leaseTransitions"] == 0
    assert lease.decide(None, "b", NOW) == "acquire"
    assert lease.decide(mine, "a", NOW) == "renew"
    assert lease.decide(mine, "b", NOW + timedelta(seconds=lease.LEASE_SECONDS - 1)) == "wait"
    assert lease.decide(mine, "b", NOW + timedelta(seconds=lease.LEASE_SECONDS)) == "acquire"
    released = {**mine, "holderIdentity": None}
    assert lease.decide(released, "b", NOW) == "acquire"
    assert lease.claimed(released, "b", NOW)["leaseTransitions"] == 1
    taken = lease.claimed(mine, "b", NOW + timedelta(seconds=20))
    assert taken["leaseTransitions"] == 1 and taken["acquireTime"] == taken["renewTime"]
    renewed = lease.claimed(mine, "a", NOW + timedelta(seconds=5))
    assert renewed["acquireTime"] == mine["acquireTime"] and renewed["renewTime"] != mine["renewTime"]


def test_a_leader_stops_acting_before_its_lease_can_be_taken() -> None:
    assert lease.RENEW_DEADLINE < lease.LEASE_SECONDS
    elector = lease.Elector(None, "ns", "l", "a")
    assert not elector.leading()


# kustomize builds the overlay and Kubernetes' schemas check it at every minor: CI runs it on one Python.
@pytest.mark.spread
def test_the_controller_overlay_is_valid_kubernetes_at_every_supported_version() -> None:
    import subprocess

    import kubernetes_validate
    import pytest
    import yaml

    from msgen.model import versions

    from .conftest import ROOT, kustomize_binary

    binary = kustomize_binary()
    if binary is None:
        pytest.skip("kustomize is not installed (.ci/fetch-kustomize installs it)")
    built = subprocess.run([binary, "build", str(ROOT / "overlays" / "controller")], capture_output=True,
                           text=True, check=True, timeout=60).stdout
    documents = [d for d in yaml.safe_load_all(built) if d]
    kinds = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in documents)
    policies = [f"{kind}/msgen-controller-{name}" for name in (
        "changes-annotations-only", "completes-volcano-jobs-only", "deletes-msgen-objects-only",
        "suspends-jobs-only", "creates-its-events-only", "creates-its-lease-only") for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")]
    assert kinds == sorted(["ClusterRole/msgen-controller", "ClusterRoleBinding/msgen-controller",
                            "Deployment/msgen-controller", "Namespace/msgen-system", "Role/msgen-controller-lease",
                            "RoleBinding/msgen-controller-lease", "Service/msgen-controller-metrics",
                            "NetworkPolicy/msgen-controller",
                            "ServiceAccount/msgen-controller", *policies])
    for minor in range(versions.OLDEST[1], versions.NEWEST[1] + 1):
        version = f"{versions.OLDEST[0]}.{minor}"
        for document in documents:
            if document["apiVersion"].startswith("admissionregistration.k8s.io/") and minor < 30:
                continue  # ValidatingAdmissionPolicy is served from 1.30 (admission.yaml says so)
            try:
                kubernetes_validate.validate(document, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{document['kind']}/{document['metadata']['name']} at {version}: {exc.message}")
    lease_rules = next(d for d in documents if d["kind"] == "Role")["rules"]
    assert {v for r in lease_rules for v in r["verbs"]} == {"get", "update", "create"}
    # The kubelet asks the controller whether its watches are current.
    container = next(d for d in documents if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]
    health = container["args"][container["args"].index("--health-port") + 1]
    port = container["args"][container["args"].index("--metrics-port") + 1]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["ports"] == [{"name": "health", "containerPort": int(health)},
                                  {"name": "metrics", "containerPort": int(port)}]
    # ... and Prometheus finds /metrics on its own port, by the pods' annotations or the
    # Service's endpoints, which expose the metrics port alone.
    template = next(d for d in documents if d["kind"] == "Deployment")["spec"]["template"]
    assert template["metadata"]["annotations"] == {"prometheus.io/scrape": "true", "prometheus.io/port": port,
                                                   "prometheus.io/path": "/metrics"}
    service = next(d for d in documents if d["kind"] == "Service")
    assert service["spec"]["selector"] == template["metadata"]["labels"]
    assert service["spec"]["ports"] == [{"name": "metrics", "port": int(port), "targetPort": "metrics"}]
    # Pods may reach the metrics port from the scraper's namespace only; the probes' port
    # from none (the kubelet, on the node, always may).
    policy = next(d for d in documents if d["kind"] == "NetworkPolicy")["spec"]
    assert policy["podSelector"] == {"matchLabels": template["metadata"]["labels"]}
    assert policy["policyTypes"] == ["Ingress"]
    assert [p["port"] for rule in policy["ingress"] for p in rule["ports"]] == ["metrics"]
    assert all(rule["from"] for rule in policy["ingress"]), "every rule names who"


@pytest.mark.spread
def test_the_namespaced_controller_overlay_watches_and_may_act_in_its_namespaces_only() -> None:
    import subprocess

    import kubernetes_validate
    import pytest
    import yaml

    from .conftest import ROOT, kustomize_binary

    binary = kustomize_binary()
    if binary is None:
        pytest.skip("kustomize is not installed (.ci/fetch-kustomize installs it)")
    built = subprocess.run([binary, "build", str(ROOT / "overlays" / "controller-namespaces")],
                           capture_output=True, text=True, check=True, timeout=60).stdout
    documents = [d for d in yaml.safe_load_all(built) if d]
    for document in documents:
        admission = document["apiVersion"].startswith("admissionregistration.k8s.io/")
        kubernetes_validate.validate(document, "1.30" if admission else "1.25", strict=True)
    assert not [d for d in documents if d["kind"] == "ClusterRoleBinding"]
    bindings = {d["metadata"]["namespace"] for d in documents
                if d["kind"] == "RoleBinding" and d["roleRef"]["kind"] == "ClusterRole"}
    args = next(d for d in documents if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    watched = set(args[args.index("--namespace") + 1].split(","))
    assert watched == bindings == {"team-a", "team-b"}


def test_once_no_workload_is_left_a_service_of_the_job_keeps_its_status() -> None:
    pods = [pod("worker", 0)]
    services: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": n, "namespace": "ns"}}
                for n in ("j-scheduler-0", "j")]
    assert published.keeper(POLICY, pods, services) == pods[0]
    # cleanPodPolicy All deleted every pod: the first Service by name carries the status ...
    assert published.keeper(POLICY, [], services) == services[1]
    # ... and is where the end is read back from.
    ended = {**services[1], "metadata": {**services[1]["metadata"], "annotations": {
        "msgen/status": json.dumps({"phase": "Succeeded", "conditions": []})}}}
    assert published.read([services[0], ended]) == {"phase": "Succeeded", "conditions": []}
    assert published.keeper(POLICY, [], []) is None


def test_the_end_is_published_before_deletions_that_leave_nothing_to_carry_it() -> None:
    pods = [pod("worker", 0), pod("worker", 1)]
    services = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "j", "namespace": "ns"}}]
    every = {(o["kind"], o["metadata"]["name"]) for o in [*pods, *services]}
    assert published.first(POLICY, True, pods, services, every)  # a TTL deletes all of it
    assert not published.first(POLICY, False, pods, services, every)  # no end to publish
    assert not published.first(POLICY, True, pods, services, every - {("Service", "j")})  # the Service keeps it
    assert not published.first(POLICY, True, pods, services, set())


def test_the_controllers_role_may_watch_and_patch_every_workload_kind_it_watches() -> None:
    """Each kind `watch.WORKLOADS` names (a TrainJob as much as a Job) is listed, watched and
    patched (the published status) under overlays/controller's ClusterRole: a kind missing
    there would leave the controller's watch of it forbidden."""
    import yaml

    from msgen.reconcile import watch

    from .conftest import ROOT

    documents = yaml.safe_load_all((ROOT / "overlays" / "controller" / "rbac.yaml").read_text())
    role = next(d for d in documents if d and d["kind"] == "ClusterRole")
    granted = {(group, resource): set(rule["verbs"])
               for rule in role["rules"] for group in rule["apiGroups"] for resource in rule["resources"]}
    for api_version, kind in watch.WORKLOADS:
        group = api_version.rpartition("/")[0]
        verbs = granted.get((group, f"{kind.lower()}s"), set())
        assert {"list", "watch", "patch"} <= verbs, f"{kind} ({api_version}): {sorted(verbs)}"


def test_a_status_left_on_a_former_holder_does_not_hide_the_holders() -> None:
    """The Scheduler Job held the status while the Worker Job was not there yet; once the
    Worker Job holds it, its Running is read back, not the Created left behind (else every
    pass would announce Running again)."""
    left = pod("scheduler", 0, {"msgen/status": json.dumps({"phase": "Created", "conditions": []})})
    holder = pod("worker", 0, {"msgen/status": json.dumps({"phase": "Running", "conditions": []})})
    assert (published.read([left, holder]) or {}).get("phase") == "Running"
    assert not published.announce(published.read([left, holder]), {"phase": "Running"})


def test_a_phase_announced_again_after_a_crash_is_not_shown_twice(monkeypatch: Any) -> None:
    """The Event goes before the annotation that records it; a leader killed between the two
    left its successor to announce again. The Event's name is the object's and the reason's,
    so the second is refused (409) and taken as done; a workload made again, or a Job resumed
    for another run (a new generation), gets new ones."""
    from msgen.reconcile import kube, publisher

    created: list[str] = []

    def create(client: Any, body: dict[str, Any]) -> dict[str, Any]:
        if body["metadata"]["name"] in created:
            raise kube.KubeError("events: already exists", 409)
        created.append(body["metadata"]["name"])
        return body

    monkeypatch.setattr(kube, "create", create)
    worker: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job",
              "metadata": {"name": "j-worker", "namespace": "ns", "uid": "0123456789abcdef", "generation": 1}}
    shown = {"phase": "Succeeded", "conditions": []}
    for _ in range(2):
        publisher._create_event(NO_CLIENT, publisher.event(worker, "j", shown))
    assert created == ["j-worker.jobsucceeded-01234567-1"]
    again = {**worker, "metadata": {**worker["metadata"], "uid": "fedcba9876543210"}}
    assert publisher.event(again, "j", shown)["metadata"]["name"] == "j-worker.jobsucceeded-fedcba98-1"
    resumed = {**worker, "metadata": {**worker["metadata"], "generation": 3}}
    assert publisher.event(resumed, "j", shown)["metadata"]["name"] == "j-worker.jobsucceeded-01234567-3"


def test_a_jobs_events_keep_their_names_through_its_suspension_at_the_end() -> None:
    """cleanPodPolicy suspends a Job still active at the job's end, before the end is
    announced; Kubernetes gives the Job another generation for it. A replica stopped after
    its Event on the Job as it was, before the annotation that records it, left its
    successor to announce again on the suspended Job: the Event must have the same name
    (refused, 409), not another, so the generation of the run is kept on the Job."""
    from msgen.reconcile import actions, publisher

    from .fake_api import merge_patch

    rule = JobPolicy(job="j", target="indexed-job",
                     roles={"Scheduler": RoleRule(1, "Never"), "Worker": RoleRule(1, "Never")})
    running: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": "j-scheduler", "namespace": "ns", "uid": "0123456789abcdef", "generation": 4,
                            "labels": {"training.kubeflow.org/job-name": "j",
                                       "training.kubeflow.org/replica-type": "scheduler"}},
               "spec": {"template": {"metadata": {"labels": {"training.kubeflow.org/replica-type": "scheduler"}}}},
               "status": {"active": 1}}
    ended = status.JobStatus(job="j", phase="Succeeded", completion_time="2026-01-01T11:00:00Z")
    suspend = actions.due(rule, ended, [running], [], NOW)
    assert [(a.name, a.generation) for a in suspend] == [("j-scheduler", "4")]

    def server_side(obj: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = merge_patch(obj, patch)
        out["metadata"]["generation"] = obj["metadata"]["generation"] + 1  # the spec changed
        return out

    stopped = server_side(running, actions.suspend_patch(suspend[0], NOW))
    name = publisher.event_name(running, "JobSucceeded")
    assert name == "j-scheduler.jobsucceeded-01234567-4"
    assert publisher.event_name(stopped, "JobSucceeded") == name
    # Resumed for another run (`msgen apply` again): its Events are new.
    resumed = server_side(stopped, actions.resume_patch())
    assert publisher.event_name(resumed, "JobRunning") == "j-scheduler.jobrunning-01234567-6"
    # A Job suspended for Kueue, or whose mark is no generation, is named by its own.
    for mark in ("4; rm -rf", "-1", "0", "9" * 20, "٣", ""):
        hostile = {**stopped, "metadata": {**stopped["metadata"], "annotations": {
            **stopped["metadata"]["annotations"], actions.STOPPED_GENERATION: mark}}}
        assert publisher.event_name(hostile, "JobSucceeded") == "j-scheduler.jobsucceeded-01234567-5", mark
    held = {**running, "spec": {**running["spec"], "suspend": True},
            "metadata": {**running["metadata"], "generation": 2, "annotations": {actions.STOPPED_GENERATION: "1"}}}
    assert actions.run_generation(held) == "2"


def test_a_jobs_end_outlives_the_ttl_that_deletes_its_holder(monkeypatch: Any) -> None:
    """Seen on the live harness (tests/test_live_nodes_failures.py): an indexed-job failed,
    cleanPodPolicy suspended its Scheduler Job, and `ttlSecondsAfterFinished` then deleted the
    Worker Job, which held the published end: `msgen status` said Created. The end now also
    goes on every other Job of the job (still active, as `apply --wait` and the controller see
    it before they stop it, or stopped, as the controller sees it a pass later), which the TTL
    leaves; and resuming that Job for the next run takes the old end off it."""
    from msgen.reconcile import actions, kube, publisher

    from .fake_api import merge_patch

    rule = JobPolicy(job="j", target="indexed-job", roles={"Scheduler": RoleRule(1, "Never"),
                                                           "Worker": RoleRule(2, "Never")})
    objects: dict[str, dict[str, Any]] = {}

    def job(role: str, **extra: Any) -> dict[str, Any]:
        objects[f"j-{role}"] = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": f"j-{role}", "namespace": "ns", "uid": f"{role}-uid", "generation": 1, **extra},
            "spec": {"template": {"metadata": {"labels": {"training.kubeflow.org/replica-type": role}}}}}
        return objects[f"j-{role}"]

    def patch(client: Any, obj: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        objects[name] = merge_patch(objects[name], body)
        return objects[name]

    monkeypatch.setattr(kube, "merge_patch", patch)
    NO_CLIENT: Any = None  # every request goes to the stand-ins above
    monkeypatch.setattr(kube, "create", lambda client, body: body)
    failed = status.JobStatus(job="j", phase="Failed", conditions=[status.Condition("Failed", "BackoffLimitExceeded")])
    worker, scheduler = job("worker"), job("scheduler")
    publisher.publish(NO_CLIENT, rule, failed, [worker, scheduler], lambda line: None)
    del objects["j-worker"]  # the TTL deletes the finished Worker Job
    assert (published.read(list(objects.values())) or {}).get("phase") == "Failed"
    # The controller, a pass after the suspension: the stopped Job gets the end too.
    objects.clear()
    stopped = job("scheduler", annotations={actions.STOPPED_AT: "2026-01-01T12:00:00Z"})
    stopped["spec"]["suspend"] = True
    publisher.publish(NO_CLIENT, rule, failed, [job("worker"), stopped], lambda line: None)
    del objects["j-worker"]
    assert (published.read(list(objects.values())) or {}).get("phase") == "Failed"
    # Without an end, only the holder carries the status, as before.
    objects.clear()
    running = status.JobStatus(job="j", phase="Running")
    publisher.publish(NO_CLIENT, rule, running, [job("worker"), job("scheduler")], lambda line: None)
    assert published.ANNOTATION not in (objects["j-scheduler"]["metadata"].get("annotations") or {})
    # Resumed for the next run: the last run's end goes with the stop marks.
    resumed = merge_patch(stopped, actions.resume_patch())
    assert published.ANNOTATION not in resumed["metadata"]["annotations"] and not resumed["spec"]["suspend"]
