"""namePrefix and nameSuffix around msgen, in the real kustomize, on every host path.

A rename *before* msgen compiles the job (in the overlay that runs `msgen-krm` as a
transformer, or in a kustomization holding a generator's job file, or anywhere under an Argo
CD application whose jobs the plugin compiles after the build) reaches msgen as the job's
name, so every name msgen derives follows it: the output equals `msgen render` of the renamed
job, and every name the objects use for each other agrees (`msgen/checks/name_references.py`). A
rename *after* msgen compiled the job (an overlay above) would leave the Workers'
`$(<JOB>_SCHEDULER_0_SERVICE_HOST)`, the pods' `subdomain` and the DNS names pointing at
objects that no longer exist: the configuration every msgen overlay lists
(`msgen-kustomize.yaml`) fails that build, saying what to do, and prints nothing.

Matrix: host path (KRM transformer, KRM generator, legacy exec plugin with kustomize 4.5.4 and
`kubectl kustomize`, Argo CD's plugin building an overlay) x prefix / suffix / both x
`--scheduler-address` cluster-ip / dns before msgen, and x prefix / suffix / both after it
(the refusal does not depend on the mode); the KRM transformer for every target. By default
the address modes, and the renames after msgen, are taken in turn (`tests/host_matrix.py`);
`MSGEN_FULL_MATRIX=1` builds every combination.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from msgen.checks.name_references import problems
from msgen.targets import NAMES as TARGETS

from .conftest import ROOT, kustomize_binary, msgen
from .host_matrix import in_turn
from .test_gitops_argocd import PLUGIN, argocd_env, run_command

#: Spread over the Pythons CI runs: its time is the real kustomize's (tests/python_share.py).
pytestmark = pytest.mark.spread

OVERLAYS = ROOT / "overlays"
BIN = str(Path(sys.executable).parent)
EXEC = ("--enable-alpha-plugins", "--enable-exec")
RENAMES = {"prefix": ("prod-", ""), "suffix": ("", "-v2"), "both": ("prod-", "-v2")}
MODES = ("cluster-ip", "dns")
HOSTS = ("krm-transformer", "krm-generator", "legacy-plugin", "legacy-plugin-kubectl", "argocd")
#: What the configuration makes kustomize say when a rename comes after msgen.
REFUSAL = "renamed-after-msgen-compiled-it--rename-the-job-before-msgen-runs"


@pytest.fixture(scope="module")
def kustomize() -> str:
    binary = kustomize_binary()
    if binary is None:
        pytest.skip("kustomize not installed (.ci/fetch-kustomize installs it)")
    return binary


def objects(text: str) -> list[dict[str, Any]]:
    return sorted((d for d in yaml.safe_load_all(text) if d), key=lambda o: (o["kind"], o["metadata"]["name"]))


def affix_lines(rename: str) -> str:
    prefix, suffix = RENAMES[rename]
    return (f"namePrefix: {prefix}\n" if prefix else "") + (f"nameSuffix: {suffix}\n" if suffix else "")


def renamed(name: str, rename: str) -> str:
    prefix, suffix = RENAMES[rename]
    return f"{prefix}{name}{suffix}"


def add_to(kustomization: Path, text: str) -> None:
    kustomization.write_text(kustomization.read_text() + text)


def above(tmp: Path, base: str, rename: str) -> Path:
    """An overlay above `base` that only renames."""
    directory = tmp / "above"
    directory.mkdir()
    (directory / "kustomization.yaml").write_text(f"resources: [../{base}]\n" + affix_lines(rename))
    return directory


class Build:
    """One host's build of an overlay: how to run it, and what it must give when it succeeds."""

    def __init__(self, run: Callable[[Path], subprocess.CompletedProcess[str]], expected: Callable[[], list[dict[str, Any]]]):
        self.run = run
        self.expected = expected


def run_kustomize(binary: str, *flags: str, env: dict[str, str] | None = None) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    def run(directory: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([binary, "build", *flags, str(directory)], capture_output=True, text=True,
                              env={**os.environ, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), **(env or {})})
    return run


