"""msgen's Argo CD plugin in a real Argo CD: Applications on real commits, synced by Argo CD's
application controller through its repo server and the msgen sidecar, as users run them.

Runs against `tests/live/cluster up --with argocd` (MSGEN_TEST_KUBECONFIG, MSGEN_TEST_GIT_ROOT,
MSGEN_TEST_GIT_URL); skips, saying why, without them. Each test has a Git repository, an
Application and a destination namespace of its own, and removes them afterwards. The jobs'
Workers run a shell command in the harness's MindSpore image: what is tested is what Argo CD
makes of msgen's output (sync, health, prune, self-heal), not the training.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import live_addons
from .conftest import ROOT
from .live_argocd import (REPO_SERVICE, Api, App, Repo, comparison_error, drop_namespace, generate_times, job, namespace, now,
                          repo_server_log, require, resource_health, skip_reason, synced_at)
from .live_cluster import kubectl, server_version

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=str(skip_reason()))


@pytest.fixture
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Repo]:
    require()
    work = tmp_path / "work"
    work.mkdir()
    made = Repo(work, f"t-{request.node.name[5:25].replace('_', '-').strip('-')}-{int(time.time()) % 100000}")
    yield made
    made.remove()


@pytest.fixture
def destination() -> Iterator[str]:
    require()
    name = namespace()
    yield name
    drop_namespace(name)


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    require()
    server = Api()
    yield server
    server.close()


@pytest.fixture
def apps() -> Iterator[list[App]]:
    made: list[App] = []
    yield made
    for app in made:
        app.delete()


def names(kind: str, ns: str) -> list[str]:
    return sorted(item["metadata"]["name"] for item in json.loads(kubectl("get", kind, "-n", ns, "-o", "json").stdout)["items"])


def test_a_plain_job_directory_syncs(repo: Repo, destination: str, apps: list[App], api: Api) -> None:
    began = now()
    revision = repo.commit({"jobs/train.yaml": job("train", "sleep 5", scheduler=True), "README.md": "jobs\n"},
                           "a job")
    app = App(repo, "jobs", destination, api).create()
    apps.append(app)
    app.wait(f"synced at {revision}", synced_at(revision))
    # indexed-job, the default target: a Job per role, the Scheduler's Services
    assert names("jobs", destination) == ["train-scheduler", "train-worker"]
    status = app.status()
    assert sorted((r["kind"], r["name"]) for r in status["resources"]) == [
        ("Job", "train-scheduler"), ("Job", "train-worker"), ("Service", "train"), ("Service", "train-scheduler-0")]
    print(f"1 job: the plugin's generate {generate_times(repo_server_log(began))}s")  # for bench/README.md


def test_a_kustomize_overlay_running_msgen_krm_syncs(repo: Repo, destination: str, apps: list[App], api: Api) -> None:
    gpu = ROOT / "overlays" / "gpu"
    overlay = """\
resources: [../base]
patches:
  - target: {group: mindspore.gitee.com, kind: MSJob, name: train}
    patch: |
      - op: replace
        path: /spec/msReplicaSpecs/Worker/replicas
        value: 2
