"""msgen.targets.indexed_job: one Indexed Job per role; every fact it declares holds of what it renders."""

from __future__ import annotations

from msgen import targets
from msgen.model.plan import Options
from msgen.targets import indexed_job

from .plugin_plans import addresses, job, plan, raw_pods, render, workloads
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


def test_its_entry_points_on_a_tiny_job() -> None:
    """`naming` (a Worker's host name; whether pods read their index at run time), `slots`
    (one pod template per role or per replica), `render` (the objects), `check_names` (every
    derived name a DNS label, refused for a long job name)."""
    made, options = plan(), Options(target="indexed-job")
    worker = made.role("Worker")
    assert worker is not None
    naming = indexed_job.TARGET.naming(made, options)
    assert (naming.hostname(worker, 1), naming.dynamic_index is not None) == ('tiny-worker-1', True)
    slots = indexed_job.TARGET.slots(made)
    assert [(s.role.replica_type, s.index) for s in slots] == [('Scheduler', 0), ('Worker', None)]
    objects, _ = indexed_job.TARGET.render(made, raw_pods(slots), addresses(made, "indexed-job"), options)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [('Service', 'tiny-scheduler-0'), ('Service', 'tiny'), ('Job', 'tiny-scheduler'), ('Job', 'tiny-worker')]
    assert indexed_job.TARGET.check_names(made, objects) == []
    long = plan(job(name="b" * 52))
    objects, _ = indexed_job.TARGET.render(long, raw_pods(indexed_job.TARGET.slots(long)), addresses(long, "indexed-job"), options)
    assert [d.is_error for d in indexed_job.TARGET.check_names(long, objects)][:1] == [True]