def run_kubectl_kustomize(env: dict[str, str]) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: `kubectl kustomize` runs the legacy plugin")

    def run(directory: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kubectl, "kustomize", "--enable-alpha-plugins", str(directory)], capture_output=True,
                              text=True, env={**os.environ, **env})
    return run


def run_argocd(kustomize: str, mode: str) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    """Argo CD's cmp-server running the plugin's generate in the application directory."""
    def run(app: Path) -> subprocess.CompletedProcess[str]:
        env = argocd_env(app, MSGEN_KUSTOMIZE=kustomize, PARAM_SCHEDULER_ADDRESS=mode)
        return run_command(PLUGIN["spec"]["generate"], app, env)
    return run


def render(job_text: str, *args: str) -> list[dict[str, Any]]:
    done = msgen("render", "-", *args, input=job_text)
    assert done.exit_code == 0, done.stderr
    return objects(done.stdout)


def with_name(job_text: str, name: str, annotations: dict[str, str] | None = None) -> str:
    job = yaml.safe_load(job_text)
    job["metadata"]["name"] = name
    job["metadata"].setdefault("annotations", {}).update(annotations or {})
    return yaml.safe_dump(job, sort_keys=False)


# ---- the host paths, each laid out in a temporary copy of overlays/ ----------------------------


def krm_transformer(tmp: Path, kustomize: str, mode: str, rename: str, before: bool, target: str = "indexed-job") -> tuple[Build, Path]:
    """overlays/gpu: msgen-krm compiles the base's MSJob after the overlay's patches."""
    shutil.copytree(OVERLAYS / "base", tmp / "base")
    shutil.copytree(OVERLAYS / "gpu", tmp / "gpu")
    config = tmp / "gpu" / "msgen.yaml"
    config.write_text(config.read_text().replace("target: indexed-job", f"target: {target}\n  scheduler-address: {mode}"))
    patched = tmp / "patched"
    shutil.copytree(tmp / "gpu", patched)
    kustomization = yaml.safe_load((patched / "kustomization.yaml").read_text())
    del kustomization["transformers"], kustomization["configurations"]
    (patched / "kustomization.yaml").write_text(yaml.safe_dump(kustomization) + affix_lines(rename))

    def expected() -> list[dict[str, Any]]:
        job = run_kustomize(kustomize)(patched)
        assert job.returncode == 0, job.stderr
        return render(job.stdout, "--target", target, "--scheduler-address", mode)

    if before:
        add_to(tmp / "gpu" / "kustomization.yaml", affix_lines(rename))
        return Build(run_kustomize(kustomize, *EXEC), expected), tmp / "gpu"
    return Build(run_kustomize(kustomize, *EXEC), expected), above(tmp, "gpu", rename)


def generator_layout(tmp: Path, overlay: str, mode: str, rename: str, before: bool) -> tuple[Path, str]:
    """`overlay` (a generator) with its job set to `mode`; before: the job file moved into a
    kustomization that renames it, listed under `generators:`. Returns the overlay and the
    job's text as msgen reads it."""
    shutil.copytree(OVERLAYS / overlay, tmp / overlay)
    job_file = tmp / overlay / "msjob.yaml"
    job = yaml.safe_load(job_file.read_text())
    job["metadata"].setdefault("annotations", {})["msgen/scheduler-address"] = mode
    job_file.write_text(yaml.safe_dump(job, sort_keys=False))
    name = job["metadata"]["name"]
    if not before:
        return above(tmp, overlay, rename), job_file.read_text()
    jobs = tmp / overlay / "jobs"
    jobs.mkdir()
    job_file.rename(jobs / "msjob.yaml")
    (jobs / "kustomization.yaml").write_text("resources: [msjob.yaml]\n" + affix_lines(rename))
    kustomization = tmp / overlay / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("  - msjob.yaml", "  - jobs"))
    ran = tmp / overlay / "msgen-ran.yaml"
    if ran.exists():  # it names one of the job's Jobs, as the rename makes it
        ran.write_text(ran.read_text().replace(f"{name}-worker", f"{renamed(name, rename)}-worker"))
    return tmp / overlay, with_name((jobs / "msjob.yaml").read_text(), renamed(name, rename))


