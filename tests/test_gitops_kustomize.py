"""msgen inside the real kustomize: KRM generator, KRM transformer, legacy exec plugin.

Every build runs the kustomize binary (4.5.4 from .ci/fetch-kustomize; `kubectl kustomize`
too where kubectl exists) on the overlays in overlays/, and the objects it emits must equal
what `msgen render` emits for the same job.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ROOT, kustomize_binary, msgen

#: Spread over the Pythons CI runs: its time is the real kustomize's (tests/python_share.py).
pytestmark = pytest.mark.spread

OVERLAYS = ROOT / "overlays"
BIN = str(Path(sys.executable).parent)


@pytest.fixture(scope="module")
def kustomize() -> str:
    binary = kustomize_binary()
    if binary is None:
        pytest.skip("kustomize not installed (.ci/fetch-kustomize installs it)")
    return binary


def build(binary: str, directory: Path, *flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, "build", *flags, str(directory)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), **(env or {})},
    )


def objects(text: str) -> list[dict[str, Any]]:
    return sorted((d for d in yaml.safe_load_all(text) if d), key=lambda o: (o["kind"], o["metadata"]["name"]))


def rendered(text: str, *args: str) -> list[dict[str, Any]]:
    run = msgen("render", "-", *args, input=text)
    assert run.exit_code == 0, run.stderr
    return objects(run.stdout)


EXEC = ("--enable-alpha-plugins", "--enable-exec")


def test_krm_generator(kustomize: str) -> None:
    done = build(kustomize, OVERLAYS / "generator", *EXEC)
    assert done.returncode == 0, done.stderr
    assert objects(done.stdout) == rendered((OVERLAYS / "generator" / "msjob.yaml").read_text())


def patched_job(kustomize: str, overlay: str, tmp_path: Path) -> str:
    """The overlay's MSJob after its patches, before msgen: the same overlay minus the transformer."""
    copy = tmp_path / overlay
    shutil.copytree(OVERLAYS / overlay, copy)
    shutil.copytree(OVERLAYS / "base", tmp_path / "base")
    kustomization = yaml.safe_load((copy / "kustomization.yaml").read_text())
    del kustomization["transformers"]
    (copy / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    done = build(kustomize, copy)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("overlay", ["gpu", "ascend"])
def test_krm_transformer_compiles_the_patched_job(kustomize: str, overlay: str, tmp_path: Path) -> None:
    done = build(kustomize, OVERLAYS / overlay, *EXEC)
    assert done.returncode == 0, done.stderr
    ours = rendered(patched_job(kustomize, overlay, tmp_path))
    assert objects(done.stdout) == ours
    kinds = [o["kind"] for o in ours]
    assert "MSJob" not in kinds and kinds.count("Job") == 2


def test_overlay_patches_reach_the_compiled_env(kustomize: str) -> None:
    done = build(kustomize, OVERLAYS / "gpu", *EXEC)
    worker = next(o for o in objects(done.stdout) if o["metadata"]["name"] == "resnet50-worker")
    assert worker["spec"]["parallelism"] == 4
    container = worker["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert {"name": "MS_WORKER_NUM", "value": "4"} in container["env"]


def test_namespace_and_labels_applied_after_compilation(kustomize: str) -> None:
    gpu = objects(build(kustomize, OVERLAYS / "gpu", *EXEC).stdout)
    done = build(kustomize, OVERLAYS / "production", *EXEC)
    assert done.returncode == 0, done.stderr
    production = objects(done.stdout)
    assert len(production) == len(gpu)
    for before, after in zip(gpu, production, strict=True):
        assert after["metadata"]["namespace"] == "ml-prod"
        assert after["metadata"]["labels"] == {**before["metadata"]["labels"], "env": "production"}
        # selectors are left alone, so Services still select the pods msgen labelled
        assert after["spec"].get("selector") == before["spec"].get("selector")


def test_legacy_exec_plugin(kustomize: str, tmp_path: Path) -> None:
    home = tmp_path / "plugins"
    install = msgen("install-kustomize-plugin", "--plugin-home", str(home))
    assert install.exit_code == 0
    plugin = home / "mindspore.gitee.com" / "v1" / "msjob" / "MSJob"
    assert f"installed {plugin}" in install.stdout
    assert os.access(plugin, os.X_OK)
    done = build(kustomize, OVERLAYS / "legacy-plugin", "--enable-alpha-plugins", env={"KUSTOMIZE_PLUGIN_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert objects(done.stdout) == rendered((OVERLAYS / "legacy-plugin" / "msjob.yaml").read_text())
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        via_kubectl = subprocess.run(
            [kubectl, "kustomize", "--enable-alpha-plugins", str(OVERLAYS / "legacy-plugin")],
            capture_output=True,
            text=True,
            env={**os.environ, "KUSTOMIZE_PLUGIN_HOME": str(home)},
        )
        assert via_kubectl.returncode == 0, via_kubectl.stderr
        assert objects(via_kubectl.stdout) == objects(done.stdout)


def test_legacy_exec_plugin_outlives_its_virtualenv(kustomize: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed from a virtualenv that is then removed (or recreated without msgen), the plugin
    runs the msgen on PATH; with none there, it says what to do instead of exiting 127."""
    from msgen.hosts.kustomize import legacy_plugin as kustomize_plugin

    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "msgen").write_text(f'#!/bin/sh\nexec {BIN}/msgen "$@"\n')
    (venv_bin / "msgen").chmod(0o755)
    monkeypatch.setattr(kustomize_plugin, "installed_script", lambda: venv_bin / "msgen")
    home = tmp_path / "plugins"
    kustomize_plugin.install(home)
    overlay = OVERLAYS / "legacy-plugin"
    expected = rendered((overlay / "msjob.yaml").read_text())
    plugin_env = {"KUSTOMIZE_PLUGIN_HOME": str(home)}
    assert objects(build(kustomize, overlay, "--enable-alpha-plugins", env=plugin_env).stdout) == expected
    shutil.rmtree(tmp_path / "venv")
    done = build(kustomize, overlay, "--enable-alpha-plugins", env=plugin_env)  # msgen on PATH
    assert done.returncode == 0, done.stderr
    assert objects(done.stdout) == expected
    system_path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "msgen").is_file() or "msgen, version" not in
                                  subprocess.run([str(Path(p) / "msgen"), "--version"], capture_output=True, text=True).stdout)
    done = subprocess.run([kustomize, "build", "--enable-alpha-plugins", str(overlay)], capture_output=True,
                          text=True, env={**os.environ, "PATH": system_path, **plugin_env})
    assert done.returncode != 0 and done.stdout == ""
    assert "the msgen it was installed with is gone and no msgen is on PATH; install msgen, then run: " \
        "msgen install-kustomize-plugin" in done.stderr


BAD = "replicas: 2"


@pytest.mark.parametrize("route", ["generator", "transformer", "legacy"])
def test_a_bad_job_fails_the_build_with_msgens_message(kustomize: str, route: str, tmp_path: Path) -> None:
    shutil.copytree(OVERLAYS, tmp_path / "overlays")
    overlays = tmp_path / "overlays"
    job_file = {
        "generator": overlays / "generator" / "msjob.yaml",
        "transformer": overlays / "base" / "msjob.yaml",
        "legacy": overlays / "legacy-plugin" / "msjob.yaml",
    }[route]
    job_file.write_text(job_file.read_text().replace(BAD, "replicas: -2"))
    line = next(i for i, text in enumerate(job_file.read_text().splitlines(), 1) if "replicas: -2" in text)
    env = {}
    if route == "legacy":
        home = tmp_path / "plugins"
        assert msgen("install-kustomize-plugin", "--plugin-home", str(home)).exit_code == 0
        env["KUSTOMIZE_PLUGIN_HOME"] = str(home)
    directory = {"generator": "generator", "transformer": "ascend", "legacy": "legacy-plugin"}[route]
    flags = EXEC if route != "legacy" else ("--enable-alpha-plugins",)
    done = build(kustomize, overlays / directory, *flags, env=env)
    assert done.returncode != 0
    assert done.stdout == ""
    # the message names the user's own file and line, not kustomize's temporary copy
    assert f"{job_file}:{line}:" in done.stderr
    assert "Worker.replicas: -2 is not accepted; accepted: greater than or equal to 0" in done.stderr


# ---- hosts that skip exec KRM functions fail loudly instead of emitting the raw MSJob ------

KRM_OVERLAYS = {
    "generator": "nothing selected by Job.[noVer].[noGrp]/lenet-worker",
    "gpu": "msgen-krm-did-not-run--build-with--enable-alpha-plugins--enable-exec",
    "ascend": "msgen-krm-did-not-run--build-with--enable-alpha-plugins--enable-exec",
    "production": "msgen-krm-did-not-run--build-with--enable-alpha-plugins--enable-exec",
}


@pytest.mark.parametrize("overlay", sorted(KRM_OVERLAYS))
def test_krm_overlay_without_enable_exec_fails_loudly(kustomize: str, overlay: str) -> None:
    done = build(kustomize, OVERLAYS / overlay, "--enable-alpha-plugins")
    assert done.returncode != 0, done.stdout
    assert done.stdout == ""
    assert KRM_OVERLAYS[overlay] in done.stderr


@pytest.mark.parametrize("overlay", sorted(KRM_OVERLAYS))
def test_krm_overlay_under_kubectl_kustomize_fails_loudly(overlay: str) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    done = subprocess.run(
        [kubectl, "kustomize", "--enable-alpha-plugins", str(OVERLAYS / overlay)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", "")},
    )
    assert done.returncode != 0, done.stdout
    assert done.stdout == ""
    assert KRM_OVERLAYS[overlay] in done.stderr


@pytest.mark.parametrize("overlay", ["gpu", "production"])  # production builds on gpu
def test_a_misspelt_key_in_the_function_config_is_reported_in_the_overlays_file(
    kustomize: str, tmp_path: Path, overlay: str
) -> None:
    """kustomize 4.5.4 hands the config over without its path, and runs the function in the
    base's directory: msgen-krm finds the overlay's file all the same."""
    shutil.copytree(OVERLAYS, tmp_path / "overlays")
    config = tmp_path / "overlays" / "gpu" / "msgen.yaml"
    text = config.read_text().replace("  target: indexed-job", "  targt: pod")
    config.write_text(text)
    done = build(kustomize, tmp_path / "overlays" / overlay, *EXEC)
    assert done.returncode != 0
    line = text.splitlines().index("  targt: pod") + 1
    assert f"{config}:{line}:3: error: data.targt: unknown msgen option 'targt' (did you mean 'target'?)" in done.stderr, done.stderr
    assert "<ResourceList>" not in done.stderr


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": warning: " in line]


@pytest.mark.parametrize("target", ["statefulset", "pod"])
def test_warnings_of_a_patched_job_point_into_the_users_files(kustomize: str, target: str, tmp_path: Path) -> None:
    """kustomize hands the function a rewritten copy (`<ResourceList>`): a warning at a role
    the overlay patched (its image), or at a field left to its default (a role's
    restartPolicy), is in the user's file all the same: where that role is written."""
    shutil.copytree(OVERLAYS / "gpu", tmp_path / "gpu")
    shutil.copytree(OVERLAYS / "base", tmp_path / "base")
    config = tmp_path / "gpu" / "msgen.yaml"
    config.write_text(config.read_text().replace("target: indexed-job", f"target: {target}"))
    done = build(kustomize, tmp_path / "gpu", *EXEC)
    assert done.returncode == 0, done.stderr
    warnings = _warnings(done.stderr)
    assert warnings and not [w for w in warnings if "<ResourceList>" in w], done.stderr
    job = str(tmp_path / "base" / "msjob.yaml")
    assert all(w.startswith(f"{job}:") for w in warnings), done.stderr


def test_a_job_in_the_overlay_while_kustomize_runs_the_function_in_a_base(kustomize: str, tmp_path: Path) -> None:
    """kustomize 4.5.4 runs the function in the directory of the overlay's first base: a job
    file of the overlay's own is found through the build's kustomizations."""
    app, base = tmp_path / "app", tmp_path / "base"
    app.mkdir()
    base.mkdir()
    for name in ("msgen.yaml", "msgen-ran.yaml", "msgen-kustomize.yaml"):
        shutil.copy(OVERLAYS / "gpu" / name, app / name)
    config = app / "msgen.yaml"
    config.write_text(config.read_text().replace("target: indexed-job", "target: statefulset"))
    shutil.copy(OVERLAYS / "base" / "msjob.yaml", app / "job.yaml")
    (base / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {a: b}\n")
    (base / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (app / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": ["../base", "job.yaml"], "transformers": ["msgen.yaml", "msgen-ran.yaml"],
        "configurations": ["msgen-kustomize.yaml"]}))
    done = build(kustomize, app, *EXEC)
    assert done.returncode == 0, done.stderr
    warnings = _warnings(done.stderr)
    assert warnings and all(w.startswith(f"{app / 'job.yaml'}:") for w in warnings), done.stderr
