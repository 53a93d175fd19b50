"""msgen as a Helm post-renderer, with the real Helm 3 (`--post-renderer`) and Helm 4 (plug-in).

The chart `tests/helm/training` renders an MSJob beside a ConfigMap, a ServiceAccount and a
Service. Through msgen the MSJob comes out as what `msgen render` makes of it, at its place,
and every other document exactly as Helm wrote it; a bad job fails `helm` with msgen's message
and its position in the template, and prints no manifest. Helm is built from the Go module
proxy (`python tests/live/harness/components/helm.py build`); without it those tests skip,
saying so. The stream handling itself is tested without Helm in
`tests/test_hosts_helm_post_renderer.py`.
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

from msgen.hosts.helm.post_renderer import split

from .conftest import ROOT, msgen

#: Spread over the Pythons CI runs: its time is the real Helm's (tests/python_share.py).
pytestmark = pytest.mark.spread

CHART = ROOT / "tests" / "helm" / "training"
BIN = str(Path(sys.executable).parent)
HARNESS_BIN = Path(os.environ.get("MSGEN_HARNESS_HOME", "/root/.cache/msgen-harness")) / "bin"
BUILD = ("build it with `python tests/live/harness/components/helm.py build` (Go and the Go module proxy; "
         "tests/live/go/{dir}/go.mod pins it) or name one in ${variable}")


def find_helm(major: int) -> str | None:
    variable, name = ("MSGEN_TEST_HELM", "helm") if major == 3 else ("MSGEN_TEST_HELM4", "helm4")
    for candidate in (os.environ.get(variable), str(HARNESS_BIN / name), shutil.which("helm")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            shown = subprocess.run([candidate, "version", "--short"], capture_output=True, text=True).stdout
            if shown.startswith(f"v{major}."):
                return candidate
    return None


@pytest.fixture(scope="module")
def helm3() -> str:
    found = find_helm(3)
    if found is None:
        pytest.skip("helm 3 is not here: " + BUILD.format(dir="helm", variable="MSGEN_TEST_HELM"))
    return found


@pytest.fixture(scope="module")
def helm4() -> str:
    found = find_helm(4)
    if found is None:
        pytest.skip("helm 4 is not here: " + BUILD.format(dir="helm4", variable="MSGEN_TEST_HELM4"))
    return found


def run(argv: list[str], env: dict[str, str] | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """A command with msgen's console scripts on PATH, in a HOME of nobody's."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HELM_", "XDG_"))}
    return subprocess.run(argv, capture_output=True, text=True, input=input,
                          env={**base, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), **(env or {})})


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def rendered(job_text: str, *args: str) -> list[dict[str, Any]]:
    done = msgen("render", "-", *args, input=job_text)
    assert done.exit_code == 0, done.stderr
    return documents(done.stdout)


# ---- Helm 3: --post-renderer runs msgen ----------------------------------------------------------

POST_RENDER = ["--post-renderer", "msgen-k8s", "--post-renderer-args", "helm-post-renderer"]


def test_helm3_installs_the_job_compiled_and_the_rest_as_written(helm3: str) -> None:
    plain = run([helm3, "template", "demo", str(CHART)])
    assert plain.returncode == 0, plain.stderr
    done = run([helm3, "template", "demo", str(CHART), *POST_RENDER])
    assert done.returncode == 0, done.stderr
    others = [p.text for p in split(plain.stdout) if "kind: MSJob" not in p.body]
    job = next(p for p in split(plain.stdout) if "kind: MSJob" in p.body)
    out = split(done.stdout)
    assert [p.text for p in out if p.source != job.source] == others, "every other document, byte for byte, in order"
    compiled = [d for p in out if p.source == job.source for d in documents(p.body)]
    assert compiled == rendered(job.body)
    assert [p.source for p in out].index(job.source) == [p.source for p in split(plain.stdout)].index(job.source)


def test_helm3_takes_msgens_options_as_post_renderer_args_or_env(helm3: str) -> None:
    job = next(p.body for p in split(run([helm3, "template", "demo", str(CHART)]).stdout) if "kind: MSJob" in p.body)
    by_args = run([helm3, "template", "demo", str(CHART), *POST_RENDER, "--post-renderer-args=--target=jobset"])
    assert by_args.returncode == 0, by_args.stderr
    assert [d for d in documents(by_args.stdout) if d["kind"] == "JobSet"] == \
        [d for d in rendered(job, "--target", "jobset") if d["kind"] == "JobSet"]
    by_env = run([helm3, "template", "demo", str(CHART), *POST_RENDER], env={"HELM_MSGEN_SCHEDULER_ADDRESS": "dns"})
    assert by_env.returncode == 0, by_env.stderr
    assert "$(DEMO_LENET_SCHEDULER_0_SERVICE_HOST)" not in by_env.stdout
    assert "value: demo-lenet-scheduler-0.demo-lenet" in by_env.stdout