def legacy_plugin_env(tmp: Path) -> dict[str, str]:
    home = tmp / "plugins"
    assert msgen("install-kustomize-plugin", "--plugin-home", str(home)).exit_code == 0
    return {"KUSTOMIZE_PLUGIN_HOME": str(home)}


def argocd_app(tmp: Path, mode: str, rename: str, before: bool) -> tuple[Path, Callable[[], list[dict[str, Any]]]]:
    """before: an application overlay renaming the plain base, whose MSJob the plugin compiles
    after the build; after: one renaming the gpu overlay, which compiled it with msgen-krm."""
    shutil.copytree(OVERLAYS / "base", tmp / "base")
    shutil.copytree(OVERLAYS / "gpu", tmp / "gpu")
    app = above(tmp, "base" if before else "gpu", rename)
    job = (OVERLAYS / "base" / "msjob.yaml").read_text()

    def expected() -> list[dict[str, Any]]:
        return render(with_name(job, renamed("resnet50", rename)), "--scheduler-address", mode, "--namespace", "team-a",
                      "--kube-version", "1.29", "--gitops")

    return app, expected


def host_build(host: str, tmp: Path, kustomize: str, mode: str, rename: str, before: bool) -> tuple[Build, Path]:
    if host == "krm-transformer":
        return krm_transformer(tmp, kustomize, mode, rename, before)
    if host == "krm-generator":
        directory, job = generator_layout(tmp, "generator", mode, rename, before)
        return Build(run_kustomize(kustomize, *EXEC), lambda: render(job)), directory
    if host.startswith("legacy-plugin"):
        env = legacy_plugin_env(tmp)
        run = run_kubectl_kustomize(env) if host.endswith("kubectl") else run_kustomize(kustomize, "--enable-alpha-plugins", env=env)
        directory, job = generator_layout(tmp, "legacy-plugin", mode, rename, before)
        return Build(run, lambda: render(job)), directory
    app, expected = argocd_app(tmp, mode, rename, before)
    return Build(run_argocd(kustomize, mode), expected), app


# ---- the matrix ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("host", "rename", "mode"), in_turn([HOSTS, sorted(RENAMES)], [MODES]))
def test_a_rename_before_msgen_reaches_every_name(host: str, rename: str, mode: str, kustomize: str, tmp_path: Path) -> None:
    build, directory = host_build(host, tmp_path, kustomize, mode, rename, before=True)
    done = build.run(directory)
    assert done.returncode == 0, done.stderr
    built = objects(done.stdout)
    assert problems(built) == []
    assert built == build.expected()
    jobs = {o["metadata"]["labels"]["training.kubeflow.org/job-name"] for o in built}
    assert len(jobs) == 1 and jobs.pop().startswith(RENAMES[rename][0]), "the job itself was renamed"
    if mode == "cluster-ip":
        scheduler = f"{jobs_name(built)}-scheduler-0"
        assert scheduler in {o["metadata"]["name"] for o in built if o["kind"] == "Service"}


def jobs_name(built: list[dict[str, Any]]) -> str:
    return str(built[0]["metadata"]["labels"]["training.kubeflow.org/job-name"])


@pytest.mark.parametrize(("host", "rename"), in_turn([HOSTS], [sorted(RENAMES)]))
def test_a_rename_after_msgen_fails_the_build_saying_what_to_do(host: str, rename: str, kustomize: str,
                                                                tmp_path: Path) -> None:
    # The refusal does not depend on the address mode: each mode's names are broken by it
    # (test_without_the_configuration_a_rename_above_breaks_the_job_silently).
    mode = "dns" if rename == "both" else "cluster-ip"
    build, directory = host_build(host, tmp_path, kustomize, mode, rename, before=False)
    done = build.run(directory)
    assert done.returncode != 0, done.stdout
    assert done.stdout == ""
    assert REFUSAL in done.stderr
    assert "of object Job.v1.batch/" in done.stderr  # names the workload renamed


