"""The Argo CD plugin, driven exactly as the cmp-server drives it.

Read overlays/argocd/plugin.yaml; run its discover, init and generate commands in an
application directory, with Argo CD's environment and no standard input; check the output,
the namespace handling and that a broken file yields a non-zero exit and an empty stdout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from .conftest import ROOT, SAMPLES, kustomize_binary, msgen

#: Spread over the Pythons CI runs: its time is the real kustomize's, run as Argo CD's plugin runs it (tests/python_share.py).
pytestmark = pytest.mark.spread

PLUGIN = yaml.safe_load((ROOT / "overlays" / "argocd" / "plugin.yaml").read_text())
BIN = str(Path(sys.executable).parent)


def run_command(spec: dict[str, Any], app: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One of plugin.yaml's commands, as the cmp-server runs it."""
    argv = list(spec["command"]) + list(spec.get("args") or [])
    return subprocess.run(
        argv,
        cwd=app,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={"PATH": BIN + os.pathsep + os.environ.get("PATH", ""), "HOME": str(app), **env},
    )


def argocd_env(app: Path, **extra: str) -> dict[str, str]:
    return {
        "ARGOCD_APP_NAME": "training",
        "ARGOCD_APP_NAMESPACE": "team-a",
        "ARGOCD_APP_REVISION": "0123456789abcdef",
        "ARGOCD_APP_SOURCE_PATH": app.name,
        "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example/ml.git",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "KUBE_VERSION": "1.29",
        "KUBE_API_VERSIONS": "v1,batch/v1,apps/v1",
        **extra,
    }


@pytest.fixture
def app(tmp_path: Path) -> Path:
    directory = tmp_path / "app"
    directory.mkdir()
    shutil.copy(SAMPLES / "mindspore" / "standalone-worker.yaml", directory / "standalone.yaml")
    shutil.copy(SAMPLES / "mindspore" / "widedeep-ps.yaml", directory / "ps.yaml")
    (directory / "config.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n")
    return directory


def test_plugin_file_is_a_config_management_plugin() -> None:
    assert PLUGIN["apiVersion"] == "argoproj.io/v1alpha1"
    assert PLUGIN["kind"] == "ConfigManagementPlugin"
    assert PLUGIN["spec"]["generate"]["command"]


def test_discover_matches_job_directories_only(app: Path, tmp_path: Path) -> None:
    found = run_command(PLUGIN["spec"]["discover"]["find"], app, argocd_env(app))
    assert found.returncode == 0
    assert found.stdout.split() == ["ps.yaml", "standalone.yaml"]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
    assert run_command(PLUGIN["spec"]["discover"]["find"], plain, argocd_env(plain)).stdout == ""


def test_generate_renders_with_argo_cds_environment(app: Path) -> None:
    init = PLUGIN["spec"].get("init")
    if init:
        assert run_command(init, app, argocd_env(app)).returncode == 0
    env = argocd_env(app, ARGOCD_ENV_MSGEN_TARGET="pod", PARAM_SCHEDULER_ADDRESS="dns")
    done = run_command(PLUGIN["spec"]["generate"], app, env)
    assert done.returncode == 0, done.stderr
    expected = msgen(
        "render", str(app), "--namespace", "team-a", "--kube-version", "1.29",
        "--target", "pod", "--scheduler-address", "dns", "--gitops",
    )
    assert done.stdout == expected.stdout
    objects = [d for d in yaml.safe_load_all(done.stdout) if d]
    namespaces = {o["metadata"]["name"]: o["metadata"].get("namespace") for o in objects}
    # jobs that name no namespace get the application's; a job's own namespace wins;
    # plain manifests pass through for Argo CD to place
    assert namespaces["ms-widedeep-standalone-worker-0"] == "team-a"
    assert namespaces["ms-widedeep-ps-worker-0"] == "training"
    assert namespaces["settings"] is None
    for obj in objects:
        kubernetes_validate.validate(obj, "1.29", strict=True)