transformers: [msgen.yaml, msgen-ran.yaml]
"""
    revision = repo.commit({"base/job.yaml": job("train", "sleep 5"), "base/kustomization.yaml": "resources: [job.yaml]\n",
                            "overlay/kustomization.yaml": overlay, "overlay/msgen.yaml": (gpu / "msgen.yaml").read_text(),
                            "overlay/msgen-ran.yaml": (gpu / "msgen-ran.yaml").read_text()}, "an overlay")
    app = App(repo, "overlay", destination, api).create()
    apps.append(app)
    app.wait(f"synced at {revision}", synced_at(revision))
    worker = json.loads(kubectl("get", "job", "train-worker", "-n", destination, "-o", "json").stdout)
    assert worker["spec"]["completions"] == 2 and worker["spec"]["completionMode"] == "Indexed"


def test_renames_beside_msgen_sync_and_renames_above_it_fail(repo: Repo, destination: str, apps: list[App],
                                                             api: Api) -> None:
    """namePrefix in the overlay that runs msgen-krm renames the job before msgen compiles it:
    every name follows. namePrefix in an overlay above it would rename what msgen compiled
    (Services whose variables and subdomains the pods still name): Argo CD shows the build's
    error and applies nothing."""
    gpu = ROOT / "overlays" / "gpu"
    compiling = "resources: [../base]\nnamePrefix: prod-\ntransformers: [msgen.yaml, msgen-ran.yaml]\n" \
                "configurations: [msgen-kustomize.yaml]\n"
    files = {"base/job.yaml": job("train", "sleep 5", scheduler=True), "base/kustomization.yaml": "resources: [job.yaml]\n",
             "beside/kustomization.yaml": compiling, "above/kustomization.yaml": "resources: [../compiled]\nnamePrefix: v2-\n",
             "compiled/kustomization.yaml": compiling.replace("namePrefix: prod-\n", "")}
    for overlay in ("beside", "compiled"):
        for name in ("msgen.yaml", "msgen-ran.yaml", "msgen-kustomize.yaml"):
            files[f"{overlay}/{name}"] = (gpu / name).read_text()
    revision = repo.commit(files, "renames")
    beside = App(repo, "beside", destination, api).create()
    apps.append(beside)
    beside.wait(f"synced at {revision}", synced_at(revision))
    assert names("services", destination) == ["prod-train", "prod-train-scheduler-0"]
    worker = json.loads(kubectl("get", "job", "prod-train-worker", "-n", destination, "-o", "json").stdout)
    pod = worker["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert pod["subdomain"] == "prod-train" and env["MS_SCHED_HOST"] == "$(PROD_TRAIN_SCHEDULER_0_SERVICE_HOST)", env
    elsewhere = namespace()
    try:
        above = App(repo, "above", elsewhere, api).create()
        apps.append(above)
        message = above.wait("a ComparisonError", comparison_error, 300)
        assert "rename-the-job-before-msgen-runs" in message, message
        assert names("jobs", elsewhere) == [] and names("services", elsewhere) == []
    finally:
        drop_namespace(elsewhere)


def test_parameters_and_env_change_the_output(repo: Repo, destination: str, apps: list[App], api: Api) -> None:
    revision = repo.commit({"jobs/train.yaml": job("train", "sleep 5")}, "a job")
    app = App(repo, "jobs", destination, api, parameters={"target": "pod"}, env={"MSGEN_RUN_NAME": "content"}).create()
    apps.append(app)
    app.wait(f"synced at {revision}", synced_at(revision))
    kinds = {(r["kind"], r["name"]) for r in app.status()["resources"]}
    pods = [name for kind, name in kinds if kind == "Pod"]
    assert pods and not any(kind == "Job" for kind, _ in kinds), kinds
    # run-name content (ARGOCD_ENV_MSGEN_RUN_NAME): <job>-<digest>-worker-0
    assert all(name.startswith("train-") and name != "train-worker-0" for name in pods), pods


def test_a_misspelt_parameter_shows_msgens_error(repo: Repo, destination: str, apps: list[App], api: Api) -> None:
    repo.commit({"jobs/train.yaml": job("train", "sleep 5")}, "a job")
    app = App(repo, "jobs", destination, api, parameters={"targte": "pod"}).create()
    apps.append(app)
    message = app.wait("a ComparisonError", comparison_error, 300)
    assert "unknown msgen parameter 'targte' (did you mean target?)" in message, message
    assert names("jobs", destination) == [] and names("pods", destination) == []


def test_kube_version_is_the_clusters(repo: Repo, destination: str, apps: list[App], api: Api) -> None:
    """Argo CD's KUBE_VERSION is the harness's version: msgen renders for it (a Worker Job
    with a successPolicy, from 1.31), and a job's own msgen/kube-version, which wins, says
    which KUBE_VERSION it overrides (in the cmp-server's log of the plugin's stderr). Two
    Workers: a success policy says that Worker 0's success is the job's."""
    current = job("new", "sleep 5").replace("replicas: 1", "replicas: 2")
    pinned = job("old", "sleep 5").replace("replicas: 1", "replicas: 2").replace(
        "  name: old\n", "  name: old\n  annotations:\n    msgen/kube-version: \"1.29\"\n")
    began = now()
    revision = repo.commit({"jobs/new.yaml": current, "jobs/old.yaml": pinned}, "two jobs")
    app = App(repo, "jobs", destination, api).create()
    apps.append(app)
    app.wait(f"synced at {revision}", synced_at(revision))

    def worker(name: str) -> dict[str, object]:
        return dict(json.loads(kubectl("get", "job", f"{name}-worker", "-n", destination, "-o", "json").stdout)["spec"])

    assert "successPolicy" in worker("new") and "successPolicy" not in worker("old")
    version = re.escape(server_version())
    log = repo_server_log(began)
    assert re.search(rf"msgen/kube-version='1\.29' overrides KUBE_VERSION='{version}(\.[0-9]+)?'", log), log[-3000:]


TARGET_KINDS = {"indexed-job": ("Job", "{job}-worker"), "jobset": ("JobSet", "{job}"), "volcano": ("Job", "{job}")}


@pytest.mark.parametrize("target", list(TARGET_KINDS))
def test_health_progressing_then_healthy_or_degraded(target: str, repo: Repo, destination: str,
                                                     apps: list[App], api: Api) -> None:
    if target != "indexed-job":
        live_addons.require(target)
    revision = repo.commit({"jobs/ok.yaml": job("ok", "sleep 40"), "jobs/bad.yaml": job("bad", "sleep 40; exit 3")},
                           "two jobs")
    began = time.monotonic()
    app = App(repo, "jobs", destination, api, parameters={"target": target}).create()
    apps.append(app)
    app.wait(f"synced at {revision}", synced_at(revision))
    synced = time.monotonic() - began
    kind, pattern = TARGET_KINDS[target]
    ok, bad = pattern.format(job="ok"), pattern.format(job="bad")
    seen = {ok: [app.wait("health of ok", resource_health(kind, ok))],
            bad: [app.wait("health of bad", resource_health(kind, bad))]}
    assert seen[ok][0] == "Progressing" and seen[bad][0] == "Progressing", seen
    assert app.wait("ok Healthy", lambda s: resource_health(kind, ok)(s) == "Healthy", 600)
    healthy = time.monotonic() - began
    assert app.wait("bad Degraded", lambda s: resource_health(kind, bad)(s) == "Degraded", 600)
    degraded = time.monotonic() - began
    assert (app.status().get("health") or {}).get("status") == "Degraded"
    # what bench/README.md records (the jobs' own 40 s included)
    print(f"{target}: Synced {synced:.0f}s after the Application was made; {ok} Healthy at {healthy:.0f}s, "
          f"{bad} Degraded at {degraded:.0f}s")


def test_automated_sync_self_heal_and_prune_over_a_jobs_life(repo: Repo, destination: str,
                                                             apps: list[App], api: Api) -> None:
    first = repo.commit({"jobs/done.yaml": job("done", "sleep 3"), "jobs/long.yaml": job("long", "sleep 900", scheduler=True)},
                        "two jobs")
    app = App(repo, "jobs", destination, api).create()
    apps.append(app)
    app.wait(f"synced at {first}", synced_at(first))
    app.wait("done Healthy", lambda s: resource_health("Job", "done-worker")(s) == "Healthy", 600)
    done_uid = json.loads(kubectl("get", "job", "done-worker", "-n", destination, "-o", "json").stdout)["metadata"]["uid"]
    # self-heal: a Service of the running job deleted in the cluster comes back
    service = next(r["name"] for r in app.status()["resources"] if r["kind"] == "Service" and r["name"].startswith("long"))
    kubectl("delete", "service", service, "-n", destination)
    live_addons.wait_until("the deleted Service re-created by self-heal",
                           lambda: kubectl("get", "service", service, "-n", destination, check=False).returncode == 0, 300)
    # a broken commit: the running job stays, and the Application says why
    broken = repo.commit({"jobs/long.yaml": job("long", "sleep 900", scheduler=True).replace("replicas: 1", "replicas: [1")}, "bad YAML")
    app.refresh()
    message = app.wait("a ComparisonError for the bad YAML", comparison_error, 300)
    assert "long.yaml" in message, message
    assert names("jobs", destination) == ["done-worker", "long-scheduler", "long-worker"]
    misspelt = repo.commit({"jobs/long.yaml": job("long", "sleep 900", scheduler=True).replace("restartPolicy", "restartPolicyy")},
                           "a misspelt field")
    app.refresh()
    message = app.wait("a ComparisonError for the misspelt field",
                       lambda s: (comparison_error(s) or "") if "restartPolicyy" in (comparison_error(s) or "") else None,
                       300)
    assert names("jobs", destination) == ["done-worker", "long-scheduler", "long-worker"], (broken, misspelt)
    # removing a job's file prunes the job; the finished one is not run again
    fixed = repo.commit({"jobs/long.yaml": None}, "long removed")
    app.refresh()
    app.wait(f"synced at {fixed}", synced_at(fixed))
    live_addons.wait_until("long pruned", lambda: names("jobs", destination) == ["done-worker"], 300)
    after = json.loads(kubectl("get", "job", "done-worker", "-n", destination, "-o", "json").stdout)
    assert after["metadata"]["uid"] == done_uid and (after["status"].get("succeeded") or 0) == 1


def test_a_hundred_jobs_one_generate_and_the_manifest_cache(repo: Repo, destination: str, apps: list[App], api: Api,
                                                            record_property: object) -> None:
    files = {f"jobs/j{i:03d}.yaml": job(f"j{i:03d}", "true") for i in range(100)}
    revision = repo.commit(files, "a hundred jobs")
    began = now()
    app = App(repo, "jobs", destination, api, automated=False).create()
    apps.append(app)
    app.wait("compared at the commit", lambda s: (s.get("sync") or {}).get("revision") == revision
             and (s.get("sync") or {}).get("status") == "OutOfSync", 600)
    cold = repo_server_log(began)
    first = generate_times(cold)
    assert first, "the plugin's GenerateManifest call is not in the cmp-server's log"
    # an unchanged commit: a refresh is answered from Argo CD's manifest cache, not by msgen
    time.sleep(2)
    again = now()
    app.refresh()
    live_addons.wait_until("the refresh done", lambda: "argocd.argoproj.io/refresh" not in
                           (app.get()["metadata"].get("annotations") or {}), 300)
    log = repo_server_log(again)
    assert "manifest cache hit" in log and not generate_times(log), log[-3000:]
    # what bench/README.md records
    print(f"100 jobs: the plugin's generate {first[-1]:.3f}s, the repo server's {generate_times(cold, REPO_SERVICE)}s; "
          f"a refresh of the unchanged commit: manifest cache hit, the repo server's {generate_times(log, REPO_SERVICE)}s")
