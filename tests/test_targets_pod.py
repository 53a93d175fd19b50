"""msgen.targets.pod: one bare Pod per replica; every fact it declares holds of what it renders,
and a job of more pods than a cluster runs is refused."""

from __future__ import annotations

from msgen import targets
from msgen.model.plan import Options
from msgen.targets import pod

from .plugin_plans import addresses, plan, raw_pods, render, workloads
from .plugin_plans import job as tiny_job
from .test_errors import GOOD_SCHEDULER, GOOD_WORKER, fails, job
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


def test_pod_target_refuses_a_job_of_more_pods_than_a_cluster_runs() -> None:
    text = job(GOOD_SCHEDULER + GOOD_WORKER.replace("Worker:", "Worker:\n  replicas: 100000000"))
    err = fails(text, "--target", "pod")
    assert "error: spec.msReplicaSpecs.Worker.replicas: target pod writes one Pod per replica, and this job has 100000001" in err
    # an Indexed Job's parallelism is at most 100000: the API server would refuse the Job
    err = fails(text)
    assert "replicas: 100000000 replicas of Worker are too many for target indexed-job" in err


def test_its_entry_points_on_a_tiny_job() -> None:
    """`naming` (a Worker's host name; whether pods read their index at run time), `slots`
    (one pod template per role or per replica), `render` (the objects), `check_names` (every
    derived name a DNS label, refused for a long job name)."""
    made, options = plan(), Options(target="pod")
    worker = made.role("Worker")
    assert worker is not None
    naming = pod.TARGET.naming(made, options)
    assert (naming.hostname(worker, 1), naming.dynamic_index is not None) == ('tiny-worker-1', False)
    slots = pod.TARGET.slots(made)
    assert [(s.role.replica_type, s.index) for s in slots] == [('Scheduler', 0), ('Worker', 0), ('Worker', 1)]
    objects, _ = pod.TARGET.render(made, raw_pods(slots), addresses(made, "pod"), options)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [('Service', 'tiny-scheduler-0'), ('Service', 'tiny'), ('Pod', 'tiny-scheduler-0'), ('Pod', 'tiny-worker-0'), ('Pod', 'tiny-worker-1')]
    assert pod.TARGET.check_names(made, objects) == []
    long = plan(tiny_job(name="b" * 52))
    objects, _ = pod.TARGET.render(long, raw_pods(pod.TARGET.slots(long)), addresses(long, "pod"), options)
    assert [d.is_error for d in pod.TARGET.check_names(long, objects)][:1] == [True]
