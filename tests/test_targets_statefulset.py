"""msgen.targets.statefulset: one StatefulSet per role, pods started in parallel; every fact it
declares holds of what it renders, and its names leave room for the revision hash label."""

from __future__ import annotations

from msgen import targets
from msgen.targets import statefulset

from .plugin_plans import plan, render, workloads
from .test_target_plugins import check_facts
from .conftest import msgen
from .test_errors import GOOD_WORKER, fails, job


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
