"""msgen.targets.jobset: one JobSet, a replicated Job per role; every fact it declares holds of
what it renders, and the pod host names it derives (two characters longer) are checked."""

from __future__ import annotations

from msgen import targets
from msgen.model.plan import Options
from msgen.targets import jobset

from .conftest import msgen
from .plugin_plans import addresses, plan, raw_pods, render, workloads
from .plugin_plans import job as tiny_job
from .test_errors import GOOD_SCHEDULER, GOOD_WORKER, fails, job
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


def test_jobset_host_names_are_longer_and_checked() -> None:
    # A JobSet pod's host name is <job>-<rt>-0-<i>: two characters more than other targets'.
    name = "c" * 50
    assert msgen("render", "-", input=job(GOOD_SCHEDULER + GOOD_WORKER, name=name)).exit_code == 0
    err = fails(job(GOOD_SCHEDULER + GOOD_WORKER, name=name), "--target", "jobset")
    assert f"makes the name '{name}-scheduler-0-0', which is not accepted: must be no more than 63 characters" in err


def test_its_entry_points_on_a_tiny_job() -> None:
    """`naming` (a Worker's host name; whether pods read their index at run time), `slots`
    (one pod template per role or per replica), `render` (the objects), `check_names` (every
    derived name a DNS label, refused for a long job name)."""
    made, options = plan(), Options(target="jobset")
    worker = made.role("Worker")
    assert worker is not None
    naming = jobset.TARGET.naming(made, options)
    assert (naming.hostname(worker, 1), naming.dynamic_index is not None) == ('tiny-worker-0-1', True)
    slots = jobset.TARGET.slots(made)
    assert [(s.role.replica_type, s.index) for s in slots] == [('Scheduler', 0), ('Worker', None)]
    objects, _ = jobset.TARGET.render(made, raw_pods(slots), addresses(made, "jobset"), options)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [('Service', 'tiny-scheduler-0'), ('JobSet', 'tiny')]
    assert jobset.TARGET.check_names(made, objects) == []
    long = plan(tiny_job(name="b" * 52))
    objects, _ = jobset.TARGET.render(long, raw_pods(jobset.TARGET.slots(long)), addresses(long, "jobset"), options)
    assert [d.is_error for d in jobset.TARGET.check_names(long, objects)][:1] == [True]
