"""msgen.targets.volcano: one Volcano Job, a task per role, gang-scheduled; every fact it declares
holds of what it renders. Each pod reads its index from the `volcano.sh/task-index` label,
which Volcano's job controller sets since 1.9, the oldest Volcano the target documents."""

from __future__ import annotations

from typing import Any

from msgen import targets
from msgen.model.plan import Options
from msgen.targets import volcano

from .conftest import ROOT, SAMPLES, msgen
from .plugin_plans import addresses, job, plan, raw_pods, render, workloads
from .test_target_plugins import check_facts


def test_it_is_the_registered_target() -> None:
    assert targets.lookup('volcano') is volcano.TARGET


def test_its_facts_hold_of_what_it_renders() -> None:
    check_facts(volcano.TARGET)


def test_it_renders_the_job_its_way() -> None:
    objects, found = render(plan(), 'volcano')
    assert not [d for d in found if d.is_error]
    (job,) = workloads(objects)
    spec = job["spec"]
    assert [(t["name"], t["replicas"]) for t in spec["tasks"]] == [("scheduler", 1), ("worker", 2)]
    assert (spec["schedulerName"], spec["minAvailable"]) == ("volcano", 3)


TASK_INDEX = "metadata.labels['volcano.sh/task-index']"


def tasks(path: str) -> dict[str, dict[str, Any]]:
    run = msgen("render", path, "--target", "volcano")
    assert run.exit_code == 0, run.stderr
    vcjob = next(o for o in run.objects() if o["apiVersion"] == "batch.volcano.sh/v1alpha1")
    return {t["name"]: t["template"] for t in vcjob["spec"]["tasks"]}


def env_list(template: dict[str, Any]) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = template["spec"]["containers"][0]["env"]
    return env


def test_workers_get_their_index_as_numeric_node_id() -> None:
    worker = tasks(str(SAMPLES / "mindspore" / "widedeep-ps.yaml"))["worker"]
    node_id = next(e for e in env_list(worker) if e["name"] == "MS_NODE_ID")
    assert node_id["valueFrom"]["fieldRef"]["fieldPath"] == TASK_INDEX


def test_multi_device_workers_render_with_their_rank_from_volcano() -> None:
    worker = tasks(str(SAMPLES / "mindspore" / "gpu-2x8.yaml"))["worker"]
    rank = next(e for e in env_list(worker) if e["name"] == "MS_NODE_RANK")
    assert rank["valueFrom"]["fieldRef"]["fieldPath"] == TASK_INDEX


def test_index_is_defined_before_values_that_expand_it() -> None:
    for path in (SAMPLES / "mxnet" / "mx-job-dist.yaml", SAMPLES / "caffe2" / "resnet50-redis.yaml"):
        for template in tasks(str(path)).values():
            names = [e["name"] for e in env_list(template)]
            users = [i for i, e in enumerate(env_list(template)) if "$(MSGEN_TASK_INDEX)" in e.get("value", "")]
            if not users:
                continue
            defined = names.index("MSGEN_TASK_INDEX")
            assert env_list(template)[defined]["valueFrom"]["fieldRef"]["fieldPath"] == TASK_INDEX
            assert defined < min(users)


def test_the_oldest_supported_volcano_is_documented() -> None:
    targets = (ROOT / "docs" / "targets.md").read_text()
    assert "**Volcano 1.9**" in targets and "the oldest Volcano the `volcano` target supports" in targets


def test_its_entry_points_on_a_tiny_job() -> None:
    """`naming` (a Worker's host name; whether pods read their index at run time), `slots`
    (one pod template per role or per replica), `render` (the objects), `check_names` (every
    derived name a DNS label, refused for a long job name)."""
    made, options = plan(), Options(target="volcano")
    worker = made.role("Worker")
    assert worker is not None
    naming = volcano.TARGET.naming(made, options)
    assert (naming.hostname(worker, 1), naming.dynamic_index is not None) == ('tiny-worker-1', True)
    slots = volcano.TARGET.slots(made)
    assert [(s.role.replica_type, s.index) for s in slots] == [('Scheduler', 0), ('Worker', None)]
    objects, _ = volcano.TARGET.render(made, raw_pods(slots), addresses(made, "volcano"), options)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [('Service', 'tiny-scheduler-0'), ('Job', 'tiny')]
    assert volcano.TARGET.check_names(made, objects) == []
    long = plan(job(name="b" * 52))
    objects, _ = volcano.TARGET.render(long, raw_pods(volcano.TARGET.slots(long)), addresses(long, "volcano"), options)
    assert [d.is_error for d in volcano.TARGET.check_names(long, objects)][:1] == [True]
