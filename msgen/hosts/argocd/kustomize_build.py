"""Argo CD applications that are kustomize overlays: built with kustomize inside the sidecar.

Argo CD's own kustomize would need build options and `msgen-krm` in the repo server. The
plugin instead runs `kustomize build --enable-alpha-plugins` itself, on a copy of the tree
in which msgen's function configs became msgen's own plug-in steps and any other function
the repository declares was refused (msgen.hosts.argocd.sidecar_tree): kustomize runs no exec function, and
no program a repository names. Then it compiles whatever MSJobs the build still holds (a base
the overlay did not compile) with the application's options. An administrator who wants the
repositories' exec functions run sets MSGEN_ARGOCD_EXEC_FUNCTIONS=allow on the sidecar: the
directory is then built as it is, with `--enable-exec` and this interpreter's `msgen-krm`
first on PATH.

The steps kustomize runs get the application's options through `MSGEN_HOST_OPTIONS`
(msgen.options.option_layers), so `KUBE_VERSION` and the Application's parameters reach them too. An
overlay that uses msgen as a legacy exec plugin (`generators:` naming a plain job file) finds
it in the plug-in home written for this build in a temporary directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from ...yamlio.inputs import KUSTOMIZATION_FILES, MANIFEST_SUFFIXES
from ...options.option_layers import HANDOFF_VARIABLE

#: The variable that names the kustomize binary; else `kustomize` on PATH.
KUSTOMIZE_VARIABLE = "MSGEN_KUSTOMIZE"
#: Argo CD's repo-server timeout is 60 s by default; a build must end well before.
BUILD_TIMEOUT = 50
_REFERENCE_FIELDS = ("resources", "components", "generators", "transformers", "bases")


class KustomizeError(Exception):
    """kustomize is missing or its build failed; the message says which and why."""


def kustomization_in(directory: str | Path) -> Path | None:
    """The kustomization file of `directory`, or None when it is not a kustomization."""
    for name in KUSTOMIZATION_FILES:
        path = Path(directory) / name
        if path.is_file():
            return path
    return None


def local_references(kustomization: Path) -> list[Path]:
    """The local files and directories a kustomization refers to (remote ones are left out)."""
    import yaml

    try:
        data = yaml.safe_load(kustomization.read_text(encoding="utf-8", errors="replace"))
    except yaml.YAMLError:
        return []
    if not isinstance(data, dict):
        return []
    found = []
    for field in _REFERENCE_FIELDS:
        entries = data.get(field)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str) and "://" not in entry and not entry.startswith("git@"):
                found.append((kustomization.parent / entry).resolve())
    return found


def files_reached(directory: Path, limit: int = 2000) -> list[Path]:
    """The YAML files a kustomization in `directory` reaches, following local references."""
    seen: set[Path] = set()
    out: list[Path] = []
    pending = [directory.resolve()]
    while pending and len(out) < limit:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        if path.is_dir():
            kustomization = kustomization_in(path)
            if kustomization is not None:
                out.append(kustomization)
                pending.extend(local_references(kustomization))
        elif path.is_file() and path.name.endswith(MANIFEST_SUFFIXES):
            out.append(path)
    return out


#: the copy the sidecar builds, and the repository directory it copies (msgen's step maps one
#: onto the other)
TREE_VARIABLE = "MSGEN_SIDECAR_TREE"
ROOT_VARIABLE = "MSGEN_SIDECAR_ROOT"


def build(directory: str, env: Mapping[str, str], handoff: str | None = None) -> str:
    """`kustomize build` of `directory`: msgen's function as msgen's own step, no exec
    function (unless the sidecar allows them), `handoff` (the host's options) in
    MSGEN_HOST_OPTIONS. Raises KustomizeError saying why a build failed or was refused."""
    import tempfile

    from .sidecar_tree import TreeRefused, exec_allowed, prepare

    binary = env.get(KUSTOMIZE_VARIABLE) or shutil.which("kustomize", path=env.get("PATH"))
    try:
        allowed = exec_allowed(env)
    except TreeRefused as exc:
        raise KustomizeError(str(exc)) from None
    if not binary:
        raise KustomizeError(
            f"{directory} holds a kustomization, and kustomize is not installed; accepted: "
            f"kustomize on PATH or named by ${KUSTOMIZE_VARIABLE} (the msgen sidecar image has it)"
        )
    child_env = dict(env)
    if handoff is not None:
        child_env[HANDOFF_VARIABLE] = handoff
    if allowed:
        return _build_with_exec(binary, directory, child_env)
    with tempfile.TemporaryDirectory(prefix="msgen-build-") as scratch:
        from .plugin_home import install_for_build

        home, tree = Path(scratch) / "plugins", Path(scratch) / "tree"
        try:
            app, root = prepare(Path(directory), env, tree)
        except TreeRefused as exc:
            raise KustomizeError(f"{directory} cannot be built in the msgen sidecar:\n{exc}") from None
        install_for_build(home)
        child_env["KUSTOMIZE_PLUGIN_HOME"] = str(home)
        # msgen's step reads its config's findings' positions from the repository's own
        # files, not from the copy whose config was rewritten (plugin_commands.krm_step)
        child_env[TREE_VARIABLE], child_env[ROOT_VARIABLE] = str(tree), str(root)
        flags = ["--enable-alpha-plugins"]
        return _run(binary, directory, str(app), flags, child_env, (str(tree), str(root)))


def _build_with_exec(binary: str, directory: str, child_env: dict[str, str]) -> str:
    """The build as it is, exec functions enabled: what MSGEN_ARGOCD_EXEC_FUNCTIONS=allow asks."""
    import tempfile

    bin_dir = str(Path(sys.executable).parent)
    child_env["PATH"] = bin_dir + os.pathsep + child_env.get("PATH", "")
    with tempfile.TemporaryDirectory(prefix="msgen-plugins-") as home:
        if not child_env.get("KUSTOMIZE_PLUGIN_HOME"):
            from ..kustomize.legacy_plugin import install

            install(Path(home))
            child_env["KUSTOMIZE_PLUGIN_HOME"] = home
        flags = ["--enable-alpha-plugins", "--enable-exec"]
        return _run(binary, directory, directory, flags, child_env, None)


def _run(
    binary: str,
    directory: str,
    built: str,
    flags: list[str],
    child_env: dict[str, str],
    copied: tuple[str, str] | None,
) -> str:
    """kustomize's output; its messages with the copy's paths shown as the repository's."""
    try:
        done = subprocess.run(
            [binary, "build", *flags, built],
            capture_output=True,
            text=True,
            env=child_env,
            stdin=subprocess.DEVNULL,
            timeout=BUILD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise KustomizeError(f"kustomize build {directory} took over {BUILD_TIMEOUT} s") from None
    except OSError as exc:
        raise KustomizeError(f"cannot run kustomize ({binary}): {exc.strerror}") from None
    stderr = done.stderr if copied is None else done.stderr.replace(*copied)
    if done.returncode != 0:
        raise KustomizeError(
            f"kustomize build {directory} failed (exit {done.returncode}):\n{stderr.strip()}"
        )
    sys.stderr.write(stderr)  # the functions' warnings: Argo CD logs a plugin's stderr
    return done.stdout
