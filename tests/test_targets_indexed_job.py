"""msgen.targets.indexed_job: one Indexed Job per role; every fact it declares holds of what it renders."""

from __future__ import annotations

from msgen import targets
from msgen.targets import indexed_job

from .plugin_plans import plan, render, workloads
from .test_target_plugins import check_facts


def test_it_is_the_registered_target() -> None:
    assert targets.lookup('indexed-job') is indexed_job.TARGET


def test_its_facts_hold_of_what_it_renders() -> None:
    check_facts(indexed_job.TARGET)


def test_it_renders_the_job_its_way() -> None:
    objects, found = render(plan(), 'indexed-job')
    assert not [d for d in found if d.is_error]
    (worker,) = [o for o in workloads(objects) if o["metadata"]["name"] == "tiny-worker"]
    assert worker["kind"] == "Job"
    spec = worker["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 2, 2)
    assert spec["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}  # worker 0 decides
