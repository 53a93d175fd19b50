"""`checks.name_references.problems`: msgen's own output agrees; each way a rename after msgen
breaks a name is found, and what a user's pods name (a Service of another application, a
ConfigMap the application does not deploy) is not msgen's to judge."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from msgen.checks.name_references import problems
from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen

Objects = list[dict[str, Any]]


def render(*args: str, sample: str = "mindspore/lenet-cpu.yaml") -> Objects:
    done = msgen("render", str(SAMPLES / sample), *args)
    assert done.exit_code == 0, done.stderr
    return done.objects()


def named(objects: Objects, kind: str, suffix: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"].endswith(suffix))


def worker_env(objects: Objects) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = named(objects, "Job", "-worker")["spec"]["template"]["spec"]["containers"][0]["env"]
    return env


def rename_service(objects: Objects) -> None:
    named(objects, "Service", "-scheduler-0")["metadata"]["name"] = "prod-msjob-mnist-scheduler-0"


def rename_headless(objects: Objects) -> None:
    named(objects, "Service", "mnist")["metadata"]["name"] = "prod-msjob-mnist"


def rename_jobs(objects: Objects) -> None:
    for obj in objects:
        if obj["kind"] == "Job":
            obj["metadata"]["name"] = "prod-" + obj["metadata"]["name"]


def users_own_variable(objects: Objects) -> None:
    worker_env(objects).append({"name": "REDIS", "value": "$(REDIS_SERVICE_HOST)"})
    named(objects, "Job", "-worker")["spec"]["template"]["spec"]["volumes"].append(
        {"name": "theirs", "configMap": {"name": "deployed-elsewhere"}})


CASES: list[tuple[str, tuple[str, ...], Callable[[Objects], None], list[str]]] = [
    ("the Service the Workers' variable names is renamed", ("--scheduler-address", "cluster-ip"), rename_service,
     ["Job msjob-mnist-worker: MS_SCHED_HOST=$(MSJOB_MNIST_SCHEDULER_0_SERVICE_HOST) names the variable of a "
      "Service that is not there"]),
    ("the headless Service is renamed", ("--scheduler-address", "cluster-ip"), rename_headless,
     ["Job msjob-mnist-scheduler: subdomain msjob-mnist names no Service of the output",
      "Job msjob-mnist-worker: subdomain msjob-mnist names no Service of the output"]),
    ("the Jobs are renamed (their pods' host names change)", ("--scheduler-address", "dns"), rename_jobs,
     ["Job prod-msjob-mnist-worker: MS_SCHED_HOST=msjob-mnist-scheduler-0.msjob-mnist: no pod of the output "
      "gets the host name msjob-mnist-scheduler-0"]),
    ("a user's own Service variable and ConfigMap", (), users_own_variable, []),
]


@pytest.mark.parametrize("why,args,change,expected", CASES, ids=[c[0] for c in CASES])
def test_a_broken_name_is_found(why: str, args: tuple[str, ...], change: Callable[[Objects], None],
                                expected: list[str]) -> None:
    objects = render(*args)
    assert problems(objects) == []
    broken = copy.deepcopy(objects)
    change(broken)
    assert problems(broken, config_maps=False) == expected


def test_a_config_map_volume_is_checked_when_asked() -> None:
    objects = render("--target", "pod", sample="mindspore/gpu-2x8.yaml")
    assert problems(objects) == []
    without = [o for o in objects if o["kind"] != "ConfigMap"]
    assert any("names ConfigMap" in p for p in problems(without))
    assert problems(without, config_maps=False) == []


@pytest.mark.parametrize("mode", ["cluster-ip", "dns"])
@pytest.mark.parametrize("target", TARGETS)
def test_msgens_output_agrees_for_every_target(target: str, mode: str) -> None:
    for sample in ("mindspore/widedeep-ps.yaml", "mxnet/mx-job-dist.yaml", "caffe2/resnet50-redis.yaml"):
        done = msgen("render", str(SAMPLES / sample), "--target", target, "--scheduler-address", mode)
        if done.exit_code == 0:
            assert problems(done.objects()) == [], (sample, target, mode)
