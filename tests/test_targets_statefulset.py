"""msgen.targets.statefulset: one StatefulSet per role, pods started in parallel; every fact it declares holds of what it renders."""

from __future__ import annotations

from msgen import targets
from msgen.targets import statefulset

from .plugin_plans import plan, render, workloads
from .test_target_plugins import check_facts


def test_it_is_the_registered_target() -> None:
    assert targets.lookup('statefulset') is statefulset.TARGET


def test_its_facts_hold_of_what_it_renders() -> None:
    check_facts(statefulset.TARGET)


def test_it_renders_the_job_its_way() -> None:
    objects, found = render(plan(), 'statefulset')
    assert not [d for d in found if d.is_error]
    (worker,) = [o for o in workloads(objects) if o["metadata"]["name"] == "tiny-worker"]
    spec = worker["spec"]
    assert (spec["replicas"], spec["podManagementPolicy"], spec["serviceName"]) == (2, "Parallel", "tiny")
