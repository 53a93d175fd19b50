"""`--gang-scheduler kubernetes`: Kubernetes' own Workload and PodGroup (`scheduling.k8s.io/v1beta1`,
1.37 with the GenericWorkload feature gate), and every pod naming its PodGroup in
`spec.schedulingGroup`, for the default scheduler's GangScheduling plug-in (contracts §8).

Offline: every sample on every target, rendered with the option at 1.37, is valid strictly
against Kubernetes' own 1.37 schemas (the Workload, the PodGroup and each pod template), and
refused below 1.37. With a cluster that serves the API (MSGEN_TEST_KUBECONFIG; the live harness
with `--feature-gates GenericWorkload=true`), every object, and the pods its controllers would
make, is dry-run on the API server; tests/test_live_gang_kubernetes.py watches the scheduler.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen import compile_documents
from msgen.model.plan import Options
from msgen.targets import NAMES as TARGETS
from msgen.targets import lookup

from .conftest import SAMPLES, msgen, sample_files
from .kube_schemas import core_parts, kubernetes_errors
from .test_frameworks_mindspore import pod_templates

API = "scheduling.k8s.io/v1beta1"
#: Samples whose own annotation names another gang scheduler (it wins over the command line).
OWN_CHOICE = {"mindspore/resnet-gang-volcano", "mindspore/lenet-elastic-kueue"}
#: Samples whose own annotation names their target.
OWN_TARGET = {"mindspore/ascend-2x8-rank-table"}
CASES = [(s, t) for s in sample_files() for t in TARGETS]


def name_of(sample: Path) -> str:
    return sample.relative_to(SAMPLES).with_suffix("").as_posix()


def rendered(sample: Path, target: str, version: str = "1.37") -> Any:
    return msgen("render", str(sample), "--target", target, "--gang-scheduler", "kubernetes", "--kube-version", version)


def _gang(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["apiVersion"] == API]


@pytest.mark.parametrize("sample,target", CASES, ids=[f"{name_of(s)}-{t}" for s, t in CASES])
def test_every_job_is_one_gang_valid_for_kubernetes_1_37(sample: Path, target: str) -> None:
    run = rendered(sample, target)
    if run.exit_code == 1:
        # what the target refuses with the default options too (tests/expected_refusals.py)
        assert msgen("render", str(sample), "--target", target, "--kube-version", "1.37").exit_code == 1, run.stderr
        return
    assert run.exit_code == 0, run.stderr
    objects = run.objects()
    failures = [f"{part['kind']}/{part['metadata']['name']}: {error}"
                for obj in objects for part in core_parts(obj) for error in kubernetes_errors(part, "1.37")]
    assert failures == []
    gang = _gang(objects)
    volcano = any(o["apiVersion"].startswith("batch.volcano.sh/") for o in objects)  # a job's own msgen/target
    assert volcano == (lookup(target).facts.own_gang or name_of(sample) in OWN_TARGET)
    if volcano or name_of(sample) in OWN_CHOICE:
        assert gang == [], "a Volcano Job is its own gang; an annotation's choice wins"
        return
    job = gang[0]["metadata"]["name"]
    assert [(o["kind"], o["metadata"]["name"]) for o in gang] == [("Workload", job), ("PodGroup", job)]
    workload, group = gang
    (template,) = workload["spec"]["podGroupTemplates"]
    assert group["spec"]["workloadRef"] == {"workloadName": job, "templateName": template["name"]}
    assert group["spec"]["schedulingPolicy"] == template["schedulingPolicy"]
    pods = 0
    for _, pod, count in pod_templates(objects):
        assert pod["spec"]["schedulingGroup"] == {"podGroupName": job}
        assert pod["spec"].get("schedulerName", "default-scheduler") == "default-scheduler"
        pods += count
    policy = (yaml.safe_load(sample.read_text())["spec"].get("runPolicy") or {}).get("schedulingPolicy") or {}
    assert template["schedulingPolicy"] == {"gang": {"minCount": policy.get("minAvailable", pods)}}
    kinds = [o["kind"] for o in objects]
    assert kinds.index("Workload") < kinds.index("PodGroup") < min(
        i for i, o in enumerate(objects) if o["kind"] not in ("Service", "ConfigMap", "ServiceAccount", "Workload", "PodGroup"))


@pytest.mark.parametrize("version", ["1.25", "1.35", "1.36"])
def test_below_1_37_it_is_refused_with_one_positioned_error(version: str) -> None:
    run = rendered(SAMPLES / "mindspore" / "lenet-cpu.yaml", "indexed-job", version)
    assert run.exit_code == 1 and run.stdout == ""
    assert run.stderr.count(": error: ") == 1
    assert (f"lenet-cpu.yaml:5:7: error: kind: --gang-scheduler kubernetes needs Kubernetes 1.37 or newer "
            f"(its Workload API, scheduling.k8s.io/v1beta1, behind the GenericWorkload feature gate); "
            f"--kube-version is {version}") in run.stderr


def test_what_a_kubernetes_podgroup_cannot_say_is_reported() -> None:
    text = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text().replace(
        "  msReplicaSpecs:\n",
        "  runPolicy:\n    schedulingPolicy: {minAvailable: 2, queue: q1, minResources: {cpu: '4'}}\n  msReplicaSpecs:\n", 1)
    run = msgen("render", "-", "--gang-scheduler", "kubernetes", input=text)
    assert run.exit_code == 0, run.stderr
    assert "spec.runPolicy.schedulingPolicy.queue: a Kubernetes PodGroup has no queue" in run.stderr
    assert "spec.runPolicy.schedulingPolicy.minResources: a Kubernetes PodGroup has no minResources" in run.stderr
    (group,) = [o for o in run.objects() if o["kind"] == "PodGroup"]
    assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    zero = text.replace("minAvailable: 2", "minAvailable: 0")
    run = msgen("render", "-", "--gang-scheduler", "kubernetes", input=zero)
    assert run.exit_code == 1 and "minCount must be 1 or more, and the job gives 0" in run.stderr


def test_a_template_naming_another_scheduler_is_warned() -> None:
    text = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text().replace(
        "          containers:\n", "          schedulerName: my-scheduler\n          containers:\n", 1)
    run = msgen("render", "-", "--gang-scheduler", "kubernetes", input=text)
    assert run.exit_code == 0
    assert "schedulerName 'my-scheduler' is kept, but the pods' PodGroup is Kubernetes' own" in run.stderr


def test_a_cluster_that_does_not_serve_the_api_is_told_what_to_turn_on() -> None:
    text = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
    without = frozenset({"v1", "batch/v1", "scheduling.k8s.io/v1"})
    found = compile_documents(text, options=Options(gang_scheduler="kubernetes", served_apis=without))
    errors = [d.message for d in found.diagnostics if d.is_error]
    assert len(errors) == 2 and all("which the cluster does not serve" in e for e in errors)
    assert any(e.startswith("this job renders Workload (scheduling.k8s.io/v1beta1)") for e in errors)
    assert all("GenericWorkload feature gate" in e and "scheduling.k8s.io/v1beta1=true" in e for e in errors)
    served = without | {"scheduling.k8s.io/v1beta1"}
    assert compile_documents(text, options=Options(gang_scheduler="kubernetes", served_apis=served)).ok
