"""A job's life under Argo CD: nothing the render or msgen's controller does makes it run again.

Argo CD's documented semantics these tests hold the output to:
- a resource of the application missing from the cluster is OutOfSync (Missing), and
  automated sync with `selfHeal: true` creates it again (user-guide/auto_sync.md); a finished
  Job created again runs again (argo-cd#8586);
- Argo CD compares the fields the desired manifest sets (three-way, with the last applied
  configuration or server-side apply); a field the cluster's controllers change that the
  manifest also sets is a difference self-heal puts back.
Each decision has a counter-check showing the same test fails for the output without it.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen.model import run_policy
from msgen.reconcile import actions, status, watch

from .conftest import SAMPLES, msgen
from .test_gitops_argocd import PLUGIN, argocd_env, run_command

GENERATE = PLUGIN["spec"]["generate"]
EVERY_API = ",".join([
    "v1", "v1/Pod", "v1/Service", "v1/ConfigMap", "batch/v1", "batch/v1/Job", "apps/v1", "apps/v1/StatefulSet",
    "jobset.x-k8s.io/v1alpha2", "jobset.x-k8s.io/v1alpha2/JobSet", "batch.volcano.sh/v1alpha1",
    "batch.volcano.sh/v1alpha1/Job", "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta1/LocalQueue",
])


def plugin_render(tmp_path: Path, sample: str, **params: str) -> tuple[list[dict[str, Any]], str]:
    """The objects and stderr of the Argo CD plugin rendering one sample, as the cmp-server runs it."""
    app = tmp_path / "app"
    app.mkdir(exist_ok=True)
    shutil.copy(SAMPLES / "mindspore" / sample, app / sample)
    parameters = [{"name": k.replace("_", "-"), "string": v} for k, v in params.items()]
    env = argocd_env(app, KUBE_VERSION="1.36.2", KUBE_API_VERSIONS=EVERY_API, ARGOCD_APP_PARAMETERS=json.dumps(parameters))
    done = run_command(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d], done.stderr


def keys(value: Any) -> set[str]:
    """Every mapping key at any depth."""
    if isinstance(value, dict):
        return set(value).union(*(keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys(v) for v in value)) if value else set()
    return set()


# ---- ttlSecondsAfterFinished ---------------------------------------------------------------


@pytest.mark.parametrize("target", ["indexed-job", "jobset", "volcano", "pod"])
def test_under_argo_cd_nothing_carries_a_ttl(tmp_path: Path, target: str) -> None:
    """The Kubernetes TTL controller (Jobs), JobSet's and Volcano's delete what carries
    ttlSecondsAfterFinished; msgen's controller deletes a bare-Pod job at the TTL its
    msgen/run-policy names. Under the plugin nothing carries one."""
    objects, stderr = plugin_render(tmp_path, "widedeep-ps.yaml", target=target)
    assert all("ttlSecondsAfterFinished" not in keys(o) for o in objects)
    policies = [run_policy.parse(o["metadata"]["annotations"][run_policy.ANNOTATION])
                for o in objects if run_policy.ANNOTATION in (o["metadata"].get("annotations") or {})]
    assert policies and all(p.ttl_seconds_after_finished is None and p.gitops for p in policies)
    assert "runPolicy.ttlSecondsAfterFinished is not rendered for a GitOps tool" in stderr
    # counter-check: the same job rendered for kubectl keeps its TTL
    plain = msgen("render", str(SAMPLES / "mindspore" / "widedeep-ps.yaml"), "--target", target)
    assert any("ttlSecondsAfterFinished" in keys(o) or "ttlSecondsAfterFinished" in json.dumps(o) for o in plain.objects())


def finished(objects: list[dict[str, Any]], *, owned: bool = False, mark: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The objects as the cluster holds them once worker 0 succeeded, an hour ago: the other
    pods still run. `mark`: metadata a GitOps tool adds (Argo CD's tracking annotation)."""
    live: list[dict[str, Any]] = json.loads(json.dumps(objects))
    for obj in live:
        meta = obj["metadata"]
        if mark:
            for field, values in mark.items():
                meta.setdefault(field, {}).update(values)
        if obj["kind"] != "Pod":
            continue
        if owned:
            meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "x", "uid": "u", "controller": True}]
        labels = meta["labels"]
        done = labels.get("training.kubeflow.org/replica-type") == "worker" and labels.get("training.kubeflow.org/replica-index") == "0"
        obj["status"] = {"phase": "Succeeded" if done else "Running", "startTime": "2026-01-01T10:00:00Z"}
        if done:
            obj["status"]["containerStatuses"] = [{"name": "mindspore", "restartCount": 0, "state": {
                "terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": "2026-01-01T11:00:00Z"}}}]
    return live


def deleted(live: list[dict[str, Any]]) -> list[str]:
    """What msgen's controller deletes of the finished job, ten hours later."""
    job = next(o for o in live if run_policy.ANNOTATION in (o["metadata"].get("annotations") or {}))
    policy, workloads, pods = watch.select(job["metadata"]["labels"]["training.kubeflow.org/job-name"], "training", live)
    found = status.aggregate(policy, workloads, pods)
    assert found.phase == "Succeeded"
    services = [o for o in live if o["kind"] == "Service"]
    now = datetime(2026, 1, 1, 21, 0, tzinfo=timezone.utc)
    due = actions.due(policy, found, workloads, pods, now, services)
    return [f"{a.kind}/{a.name}" for a in due if a.verb == "delete"]


