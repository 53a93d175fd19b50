"""The Argo CD sidecar runs no program a repository names.

A repository is not trusted: whoever can push to it must not get a shell in the sidecar that
renders every application. Its kustomizations are built with the real kustomize without exec
functions; msgen's own function (`exec: {path: msgen-krm}`) still runs, as msgen's code from
the sidecar's installation, and any other function is refused with an error that names it.
An administrator may allow exec functions with the sidecar's MSGEN_ARGOCD_EXEC_FUNCTIONS.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from .test_gitops_argocd import PLUGIN, overlay_repo, run_in_sidecar, sidecar_env

__all__ = ["overlay_repo"]  # the fixture used here

GENERATE = PLUGIN["spec"]["generate"]


def evil_script(directory: Path, marker: Path) -> Path:
    script = directory / "evil.sh"
    script.write_text(f"#!/bin/sh\nid > {marker}\ncat\n")
    script.chmod(0o755)
    return script


def function_config(name: str, spec: str) -> str:
    indented = "".join(f"      {line}\n" for line in spec.splitlines())
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
        f"  name: {name}\n  annotations:\n    config.kubernetes.io/function: |\n{indented}"
    )


def hostile_app(repo: Path, spec: str, field: str = "transformers") -> tuple[Path, Path]:
    """The gpu overlay with one more function in `field`; returns the app and the marker file
    the function's script would write."""
    app = repo / "gpu"
    marker = repo.parent / "ran"
    evil_script(app, marker)
    (app / "evil.yaml").write_text(function_config("evil", spec))
    kustomization = yaml.safe_load((app / "kustomization.yaml").read_text())
    kustomization.setdefault(field, []).insert(0, "evil.yaml")
    (app / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return app, marker


@pytest.mark.parametrize(
    "spec, named",
    [
        ("exec:\n  path: ./evil.sh", "./evil.sh"),
        ("exec:\n  path: /bin/sh", "/bin/sh"),
        ("exec:\n  path: ./msgen-krm", "./msgen-krm"),  # a script of the repository's own
        ("container:\n  image: alpine", "alpine"),
        ("starlark:\n  path: x.star", "x.star"),
    ],
)
@pytest.mark.parametrize("field", ["transformers", "generators", "validators"])
def test_a_repositorys_function_is_refused_and_never_runs(
    overlay_repo: Path, spec: str, named: str, field: str
) -> None:
    app, marker = hostile_app(overlay_repo, spec, field)
    (app / "msgen-krm").write_text(f"#!/bin/sh\nid > {marker}\ncat\n")
    (app / "msgen-krm").chmod(0o755)
    done = run_in_sidecar(GENERATE, app, sidecar_env(overlay_repo, app))
    assert not marker.exists(), "the repository's program ran in the sidecar"
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert "evil.yaml" in done.stderr and named in done.stderr, done.stderr
    assert "MSGEN_ARGOCD_EXEC_FUNCTIONS" in done.stderr  # says how an administrator allows it


def test_a_function_in_a_base_is_refused(overlay_repo: Path) -> None:
    base = overlay_repo / "base"
    marker = overlay_repo.parent / "ran"
    evil_script(base, marker)
    (base / "evil.yaml").write_text(function_config("evil", "exec:\n  path: ./evil.sh"))
    (base / "kustomization.yaml").write_text("resources: [msjob.yaml]\ntransformers: [evil.yaml]\n")
    app = overlay_repo / "gpu"
    done = run_in_sidecar(GENERATE, app, sidecar_env(overlay_repo, app))
    assert not marker.exists()
    assert done.returncode == 1 and done.stdout == ""
    assert "base/evil.yaml" in done.stderr and "./evil.sh" in done.stderr, done.stderr


def test_an_inline_function_is_refused(overlay_repo: Path) -> None:
    app = overlay_repo / "gpu"
    marker = overlay_repo.parent / "ran"
    kustomization = yaml.safe_load((app / "kustomization.yaml").read_text())
    kustomization["transformers"].insert(0, function_config("evil", "exec:\n  path: /bin/sh"))
    (app / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    done = run_in_sidecar(GENERATE, app, sidecar_env(overlay_repo, app))
    assert not marker.exists()
    assert done.returncode == 1 and done.stdout == ""
    assert "/bin/sh" in done.stderr and "kustomization.yaml" in done.stderr, done.stderr


def test_a_function_kustomize_would_silently_skip_is_still_refused(overlay_repo: Path) -> None:
    """Without --enable-exec kustomize skips an exec function without a word: the build would
    differ from the one the repository's author ran. msgen names it instead."""
    app, marker = hostile_app(overlay_repo, "exec:\n  path: ./evil.sh")
    done = run_in_sidecar(GENERATE, app, sidecar_env(overlay_repo, app))
    assert done.returncode == 1 and "refused" in done.stderr


def test_msgens_own_function_runs_without_exec(overlay_repo: Path) -> None:
    """`exec: {path: msgen-krm}` still compiles: msgen's own step, from its installation."""
    app = overlay_repo / "generator"
    env = sidecar_env(overlay_repo, app)
    done = run_in_sidecar(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    kinds = {d["kind"] for d in yaml.safe_load_all(done.stdout) if d}
    assert {"Job", "Service"} <= kinds and "MSJob" not in kinds


def test_an_administrator_may_allow_exec_functions(overlay_repo: Path) -> None:
    # kustomize 4.5.4 looks for a relative path elsewhere than the kustomization: absolute here
    app, marker = hostile_app(overlay_repo, f"exec:\n  path: {overlay_repo / 'gpu' / 'evil.sh'}")
    env = {**sidecar_env(overlay_repo, app), "MSGEN_ARGOCD_EXEC_FUNCTIONS": "allow"}
    done = run_in_sidecar(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    assert marker.exists()


def test_the_setting_is_no_application_parameter(overlay_repo: Path) -> None:
    """An Application sets only ARGOCD_ENV_* variables: its own try is an unknown option."""
    app, marker = hostile_app(overlay_repo, "exec:\n  path: ./evil.sh")
    env = {**sidecar_env(overlay_repo, app), "ARGOCD_ENV_MSGEN_ARGOCD_EXEC_FUNCTIONS": "allow"}
    done = run_in_sidecar(GENERATE, app, env)
    assert done.returncode == 1 and not marker.exists()


def test_a_wrong_setting_is_an_error(overlay_repo: Path) -> None:
    app = overlay_repo / "gpu"
    env = {**sidecar_env(overlay_repo, app), "MSGEN_ARGOCD_EXEC_FUNCTIONS": "yes please"}
    done = run_in_sidecar(GENERATE, app, env)
    assert done.returncode == 1 and done.stdout == ""
    assert "MSGEN_ARGOCD_EXEC_FUNCTIONS" in done.stderr and "allow" in done.stderr


def test_a_symlink_out_of_the_repository_is_refused(overlay_repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\nstringData: {token: hunter2}\n")
    app = overlay_repo / "gpu"
    os.symlink(secret, app / "stolen.yaml")
    kustomization = yaml.safe_load((app / "kustomization.yaml").read_text())
    kustomization["resources"].append("stolen.yaml")
    (app / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    done = run_in_sidecar(GENERATE, app, sidecar_env(overlay_repo, app))
    assert done.returncode == 1 and done.stdout == ""
    assert "stolen.yaml" in done.stderr and "hunter2" not in done.stderr, done.stderr
