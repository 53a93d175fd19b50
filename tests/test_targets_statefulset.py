"""msgen.targets.statefulset: one StatefulSet per role, pods started in parallel; every fact it
declares holds of what it renders, and its names leave room for the revision hash label."""

from __future__ import annotations

from msgen import targets
from msgen.model.plan import Options
from msgen.targets import statefulset

from .conftest import msgen
from .plugin_plans import addresses, plan, raw_pods, render, workloads
from .plugin_plans import job as tiny_job
from .test_errors import GOOD_WORKER, fails, job
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


def test_statefulset_names_leave_room_for_the_revision_hash_label() -> None:
    """The StatefulSet controller labels each pod `controller-revision-hash: <set>-<hash>`
    (hash up to 10 characters): `<job>-worker` of 53 characters is accepted by the API
    server, but its pods can never be created. 52 is the longest that works."""
    fits = "w" * (52 - len("-worker"))
    assert msgen("render", "-t", "statefulset", "-", input=job(GOOD_WORKER, name=fits)).exit_code == 0
    name = fits + "w"
    err = fails(job(GOOD_WORKER, name=name), "--target", "statefulset")
    assert err.count(": error: ") == 1, err
    assert (
        f"<stdin>:4:9: error: metadata.name: job name '{name}' makes the StatefulSet "
        f"'{name}-worker' (53 characters): its pods' controller-revision-hash label would "
        "exceed 63 characters, so none could be created; accepted: a job name of at most 45 "
        "characters for target statefulset"
    ) in err


def test_its_entry_points_on_a_tiny_job() -> None:
    """`naming` (a Worker's host name; whether pods read their index at run time), `slots`
    (one pod template per role or per replica), `render` (the objects), `check_names` (every
    derived name a DNS label, refused for a long job name)."""
    made, options = plan(), Options(target="statefulset")
    worker = made.role("Worker")
    assert worker is not None
    naming = statefulset.TARGET.naming(made, options)
    assert (naming.hostname(worker, 1), naming.dynamic_index is not None) == ('tiny-worker-1', True)
    slots = statefulset.TARGET.slots(made)
    assert [(s.role.replica_type, s.index) for s in slots] == [('Scheduler', 0), ('Worker', None)]
    objects, _ = statefulset.TARGET.render(made, raw_pods(slots), addresses(made, "statefulset"), options)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [('Service', 'tiny-scheduler-0'), ('Service', 'tiny'), ('StatefulSet', 'tiny-scheduler'), ('StatefulSet', 'tiny-worker')]
    assert statefulset.TARGET.check_names(made, objects) == []
    long = plan(tiny_job(name="b" * 52))
    objects, _ = statefulset.TARGET.render(long, raw_pods(statefulset.TARGET.slots(long)), addresses(long, "statefulset"), options)
    assert [d.is_error for d in statefulset.TARGET.check_names(long, objects)][:1] == [True]