@pytest.mark.parametrize("mode", MODES)
def test_without_the_configuration_a_rename_above_breaks_the_job_silently(mode: str, kustomize: str, tmp_path: Path) -> None:
    """What the configuration is for, and that `problems` sees it: kustomize exits 0 with a
    job whose Workers name a Service that is gone and whose pods' subdomain names nothing."""
    build, directory = krm_transformer(tmp_path, kustomize, mode, "prefix", before=False)
    kustomization = tmp_path / "gpu" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("configurations:\n  - msgen-kustomize.yaml\n", ""))
    done = build.run(directory)
    assert done.returncode == 0, done.stderr
    found = problems(objects(done.stdout))
    assert any("subdomain resnet50 names no Service" in p for p in found), found
    if mode == "cluster-ip":
        assert any("$(RESNET50_SCHEDULER_0_SERVICE_HOST) names the variable of a Service that is not there" in p
                   for p in found), found
    else:
        assert any("MS_SCHED_HOST=resnet50-scheduler-0.resnet50: no pod of the output gets the host name" in p
                   for p in found), found


def test_a_rename_in_a_generators_own_overlay_fails_too(kustomize: str, tmp_path: Path) -> None:
    """kustomize runs generators before the overlay's namePrefix: the rename comes after msgen."""
    shutil.copytree(OVERLAYS / "generator", tmp_path / "generator")
    add_to(tmp_path / "generator" / "kustomization.yaml", affix_lines("prefix"))
    done = run_kustomize(kustomize, *EXEC)(tmp_path / "generator")
    assert done.returncode != 0 and done.stdout == ""
    assert REFUSAL in done.stderr


@pytest.mark.parametrize(("target", "mode"), in_turn([TARGETS], [MODES]))
def test_every_target_follows_a_rename_before_msgen(target: str, mode: str, kustomize: str, tmp_path: Path) -> None:
    build, directory = krm_transformer(tmp_path, kustomize, mode, "both", before=True, target=target)
    done = build.run(directory)
    assert done.returncode == 0, done.stderr
    built = objects(done.stdout)
    assert problems(built) == []
    assert built == build.expected()
    assert {o["metadata"]["labels"]["training.kubeflow.org/job-name"] for o in built} == {"prod-resnet50-v2"}


@pytest.mark.parametrize("target", TARGETS)
def test_every_target_refuses_a_rename_after_msgen(target: str, kustomize: str, tmp_path: Path) -> None:
    build, directory = krm_transformer(tmp_path, kustomize, "cluster-ip", "suffix", before=False, target=target)
    done = build.run(directory)
    assert done.returncode != 0 and done.stdout == ""
    assert REFUSAL in done.stderr


def test_a_namespace_above_msgen_is_still_fine(kustomize: str, tmp_path: Path) -> None:
    """Only renames are refused: a namespace, labels and annotations above msgen change no name."""
    done = run_kustomize(kustomize, *EXEC)(OVERLAYS / "production")
    assert done.returncode == 0, done.stderr
    assert problems(objects(done.stdout)) == []


def test_argo_cd_refuses_a_renamed_job_even_without_the_configuration(kustomize: str, tmp_path: Path) -> None:
    """An overlay copied before msgen-kustomize.yaml existed: the plugin sees the final objects
    and refuses the job whose names no longer agree, printing nothing."""
    build, app = host_build("argocd", tmp_path, kustomize, "cluster-ip", "prefix", before=False)
    kustomization = tmp_path / "gpu" / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("configurations:\n  - msgen-kustomize.yaml\n", ""))
    done = build.run(app)
    assert done.returncode == 1 and done.stdout == ""
    assert "Job prod-resnet50-worker: subdomain resnet50 names no Service of the output" in done.stderr
    assert "the job was renamed after msgen compiled it (namePrefix or nameSuffix in an overlay above" \
        in done.stderr
