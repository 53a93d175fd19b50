"""msgen.targets.jobset: one JobSet, a replicated Job per role; every fact it declares holds of what it renders."""

from __future__ import annotations

from msgen import targets
from msgen.targets import jobset

from .plugin_plans import plan, render, workloads
from .test_target_plugins import check_facts


def test_it_is_the_registered_target() -> None:
    assert targets.lookup('jobset') is jobset.TARGET


def test_its_facts_hold_of_what_it_renders() -> None:
    check_facts(jobset.TARGET)


def test_it_renders_the_job_its_way() -> None:
    objects, found = render(plan(), 'jobset')
    assert not [d for d in found if d.is_error]
    (jobset,) = workloads(objects)
    spec = jobset["spec"]
    assert [j["name"] for j in spec["replicatedJobs"]] == ["scheduler", "worker"]
    assert spec["network"] == {"enableDNSHostnames": True, "subdomain": "tiny"}
    assert spec["successPolicy"]["targetReplicatedJobs"] == ["worker"]