def test_parameters_win_over_plugin_env(app: Path) -> None:
    env = argocd_env(app, ARGOCD_ENV_MSGEN_TARGET="pod", PARAM_TARGET="indexed-job")
    done = run_command(PLUGIN["spec"]["generate"], app, env)
    assert "kind: Job" in done.stdout and "kind: Pod" not in done.stdout


def test_sync_waves_put_services_first(app: Path) -> None:
    done = run_command(PLUGIN["spec"]["generate"], app, argocd_env(app, PARAM_ARGOCD_SYNC_WAVES="true"))
    for obj in (d for d in yaml.safe_load_all(done.stdout) if d):
        if obj["metadata"]["name"] == "settings":
            continue
        wave = obj["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
        assert wave == ("-1" if obj["kind"] == "Service" else "0")


@pytest.mark.parametrize(
    "breakage,message",
    [
        (lambda app: (app / "ps.yaml").write_text((app / "ps.yaml").read_text().replace("replicas: 2", "replicas: -2")), "ps.yaml:"),
        (lambda app: (app / "broken.yaml").write_text("kind: [\n"), "broken.yaml:"),
        (lambda app: None, "KUBE_VERSION"),
    ],
    ids=["bad-job", "bad-yaml", "bad-env"],
)
def test_a_broken_application_prints_nothing(app: Path, breakage: Any, message: str) -> None:
    breakage(app)
    env = argocd_env(app)
    if message == "KUBE_VERSION":
        env["KUBE_VERSION"] = "1.9"
    done = run_command(PLUGIN["spec"]["generate"], app, env)
    assert done.returncode != 0
    assert done.stdout == ""
    assert message in done.stderr


def test_sidecar_component_patches_the_repo_server(tmp_path: Path) -> None:
    kustomize = kustomize_binary()
    if kustomize is None:
        pytest.skip("kustomize not installed (.ci/fetch-kustomize installs it)")
    install = tmp_path / "argocd-install"
    install.mkdir()
    (install / "repo-server.yaml").write_text(yaml.safe_dump(REPO_SERVER))
    (install / "argocd-cm.yaml").write_text(yaml.safe_dump(ARGOCD_CM))
    (install / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": ["repo-server.yaml", "argocd-cm.yaml"], "components": [os.path.relpath(ROOT / "overlays" / "argocd", install)]})
    )
    done = subprocess.run([kustomize, "build", str(install)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    objects = {o["metadata"]["name"]: o for o in yaml.safe_load_all(done.stdout)}
    assert yaml.safe_load(objects["msgen-cmp-plugin"]["data"]["plugin.yaml"]) == PLUGIN
    objects["Deployment"] = objects["argocd-repo-server"]
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    sidecar = next(c for c in pod["containers"] if c["name"] == "msgen")
    assert sidecar["command"] == ["/var/run/argocd/argocd-cmp-server"]
    assert sidecar["securityContext"]["runAsUser"] == 999  # hardened: test_sidecar_hardening.py
    mounts = {m["mountPath"]: m for m in sidecar["volumeMounts"]}
    assert set(mounts) == {"/var/run/argocd", "/home/argocd/cmp-server/plugins", "/home/argocd/cmp-server/config/plugin.yaml", "/tmp"}
    assert {v["name"] for v in pod["volumes"]} >= {m["name"] for m in sidecar["volumeMounts"]}
    kubernetes_validate.validate(objects["Deployment"], "1.29", strict=True)


# Argo CD's argocd-cm as its install manifest declares it, with a setting of the user's.
ARGOCD_CM: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "argocd-cm", "labels": {"app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}},
    "data": {"url": "https://argocd.example"},
}

# A minimal argocd-repo-server as Argo CD's install manifest declares it (the parts the patch meets).
REPO_SERVER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "argocd-repo-server"},
    "spec": {
        "selector": {"matchLabels": {"app.kubernetes.io/name": "argocd-repo-server"}},
        "template": {
            "metadata": {"labels": {"app.kubernetes.io/name": "argocd-repo-server"}},
            "spec": {
                "containers": [{"name": "argocd-repo-server", "image": "quay.io/argoproj/argocd:v2.13.0"}],
                "volumes": [{"name": "var-files", "emptyDir": {}}, {"name": "plugins", "emptyDir": {}}],
            },
        },
    },
}


# ---- applications that are kustomize overlays -------------------------------------------


@pytest.fixture
def overlay_repo(tmp_path: Path) -> Path:
    """A copy of overlays/ as an application repository; kustomize on the sidecar's PATH."""
    kustomize = kustomize_binary()
    if kustomize is None:
        pytest.skip("kustomize not installed (.ci/fetch-kustomize installs it)")
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "overlays", repo)
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "kustomize").symlink_to(kustomize)
    return repo


