"""msgen.targets.pod: one bare Pod per replica; every fact it declares holds of what it renders."""

from __future__ import annotations

from msgen import targets
from msgen.targets import pod

from .plugin_plans import plan, render, workloads
from .test_target_plugins import check_facts


def test_it_is_the_registered_target() -> None:
    assert targets.lookup('pod') is pod.TARGET


def test_its_facts_hold_of_what_it_renders() -> None:
    check_facts(pod.TARGET)


def test_it_renders_the_job_its_way() -> None:
    objects, found = render(plan(), 'pod')
    assert not [d for d in found if d.is_error]
    names = [o["metadata"]["name"] for o in workloads(objects)]
    assert names == ["tiny-scheduler-0", "tiny-worker-0", "tiny-worker-1"]
    (worker,) = [o for o in workloads(objects) if o["metadata"]["name"] == "tiny-worker-1"]
    assert (worker["spec"]["hostname"], worker["spec"]["subdomain"]) == ("tiny-worker-1", "tiny")
    assert worker["spec"]["restartPolicy"] == "OnFailure"
