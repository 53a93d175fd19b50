"""msgen.targets.jobset: one JobSet, a replicated Job per role; every fact it declares holds of
what it renders, and the pod host names it derives (two characters longer) are checked."""

from __future__ import annotations

from msgen import targets
from msgen.targets import jobset

from .plugin_plans import plan, render, workloads
from .test_target_plugins import check_facts
from .conftest import msgen
from .test_errors import GOOD_SCHEDULER, GOOD_WORKER, fails, job


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


def test_jobset_host_names_are_longer_and_checked() -> None:
    # A JobSet pod's host name is <job>-<rt>-0-<i>: two characters more than other targets'.
    name = "c" * 50
    assert msgen("render", "-", input=job(GOOD_SCHEDULER + GOOD_WORKER, name=name)).exit_code == 0
    err = fails(job(GOOD_SCHEDULER + GOOD_WORKER, name=name), "--target", "jobset")
    assert f"makes the name '{name}-scheduler-0-0', which is not accepted: must be no more than 63 characters" in err
