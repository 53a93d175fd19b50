"""Each target, imported directly and run on a tiny plan: what it renders, and that every fact
it declares (`Target.facts`, `Target.support`) is true of what it renders.

A fault here names the target that broke (the test ids are target names), where the golden
files would show a diff of every sample. A new target adds its row to `SHAPES`, or a test file
of its own, `test_targets_<module>.py`, that calls `check_facts`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest

from msgen import targets
from msgen.checks import apirules
from msgen.model import run_policy, versions
from msgen.model.extension_points import Target
from msgen.reconcile import actions, status
from msgen.targets import indexed_job, jobset, pod, statefulset, support, volcano
from msgen.targets.limits import INDEXED_JOB_LIMIT, replica_problems

from .plugin_plans import job, plan, pod_specs, pod_templates, render, workloads

#: Core API groups: a workload outside them is a custom resource.
BUILT_IN = ("v1", "apps/v1", "batch/v1")


class Shape(NamedTuple):
    #: (apiVersion, kind, name) of each workload of `job()`
    workloads: list[tuple[str, str, str]]
    #: the host name of Worker pod 1
    worker_host: str
    #: the facts that are true of it (those not given are false)
    facts: set[str]
    #: the most replicas of one role, where it declares a limit
    max_replicas: int | None = INDEXED_JOB_LIMIT


SHAPES: dict[ModuleType, Shape] = {
    indexed_job: Shape(
        [("batch/v1", "Job", "tiny-scheduler"), ("batch/v1", "Job", "tiny-worker")],
        "tiny-worker-1",
        {"static_indexes", "job_templates", "suspends_jobs_at_end", "retries_counted_per_role",
         "workload_per_role"},
    ),
    pod: Shape(
        [("v1", "Pod", "tiny-scheduler-0"), ("v1", "Pod", "tiny-worker-0"),
         ("v1", "Pod", "tiny-worker-1")],
        "tiny-worker-1",
        {"static_indexes", "bare_pods", "deadline_on_pods"},
        max_replicas=None,
    ),
    statefulset: Shape(
        [("apps/v1", "StatefulSet", "tiny-scheduler"), ("apps/v1", "StatefulSet", "tiny-worker")],
        "tiny-worker-1",
        {"pods_run_until_deleted", "workload_per_role", "rank_table_kind"},
    ),
    jobset: Shape(
        [("jobset.x-k8s.io/v1alpha2", "JobSet", "tiny")],
        "tiny-worker-0-1",
        {"job_templates", "custom_resource", "cleans_running_pods", "add_on"},
    ),
    volcano: Shape(
        [("batch.volcano.sh/v1alpha1", "Job", "tiny")],
        "tiny-worker-1",
        {"custom_resource", "deadline_on_pods", "own_gang", "cleans_running_pods",
         "completed_by_command", "rank_table_kind"},
    ),
}
MODULES = list(SHAPES)


def _id(module: ModuleType) -> str:
    return str(module.TARGET.name)


def test_every_registered_target_is_tested() -> None:
    """Each target is in `SHAPES` or has a test file of its own, `test_targets_<module>.py`."""
    here = Path(__file__).parent
    shaped = {_id(m) for m in MODULES}
    for name in targets.NAMES:
        module = targets._REGISTRY[name].rsplit(".", 1)[-1]
        assert name in shaped or (here / f"test_targets_{module}.py").is_file(), name


@pytest.mark.parametrize("module", MODULES, ids=_id)
def test_renders_its_workloads(module: ModuleType) -> None:
    target = module.TARGET
    assert targets.lookup(target.name) is target  # registered under its own name
    objects, diagnostics = render(plan(), target.name)
    assert [d for d in diagnostics if d.severity.name == "ERROR"] == []
    found = [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in workloads(objects)]
    assert found == SHAPES[module].workloads
    assert target.check_names(plan(), objects) == []


@pytest.mark.parametrize("module", MODULES, ids=_id)
def test_names_worker_pods(module: ModuleType) -> None:
    made = plan()
    worker = made.role("Worker")
    assert worker is not None
    naming = module.TARGET.naming(made, render_options(module))
    assert naming.hostname(worker, 1) == SHAPES[module].worker_host


def render_options(module: ModuleType) -> Any:
    from msgen.model.plan import Options

    return Options(target=module.TARGET.name)


@pytest.mark.parametrize("module", MODULES, ids=_id)
def test_declares_its_facts(module: ModuleType) -> None:
    facts = module.TARGET.facts
    true = {name for name, value in facts._asdict().items() if value and name != "max_replicas"}
    assert true - {"workloads", "chain"} == SHAPES[module].facts
    limit = facts.max_replicas[0] if facts.max_replicas is not None else None
    assert limit == SHAPES[module].max_replicas


@pytest.mark.parametrize("module", MODULES, ids=_id)
def test_facts_are_true_of_what_it_renders(module: ModuleType) -> None:
    check_facts(module.TARGET)


def check_facts(target: Target) -> None:
    """Every fact `target` declares, checked against what it renders on tiny plans."""
    facts = target.facts
    objects, _ = render(plan(), target.name)
    made = workloads(objects)
    # bare_pods: its workloads are the pods themselves
    assert facts.bare_pods == all(o["kind"] == "Pod" for o in made)
    # custom_resource: its pod templates sit in an object of a custom resource
    assert facts.custom_resource == any(o["apiVersion"] not in BUILT_IN for o in made)
    # job_templates: its pod templates are templates of batch/v1 Jobs (a JobSet's, or those of
    # the JobSet a TrainJob's runtime describes)
    in_jobs = all(
        (o["apiVersion"], o["kind"]) == ("batch/v1", "Job") or o["kind"] in ("JobSet", "TrainJob")
        for o in made
    )
    assert facts.job_templates == in_jobs
    # workload_per_role: one workload `<job>-<role>` per role
    per_role = sorted(o["metadata"]["name"] for o in made) == ["tiny-scheduler", "tiny-worker"]
    assert facts.workload_per_role == per_role
    assert facts.workloads, "the words messages use for what it renders"
    # chain: from the workload it renders (each of them) down to the Pod
    # (tests/test_reconcile_ownership_chains.py follows it through what its controllers make)
    assert {(o["apiVersion"], o["kind"]) for o in made} == {(facts.chain[0].api_version, facts.chain[0].kind)}
    assert (facts.chain[-1].api_version, facts.chain[-1].kind) == ("v1", "Pod")
    if facts.rank_table_kind is not None:
        assert facts.rank_table_kind in {o["kind"] for o in made}
    # add_on: a render for a Kubernetes older than its add-on's release runs on warns, naming
    # it; from that minor on, and on a target without an add-on, nothing is said
    oldest = facts.add_on[1] if facts.add_on is not None else versions.OLDEST
    below = (oldest[0], oldest[1] - 1) if facts.add_on is not None else versions.OLDEST
    said = {version: [d.message for d in render(plan(), target.name, kube_version=version)[1]
                      if f"target {target.name} renders for " in d.message] for version in {below, oldest}}
    assert bool(said[below]) == (facts.add_on is not None), said
    assert not said[oldest], said
    # deadline_on_pods: the job's activeDeadlineSeconds is written on its pods
    objects, _ = render(plan(job(run_policy="{activeDeadlineSeconds: 60}")), target.name)
    specs = [spec for o in workloads(objects) for spec in pod_specs(o, objects)]
    assert specs
    on_pods = all(spec.get("activeDeadlineSeconds") == 60 for spec in specs)
    assert facts.deadline_on_pods == on_pods
    # own_gang: the workload names its own scheduler, and no PodGroup is made for it
    gang = job(run_policy="{schedulingPolicy: {minAvailable: 3}}")
    objects, _ = render(plan(gang), target.name, gang_scheduler="volcano")
    own = [o for o in workloads(objects) if o["kind"] != "Pod" and "schedulerName" in o["spec"]]
    assert facts.own_gang == bool(own)
    made_by_others = facts.own_gang or facts.gang_by_policy
    assert made_by_others == ("PodGroup" not in {o["kind"] for o in objects})
    # gang_by_policy: what msgen writes asks its controller for the PodGroup
    asks = any("podGroupPolicy" in (o.get("spec") or {}) for o in objects)
    assert facts.gang_by_policy == asks
    if made_by_others:  # no gang scheduler asked for: no PodGroup policy either
        objects, _ = render(plan(gang), target.name)
        assert not any("podGroupPolicy" in (o.get("spec") or {}) for o in objects)
    # static_indexes: a plan whose pods need static indexes gets a pod template per pod
    static = plan()._replace(static_indexes=True)
    assert facts.static_indexes == all(slot.index is not None for slot in target.slots(static))
    objects, diagnostics = render(static, target.name)
    refused = [d.message for d in diagnostics if d.severity.name == "ERROR"]
    assert facts.static_indexes == (not refused), refused
    # max_replicas: one more replica than it declares is refused, naming it
    if facts.max_replicas is not None:
        limit, _why = facts.max_replicas
        too_many = plan(job(workers=limit + 1))
        problems = replica_problems(too_many, target)
        assert len(problems) == 1 and f"target {target.name}" in problems[0].message
        assert replica_problems(plan(job(workers=limit)), target) == []
    # pods_run_until_deleted: pods restart whatever the role's restartPolicy says, and a
    # pod's own activeDeadlineSeconds is refused
    objects, _ = render(plan(job(restart_policy="Never")), target.name)
    specs = [spec for o in workloads(objects) for spec in pod_specs(o, objects)]
    assert facts.pods_run_until_deleted == all(s["restartPolicy"] == "Always" for s in specs)
    template = {"spec": {"containers": [{"name": "c", "image": "i"}], "activeDeadlineSeconds": 5}}
    document = plan().document
    found = apirules.check_template(template, document, (), (1, 37), target.name)
    assert facts.pods_run_until_deleted == bool(found), found
    check_reconciler_facts(target)
    # support: a cell for every policy, each of a known kind
    assert set(target.support) == set(support.ROWS)
    assert {cell.support for cell in target.support.values()} <= {"native", "partly", "apply", "no"}


def check_reconciler_facts(target: Target) -> None:
    """What the reconciler does when a job of `target` succeeded with a pod still running."""
    facts = target.facts
    objects, _ = render(plan(job(run_policy="{cleanPodPolicy: Running}")), target.name)
    made = workloads(objects)
    policy = run_policy.parse(made[0]["metadata"]["annotations"][run_policy.ANNOTATION])
    first = made[-1]
    labels = first["metadata"]["labels"] if first["kind"] == "Pod" else _template_labels(first, objects)
    running = {"apiVersion": "v1", "kind": "Pod", "status": {"phase": "Running"},
               "metadata": {"name": "running", "labels": labels}}
    ended = status.JobStatus(job="tiny", phase="Succeeded", completion_time="2026-01-01T00:00:00Z")
    due = actions.due(policy, ended, made, [running], datetime.now(timezone.utc))
    verbs = {(a.verb, a.kind) for a in due}
    assert facts.suspends_jobs_at_end == (("suspend", "Job") in verbs), due
    assert facts.completed_by_command == any(verb == "complete" for verb, _ in verbs), due
    left_running = ("delete", "Pod") not in verbs
    assert left_running == (facts.cleans_running_pods or facts.suspends_jobs_at_end), due


def _template_labels(obj: dict[str, Any], objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The labels of the workload's last pod template (its Workers')."""
    return dict(pod_templates(obj, objects)[-1]["metadata"]["labels"])
