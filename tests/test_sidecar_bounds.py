"""The Argo CD sidecar's bounds: its administrator's are a ceiling that a repository or an
Application may lower, never raise; a size option has a ceiling of its own; a kustomize build
is bounded in memory, output and time, with every process it started.

Before: `max-output-size: 1Gi` in a repository's msgen.yaml was obeyed in the sidecar (a 60 KB
job then wrote 609 MB with 1.27 GB peak memory, above the sidecar's 1 GiB limit), and
`--max-output-size 99999999999999999999999999999999Ei` was accepted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from msgen.hosts.argocd import bounded_run, kustomize_build, plugin_home
from msgen.options import argocd_env

from .conftest import ROOT, SAMPLES, msgen_process
from .test_argocd_allowlist import generate, repository

#: Spread over the Pythons CI runs: its time is the real kustomize's, run as Argo CD's plugin runs it (tests/python_share.py).
pytestmark = pytest.mark.spread

JOB = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
MSGEN_YAML = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: msgen\n  annotations:\n    config.kubernetes.io/function: |\n"
              "      exec:\n        path: msgen-krm\ndata:\n  target: pod\n  max-output-size: {size}\n")  # fmt: skip


def overlay(tmp_path: Path, size: str) -> Path:
    return repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml]\ntransformers: [msgen.yaml]\n",
                                 "app/msgen.yaml": MSGEN_YAML.format(size=size)})  # fmt: skip


def test_a_repositorys_function_config_cannot_raise_the_ceiling(tmp_path: Path, any_kustomize: str) -> None:
    repo = overlay(tmp_path, "1Gi")
    done = generate(repo, any_kustomize)
    assert done.returncode == 1 and done.stdout == ""
    assert f"{repo / 'app' / 'msgen.yaml'}:11:20: error: data.max-output-size: functionConfig.data.max-output-size='1Gi' " \
           "is above the ceiling MSGEN_ARGOCD_MAX_OUTPUT_SIZE='16Mi'" in done.stderr, done.stderr
    assert "accepted: at most 16Mi" in done.stderr


def test_a_repository_may_lower_the_bound(tmp_path: Path, any_kustomize: str) -> None:
    repo = overlay(tmp_path, "2k")
    done = generate(repo, any_kustomize)
    assert done.returncode == 1 and "more than max-output-size 2k" in done.stderr, done.stderr
    (repo / "app" / "msgen.yaml").write_text(MSGEN_YAML.format(size="1Mi"))
    assert generate(repo, any_kustomize).returncode == 0


@pytest.mark.parametrize(
    "env",
    [{"ARGOCD_ENV_MSGEN_MAX_OUTPUT_SIZE": "1Gi"}, {"PARAM_MAX_OUTPUT_OBJECTS": "100000"},
     {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "max-output-size", "string": "17Mi"}])}],
    ids=["plugin-env", "parameter", "parameters-json"],
)  # fmt: skip
def test_an_application_cannot_raise_the_ceiling(tmp_path: Path, env: dict[str, str]) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "job.yaml").write_text(JOB)
    done = subprocess.run([sys.executable, "-m", "msgen", "argocd-generate", str(app)], capture_output=True, text=True,
                          env={**os.environ, "ARGOCD_APP_NAMESPACE": "team-a", **env})  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert "is above the ceiling MSGEN_ARGOCD_MAX_OUTPUT_" in done.stderr and "may be lowered, never raised" in done.stderr


def test_the_administrator_sets_the_ceiling(tmp_path: Path, any_kustomize: str) -> None:
    repo = overlay(tmp_path, "1Gi")
    assert generate(repo, any_kustomize, MSGEN_ARGOCD_MAX_OUTPUT_SIZE="2Gi").returncode == 0
    wrong = generate(repo, any_kustomize, MSGEN_ARGOCD_MAX_OUTPUT_SIZE="lots")
    assert wrong.returncode == 1 and "MSGEN_ARGOCD_MAX_OUTPUT_SIZE: 'lots' is not accepted" in wrong.stderr


def test_the_default_is_the_ceiling(tmp_path: Path) -> None:
    """Where nobody sets max-output-size, the sidecar's ceiling (16Mi) bounds the run, not
    msgen's own default (256Mi)."""
    app = tmp_path / "app"
    app.mkdir()
    wide = JOB.replace("replicas: 2", "replicas: 600").replace(
        'command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]',
        'command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]\n              env: [{name: BIG, value: "' + "x" * 30_000 + '"}]')
    (app / "job.yaml").write_text(wide)
    done = subprocess.run([sys.executable, "-m", "msgen", "argocd-generate", str(app)], capture_output=True, text=True,
                          env={**os.environ, "ARGOCD_APP_NAMESPACE": "team-a", "ARGOCD_ENV_MSGEN_TARGET": "pod"})  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert "past max-output-size 16Mi" in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("option", ["--max-output-size", "--shm-size"])
def test_a_size_option_has_a_ceiling_of_its_own(option: str) -> None:
    done = msgen_process("render", str(SAMPLES / "mindspore" / "lenet-cpu.yaml"), option, "99999999999999999999999999999999Ei")
    assert done.exit_code == 2 and "below 8Ei" in done.stderr, done.stderr
    assert msgen_process("render", str(SAMPLES / "mindspore" / "lenet-cpu.yaml"), option, "7Ei").exit_code == 0