def test_helm3_fails_with_msgens_message_and_prints_no_manifest(helm3: str) -> None:
    done = run([helm3, "template", "demo", str(CHART), "--set", "job.workers=-2", *POST_RENDER])
    assert done.returncode != 0
    assert done.stdout == ""
    # the line in the document as the template rendered it, as `helm template` shows it
    plain = run([helm3, "template", "demo", str(CHART), "--set", "job.workers=-2"]).stdout
    job = next(p.body for p in split(plain) if "kind: MSJob" in p.body)
    line = job.splitlines().index("      replicas: -2") + 1
    assert f"training/templates/msjob.yaml:{line}:17: error: spec.msReplicaSpecs.Worker.replicas: -2 is not accepted" \
        in done.stderr
    assert "msgen: 1 error(s); nothing was written" in done.stderr


# ---- Helm 4: the postrenderer/v1 plug-in ------------------------------------------------------


@pytest.fixture
def plugins(tmp_path: Path) -> dict[str, str]:
    directory = tmp_path / "plugins"
    installed = run([f"{BIN}/msgen", "install-helm-plugin", "--plugins-dir", str(directory)])
    assert installed.returncode == 0, installed.stderr
    assert f"installed {directory}/msgen/plugin.yaml" in installed.stdout
    return {"HELM_PLUGINS": str(directory), "HOME": str(tmp_path)}


def test_helm4_runs_msgen_as_its_post_renderer_plugin(helm4: str, plugins: dict[str, str]) -> None:
    listed = run([helm4, "plugin", "list"], env=plugins)
    assert "msgen" in listed.stdout and "postrenderer/v1" in listed.stdout, listed.stdout + listed.stderr
    plain = run([helm4, "template", "demo", str(CHART)], env=plugins)
    done = run([helm4, "template", "demo", str(CHART), "--post-renderer", "msgen",
                "--post-renderer-args=--target=pod"], env=plugins)
    assert done.returncode == 0, done.stderr
    job = next(d for d in documents(plain.stdout) if d["kind"] == "MSJob")
    ours = rendered(yaml.safe_dump(job), "--target", "pod")
    theirs = documents(done.stdout)
    assert [d for d in theirs if d["kind"] != "MSJob" and d not in ours] == \
        [d for d in documents(plain.stdout) if d["kind"] != "MSJob"]
    assert all(d in theirs for d in ours)
    # Helm 4 files them under the job's template again (the annotation msgen carried back)
    assert done.stdout.count("# Source: training/templates/msjob.yaml") == len(ours)


def test_helm4_shows_msgens_message_when_the_plugin_fails(helm4: str, plugins: dict[str, str]) -> None:
    done = run([helm4, "template", "demo", str(CHART), "--set", "job.workers=-2", "--post-renderer", "msgen"],
               env=plugins)
    assert done.returncode != 0 and done.stdout == ""
    assert 'plugin "msgen" exited with error' in done.stderr
    assert "training/templates/msjob.yaml:" in done.stderr
    assert "spec.msReplicaSpecs.Worker.replicas: -2 is not accepted" in done.stderr


def test_helm3_cannot_read_a_helm4_plugin_directory(helm3: str, plugins: dict[str, str]) -> None:
    """Why `install-helm-plugin` says to keep the plug-in out of Helm 3's directory."""
    done = run([helm3, "plugin", "list"], env=plugins)
    assert 'failed to load plugins' in done.stderr and 'unknown field "apiVersion"' in done.stderr


def test_the_helm4_plugin_is_not_written_where_a_helm3_plugin_lives(tmp_path: Path) -> None:
    """Refused before anything is written: a Helm 4 plug-in there would make Helm 3 load none."""
    plugins = tmp_path / "plugins"
    (plugins / "diff").mkdir(parents=True)
    (plugins / "diff" / "plugin.yaml").write_text('name: "diff"\nversion: "3.12.1"\ncommand: "$HELM_PLUGIN_DIR/bin/diff"\n')
    done = run([f"{BIN}/msgen", "install-helm-plugin", "--plugins-dir", str(plugins)])
    assert done.returncode == 1 and "Helm 3 reads" in done.stderr and "'diff'" in done.stderr, done
    assert "--plugins-dir DIR" in done.stderr
    assert sorted(p.name for p in plugins.iterdir()) == ["diff"]  # nothing written
    done = run([f"{BIN}/msgen", "install-helm-plugin"], env={"HELM_PLUGINS": str(plugins)})  # Helm's default
    assert done.returncode == 1 and not (plugins / "msgen").exists()


def test_the_helm4_plugin_is_not_written_into_the_plugins_directory_of_the_helm3_on_path(
        helm3: str, tmp_path: Path) -> None:
    shared = tmp_path / "shared-plugins"
    path = tmp_path / "bin"
    path.mkdir()
    (path / "helm").symlink_to(helm3)
    env = {"PATH": f"{path}{os.pathsep}{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HELM_PLUGINS": str(shared)}
    done = run([f"{BIN}/msgen", "install-helm-plugin"], env=env)
    assert done.returncode == 1 and f"the helm on PATH ({path / 'helm'}) is v3." in done.stderr, done
    assert not (shared / "msgen").exists()
    own = tmp_path / "helm4-plugins"
    done = run([f"{BIN}/msgen", "install-helm-plugin", "--plugins-dir", str(own)], env=env)
    assert done.returncode == 0 and (own / "msgen" / "plugin.yaml").is_file(), done
