"""msgen.targets.pod: one bare Pod per replica; every fact it declares holds of what it renders,
and a job of more pods than a cluster runs is refused."""

from __future__ import annotations

from msgen import targets
from msgen.targets import pod

from .plugin_plans import plan, render, workloads
from .test_target_plugins import check_facts
from .test_errors import GOOD_SCHEDULER, GOOD_WORKER, fails, job


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