def test_a_kustomize_build_is_stopped_at_its_memory_bound(tmp_path: Path, any_kustomize: str) -> None:
    """A JSON patch whose `copy` operations double a ConfigMap's data 40 times, no msgen in it:
    kustomize alone would take all the memory there is."""
    copies = "".join(f"    - {{op: copy, from: /data, path: /data/d{i}}}\n" for i in range(40))
    repo = repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml, cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n"
                                 f"  patch: |\n{copies}", "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                                 "data: {a: " + "x" * 1000 + "}\n"})  # fmt: skip
    done = generate(repo, any_kustomize)
    assert done.returncode == 1 and done.stdout == ""
    assert f"ran out of the memory msgen allows a build ({kustomize_build.BUILD_MEMORY >> 20} MiB" in done.stderr, done.stderr[-500:]


def test_a_kustomize_build_is_stopped_at_max_output_size(tmp_path: Path, any_kustomize: str) -> None:
    repo = repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml, cm.yaml]\n",
                                 "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: " + "x" * 300_000 + "}\n"})  # fmt: skip
    done = generate(repo, any_kustomize, ARGOCD_ENV_MSGEN_MAX_OUTPUT_SIZE="100k")
    assert done.returncode == 1 and done.stdout == ""
    assert "was stopped: its output passed 100000 bytes (max-output-size)" in done.stderr, done.stderr


def test_a_stopped_program_leaves_no_process(tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    script = f"sleep 30 & echo $! >> {marker}; sleep 30 & echo $! >> {marker}; wait"
    started = time.monotonic()
    with pytest.raises(bounded_run.Stopped, match="took over 1 s"):
        bounded_run.run(["sh", "-c", script], os.environ, memory=1 << 30, max_output=1 << 20, timeout=1)
    assert time.monotonic() - started < 20
    for pid in marker.read_text().split():
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]


def test_a_program_cannot_map_more_than_its_memory() -> None:
    done = bounded_run.run([sys.executable, "-c", "x = bytearray(200 << 20)"], os.environ, memory=64 << 20,
                           max_output=1 << 20, timeout=60)  # fmt: skip
    assert done.returncode != 0 and "MemoryError" in done.stderr


def test_the_bounds_fit_the_sidecars_memory_limit() -> None:
    """kustomize at its bound, one of msgen's steps at its own, and msgen's process compiling
    output at the ceiling (about 80 MiB: bench/sidecar_bounds.py) stay within three quarters of
    the container's limit in overlays/argocd."""
    patch = yaml.safe_load((ROOT / "overlays" / "argocd" / "repo-server-patch.yaml").read_text())
    sidecar = next(c for c in patch["spec"]["template"]["spec"]["containers"] if c["name"] == "msgen")
    limit = sidecar["resources"]["limits"]["memory"]
    assert limit.endswith("Gi") or limit.endswith("Mi")
    bytes_ = int(limit[:-2]) << (30 if limit.endswith("Gi") else 20)
    msgen_share = 80 << 20
    assert kustomize_build.BUILD_MEMORY + plugin_home.STEP_MEMORY + msgen_share <= bytes_ * 3 // 4
    assert argocd_env.CEILING_DEFAULTS["max-output-size"] == "16Mi"


def test_a_legacy_plugins_flags_cannot_raise_the_ceiling(tmp_path: Path, any_kustomize: str) -> None:
    """kustomize hands a legacy plug-in config's `argsOneLiner` to msgen as flags: the
    repository's flags, checked against the sidecar's ceilings like its function config, and
    refused as an input error naming the ceiling (checking them must not make an internal
    error, exit 70, of a value the flag's own check accepts)."""
    job = (ROOT / "overlays" / "legacy-plugin" / "msjob.yaml").read_text()
    flags = "argsOneLiner: --max-output-size 1Gi\nmetadata:\n"
    repo = repository(tmp_path, {"app/kustomization.yaml": "generators: [msjob.yaml]\n",
                                 "app/msjob.yaml": job.replace("metadata:\n", flags, 1)})  # fmt: skip
    done = generate(repo, any_kustomize)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert "msgen: error: argsOneLiner: --max-output-size='1Gi' is above the ceiling MSGEN_ARGOCD_MAX_OUTPUT_SIZE='16Mi'" \
           in done.stderr, done.stderr
    assert "internal error" not in done.stderr and "exit status 70" not in done.stderr


def test_a_step_stops_at_its_own_memory_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """msgen's step, as the plug-in home runs it, lowers its data bound before msgen starts and
    says so when the build's resources need more (it was `internal error: MemoryError`, exit
    70, a bug report asked of the user). The bound is lowered here to 64 MiB so that 40 MB of
    resources pass it."""
    monkeypatch.setattr(plugin_home, "STEP_MEMORY", 64 << 20)
    step = next(p for p in plugin_home.install_for_build(tmp_path / "home") if p.name == "Function")
    assert f"ulimit -d {64 << 10}" in step.read_text()
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: sidecar.msgen/v1\nkind: Function\nmetadata: {name: msgen}\nfunctionConfig:\n"
                      "  {apiVersion: v1, kind: ConfigMap, metadata: {name: msgen}, data: {target: pod}}\n")  # fmt: skip
    resources = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\ndata: {{a: {'x' * 4000}}}\n"
                        for i in range(10_000))  # fmt: skip
    done = subprocess.run([str(step), str(config)], input=resources, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "", done.stderr[-2000:]
    assert "msgen: error: msgen's step ran out of the memory it is allowed" in done.stderr, done.stderr[-2000:]
    assert "internal error" not in done.stderr
