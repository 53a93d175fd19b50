"""msgen.targets.volcano: one Volcano Job, a task per role, gang-scheduled; every fact it declares holds of what it renders."""

from __future__ import annotations

from msgen import targets
from msgen.targets import volcano

from .plugin_plans import plan, render, workloads
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