def test_msgens_controller_deletes_no_bare_pod_argo_cd_applied(tmp_path: Path) -> None:
    """Bare Pods are the application's own resources: deleting one (cleanPodPolicy Running
    at the end, or the job's TTL) would have self-heal create it again, and it would run."""
    objects, stderr = plugin_render(tmp_path, "widedeep-ps.yaml", target="pod")
    assert deleted(finished(objects)) == []
    assert "cleanPodPolicy Running is not carried out on bare Pods a GitOps tool applies" in stderr
    # rendered for kubectl, the same job's running pods are deleted (and at its TTL, everything)
    plain = msgen("render", str(SAMPLES / "mindspore" / "widedeep-ps.yaml"), "--target", "pod").objects()
    assert "Pod/ms-widedeep-ps-scheduler-0" in deleted(finished(plain))
    # whoever rendered it, what Argo CD (annotation tracking) or Flux applied stays
    tracking = {"annotations": {"argocd.argoproj.io/tracking-id": "training:/Pod:training/x"}}
    assert deleted(finished(plain, mark=tracking)) == []
    assert deleted(finished(plain, mark={"labels": {"kustomize.toolkit.fluxcd.io/name": "training"}})) == []


def test_pods_a_job_owns_are_still_cleaned(tmp_path: Path) -> None:
    """A Job's pods are not the application's resources (Argo CD creates the Job): the
    controller may delete them; the Job re-creates none once it is suspended or complete."""
    job = (SAMPLES / "mindspore" / "widedeep-ps.yaml").read_text().replace("backoffLimit: 2", "backoffLimit: 2\n    cleanPodPolicy: All")
    app = tmp_path / "app"
    app.mkdir()
    (app / "job.yaml").write_text(job)
    done = run_command(GENERATE, app, argocd_env(app, KUBE_VERSION="1.36", ARGOCD_APP_PARAMETERS='[{"name": "target", "string": "pod"}]'))
    assert done.returncode == 0, done.stderr
    objects = [d for d in yaml.safe_load_all(done.stdout) if d]
    assert "Pod/ms-widedeep-ps-worker-0" in deleted(finished(objects, owned=True))


# ---- Kueue ----------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["indexed-job", "jobset"])
def test_kueue_workloads_set_no_suspend_for_a_sync_to_put_back(tmp_path: Path, target: str) -> None:
    """Kueue flips spec.suspend (its webhook sets it at creation, admission clears it); a
    desired manifest that sets it would differ from the admitted job, and self-heal would
    suspend the running training again. The desired manifest leaves the field to Kueue."""
    objects, _ = plugin_render(tmp_path, "lenet-cpu.yaml", target=target, kueue_queue="team-a")
    workloads = [o for o in objects if o["kind"] in ("Job", "JobSet")]
    assert workloads
    for obj in workloads:
        assert obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
        assert "suspend" not in obj["spec"]


# ---- a changed job --------------------------------------------------------------------------


def render_job(text: str, *args: str) -> list[dict[str, Any]]:
    done = msgen("render", "-", *args, input=text)
    assert done.exit_code == 0, done.stderr
    return done.objects()


def names(objects: list[dict[str, Any]]) -> set[str]:
    return {f"{o['kind']}/{o['metadata']['name']}" for o in objects}


def test_a_content_run_name_changes_with_the_job_and_only_with_it() -> None:
    job = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
    base = render_job(job, "--run-name", "content", "--kube-version", "1.29")
    run = next(o["metadata"]["name"] for o in base if o["kind"] == "Job" and o["metadata"]["name"].endswith("-worker"))
    assert run.startswith("msjob-mnist-") and len(run) == len("msjob-mnist-") + 8 + len("-worker")
    # where it runs is not what it runs: same names on another cluster version or namespace
    assert names(render_job(job, "--run-name", "content", "--kube-version", "1.36", "-n", "other")) == names(base)
    assert render_job(job, "--run-name", "content", "--kube-version", "1.29") == base  # deterministic
    # what it runs: the image, or an option that changes its objects
    changed = job.replace("mindspore-cpu:2.2.14", "mindspore-cpu:2.3.0")
    assert changed != job
    assert names(render_job(changed, "--run-name", "content", "--kube-version", "1.29")).isdisjoint(names(base))
    assert names(render_job(job, "--run-name", "content", "--kube-version", "1.29", "--scheduler-address", "dns")).isdisjoint(names(base))
    # every object of the run agrees on its name: labels, addresses, the policy's job
    policy = run_policy.parse(next(o for o in base if o["kind"] == "Job")["metadata"]["annotations"][run_policy.ANNOTATION])
    assert policy.job == run.removesuffix("-worker")
    assert names(render_job(job, "--kube-version", "1.29")) == {n.replace(policy.job, "msjob-mnist") for n in names(base)}


def test_a_content_run_name_that_no_longer_fits_is_an_error() -> None:
    job = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text().replace("name: msjob-mnist", "name: " + "l" * 50)
    assert msgen("render", "-", input=job).exit_code == 0
    done = msgen("render", "-", "--run-name", "content", input=job)
    assert done.exit_code == 1 and done.stdout == ""
    assert "63" in done.stderr


def test_run_name_from_a_parameter_or_an_annotation(tmp_path: Path) -> None:
    objects, _ = plugin_render(tmp_path, "lenet-cpu.yaml", run_name="content")
    assert all(o["metadata"]["name"].startswith("msjob-mnist-") and o["metadata"]["name"] != "msjob-mnist"
               for o in objects if o["kind"] in ("Job", "Service"))
    job = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text().replace(
        "name: msjob-mnist", "name: msjob-mnist\n  annotations: {msgen/run-name: content}")
    assert names(render_job(job)) != names(render_job((SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()))