def sidecar_env(repo: Path, app: Path, **extra: str) -> dict[str, str]:
    """Argo CD's environment; PATH as in the sidecar image, where kustomize is installed."""
    return {**argocd_env(app, **extra), "PATH": f"{repo.parent / 'tools'}{os.pathsep}{os.environ.get('PATH', '')}"}


def run_in_sidecar(spec: dict[str, Any], app: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = list(spec["command"]) + list(spec.get("args") or [])
    return subprocess.run(
        argv,
        cwd=app,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={"HOME": str(app), **env, "PATH": BIN + os.pathsep + env["PATH"]},
    )


def sorted_objects(text: str) -> list[dict[str, Any]]:
    return sorted((d for d in yaml.safe_load_all(text) if d), key=lambda o: (o["kind"], o["metadata"]["name"]))


@pytest.mark.parametrize("overlay", ["gpu", "ascend", "production", "base"])
def test_discover_finds_kustomize_overlays_that_reach_a_job(overlay_repo: Path, overlay: str) -> None:
    app = overlay_repo / overlay
    found = run_in_sidecar(PLUGIN["spec"]["discover"]["find"], app, sidecar_env(overlay_repo, app))
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == ["kustomization.yaml"]


def test_discover_ignores_a_kustomization_without_jobs(overlay_repo: Path) -> None:
    app = overlay_repo / "plain"
    app.mkdir()
    (app / "kustomization.yaml").write_text("resources: [deploy.yaml]\n")
    (app / "deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
    found = run_in_sidecar(PLUGIN["spec"]["discover"]["find"], app, sidecar_env(overlay_repo, app))
    assert found.returncode == 0 and found.stdout == ""


def patched_job(repo: Path, overlay: str) -> Path:
    """The MSJob as `overlay` patches it, before msgen compiles it: kustomize's own build of
    the gpu overlay without its transformers (msgen.yaml, msgen-ran.yaml)."""
    unrun = repo / f"{overlay}-uncompiled"
    shutil.copytree(repo / "gpu", unrun)
    kustomization = yaml.safe_load((unrun / "kustomization.yaml").read_text())
    del kustomization["transformers"]
    (unrun / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    built = subprocess.run([str(repo.parent / "tools" / "kustomize"), "build", str(unrun)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (repo / f"{overlay}-patched.yaml").write_text(built.stdout)
    return repo / f"{overlay}-patched.yaml"


@pytest.mark.parametrize("overlay", ["gpu", "production"])
def test_generate_builds_a_kustomize_overlay_with_msgens_function(overlay_repo: Path, overlay: str) -> None:
    """The overlay's patches, then msgen with the Application's options (Argo CD's namespace
    and version, as `msgen render` would with those flags, but for the namespace itself, which
    msgen leaves to Argo CD inside the build), then the overlay's own transformers after msgen
    (production: namespace and labels)."""
    app = overlay_repo / overlay
    env = sidecar_env(overlay_repo, app, KUBE_VERSION="v1.29.4", PARAM_SCHEDULER_ADDRESS="dns")
    done = run_in_sidecar(PLUGIN["spec"]["generate"], app, env)
    assert done.returncode == 0, done.stderr
    expected = msgen(
        "render", str(patched_job(overlay_repo, overlay)), "--namespace", "team-a",
        "--kube-version", "1.29", "--scheduler-address", "dns", "--gitops",
    )
    assert expected.exit_code == 0, expected.stderr
    if overlay == "production":  # what production does after gpu, by kustomize itself
        after = overlay_repo / "production-after"
        after.mkdir()
        (after / "rendered.yaml").write_text(expected.stdout)
        settings = yaml.safe_load((app / "kustomization.yaml").read_text())
        settings.pop("transformers")  # msgen-check.yaml: it passes every object through as it is
        (after / "kustomization.yaml").write_text(yaml.safe_dump({**settings, "resources": ["rendered.yaml"]}))
        built = subprocess.run([str(overlay_repo.parent / "tools" / "kustomize"), "build", str(after)], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        expected.stdout = built.stdout
    objects = sorted_objects(done.stdout)
    wanted = sorted_objects(expected.stdout)
    if overlay != "production":  # compiled inside the build: Argo CD puts its destination on them
        assert all(o["metadata"].pop("namespace") == "team-a" for o in wanted)
    assert objects == wanted
    assert "MSJob" not in {o["kind"] for o in objects}
    assert {"Job", "Service"} <= {o["kind"] for o in objects}
    for obj in objects:
        kubernetes_validate.validate(obj, "1.29", strict=True)


def test_generate_compiles_the_jobs_a_kustomization_leaves_with_the_apps_options(overlay_repo: Path) -> None:
    app = overlay_repo / "base"
    env = sidecar_env(overlay_repo, app, ARGOCD_ENV_MSGEN_TARGET="pod")
    done = run_in_sidecar(PLUGIN["spec"]["generate"], app, env)
    assert done.returncode == 0, done.stderr
    expected = msgen("render", str(app / "msjob.yaml"), "--target", "pod", "--namespace", "team-a", "--kube-version", "1.29", "--gitops")
    assert sorted_objects(done.stdout) == sorted_objects(expected.stdout)


def test_generate_without_kustomize_in_the_sidecar_prints_nothing(overlay_repo: Path) -> None:
    app = overlay_repo / "gpu"
    env = {**argocd_env(app), "PATH": "/usr/bin:/bin"}
    if shutil.which("kustomize", path=env["PATH"]):
        pytest.skip("kustomize is installed system-wide")
    done = run_in_sidecar(PLUGIN["spec"]["generate"], app, env)
    assert done.returncode == 1
    assert done.stdout == ""
    assert "holds a kustomization, and kustomize is not installed" in done.stderr


def test_a_failing_kustomize_build_prints_nothing(overlay_repo: Path) -> None:
    app = overlay_repo / "gpu"
    (overlay_repo / "base" / "msjob.yaml").write_text(
        (overlay_repo / "base" / "msjob.yaml").read_text().replace("replicas: 1", "replicas: -1")
    )
    done = run_in_sidecar(PLUGIN["spec"]["generate"], app, sidecar_env(overlay_repo, app))
    assert done.returncode == 1
    assert done.stdout == ""
    assert "kustomize build . failed" in done.stderr


@pytest.mark.parametrize(
    "variable, hint",
    [("ARGOCD_ENV_MSGEN_TARGETS", "did you mean ARGOCD_ENV_MSGEN_TARGET?"), ("ARGOCD_ENV_MSGEN_SCHEDULER", "accepted: ARGOCD_ENV_MSGEN_TARGET")],
)
def test_a_misspelt_plugin_variable_is_an_error(app: Path, variable: str, hint: str) -> None:
    done = run_command(PLUGIN["spec"]["generate"], app, argocd_env(app, **{variable: "pod"}))
    assert done.returncode == 1
    assert done.stdout == ""
    assert f"unknown msgen variable '{variable}'" in done.stderr
    assert hint in done.stderr


def test_plugin_announces_every_option_as_a_parameter() -> None:
    from msgen.options.option_table import names

    announced = [p["name"] for p in PLUGIN["spec"]["parameters"]["static"]]
    assert announced == names("argocd")
