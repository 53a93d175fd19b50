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

Every build is bounded (msgen.hosts.argocd.bounded_run): BUILD_TIMEOUT seconds, BUILD_MEMORY
bytes of data per process (each of msgen's steps lowers its own to plugin_home.STEP_MEMORY),
and the application's max-output-size (at most the sidecar's ceiling) of output; past a bound
kustomize is stopped with every process it started, and the message says which bound.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from ...options.option_layers import HANDOFF_VARIABLE

#: The variable that names the kustomize binary; else `kustomize` on PATH.
KUSTOMIZE_VARIABLE = "MSGEN_KUSTOMIZE"
#: Argo CD's repo server waits 60 s for a manifest by default; a build ends well before, so
#: that msgen can still compile its output and say why when it was stopped.
BUILD_TIMEOUT = 45
#: The data (RLIMIT_DATA) kustomize may map. With one of msgen's steps at its own bound and
#: msgen's process at the output ceiling, the worst tree stays within three quarters of the
#: sidecar's 1 GiB limit (bench/sidecar_bounds.py, tests/test_sidecar_bounds.py).
BUILD_MEMORY = 320 << 20


class KustomizeError(Exception):
    """kustomize is missing or its build failed; the message says which and why."""


def kustomization_in(directory: str | Path) -> Path | None:
    """The kustomization file of `directory`, or None when it is not a kustomization."""
    from ..kustomization_tree import kustomization_file

    found = kustomization_file(str(directory))
    return Path(found) if found is not None else None


#: the copy the sidecar builds, and the repository directory it copies (msgen's step maps one
#: onto the other)
TREE_VARIABLE = "MSGEN_SIDECAR_TREE"
ROOT_VARIABLE = "MSGEN_SIDECAR_ROOT"


def build(directory: str, env: Mapping[str, str], handoff: str | None = None, max_output: int = 16 << 20) -> str:
    """`kustomize build` of `directory`: msgen's function as msgen's own step, no exec
    function (unless the sidecar allows them), `handoff` (the host's options) in
    MSGEN_HOST_OPTIONS, at most `max_output` bytes of output (the application's
    max-output-size). Raises KustomizeError saying why a build failed, was refused or was
    stopped."""
    import tempfile

    from .sidecar_tree import TreeRefused, exec_allowed, prepare, verify

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
        return _build_with_exec(binary, directory, child_env, max_output)
    with tempfile.TemporaryDirectory(prefix="msgen-build-") as scratch:
        from .plugin_home import install_for_build

        home, tree = Path(scratch) / "plugins", Path(scratch) / "tree"
        try:
            prepared = prepare(Path(directory), env, tree)
            verify(prepared.app, tree, home, install_for_build(home))
        except TreeRefused as exc:
            raise KustomizeError(f"{directory} cannot be built in the msgen sidecar:\n{exc}") from None
        child_env["KUSTOMIZE_PLUGIN_HOME"] = str(home)
        # msgen's step reads its config's findings' positions from the repository's own
        # files, not from the copy whose config was rewritten (plugin_commands.krm_step)
        child_env[TREE_VARIABLE], child_env[ROOT_VARIABLE] = str(tree), str(prepared.root)
        # only a build that runs msgen's plug-ins may load plug-ins at all: without the flag
        # kustomize runs its builtins alone, whatever a remote base declares
        flags = ["--enable-alpha-plugins"] if prepared.plugins else []
        copied = (str(tree), str(prepared.root))
        return _run(binary, directory, str(prepared.app), flags, child_env, copied, max_output)


def _build_with_exec(binary: str, directory: str, child_env: dict[str, str], max_output: int) -> str:
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
        return _run(binary, directory, directory, flags, child_env, None, max_output)


def _run(
    binary: str,
    directory: str,
    built: str,
    flags: list[str],
    child_env: dict[str, str],
    copied: tuple[str, str] | None,
    max_output: int,
) -> str:
    """kustomize's output, within the build's bounds; its messages with the copy's paths
    shown as the repository's."""
    from . import bounded_run

    def shown(text: str) -> str:
        return (text if copied is None else text.replace(*copied)).strip()

    try:
        done = bounded_run.run([binary, "build", *flags, built], child_env, memory=BUILD_MEMORY,
                               max_output=max_output, timeout=BUILD_TIMEOUT)  # fmt: skip
    except bounded_run.Stopped as exc:
        said = f"; kustomize had said:\n{shown(exc.stderr)}" if shown(exc.stderr) else ""
        if exc.bound == "output":
            raise KustomizeError(
                f"kustomize build {directory} was stopped: {exc} (max-output-size); accepted: "
                f"a build whose output is within max-output-size{said}"
            ) from None
        raise KustomizeError(
            f"kustomize build {directory} was stopped: {exc}; accepted: a build that ends within "
            f"{BUILD_TIMEOUT} s (Argo CD's repo server waits 60 s){said}"
        ) from None
    except OSError as exc:
        raise KustomizeError(f"cannot run kustomize ({binary}): {exc.strerror}") from None
    stderr = shown(done.stderr)
    if done.returncode != 0 and _out_of_memory(stderr):
        from .plugin_home import STEP_MEMORY

        raise KustomizeError(
            f"kustomize build {directory} ran out of the memory msgen allows a build "
            f"({BUILD_MEMORY >> 20} MiB of data for kustomize, {STEP_MEMORY >> 20} MiB for each of "
            f"msgen's steps) and was stopped; accepted: a build within that:\n{stderr}"
        )
    if done.returncode != 0:
        raise KustomizeError(f"kustomize build {directory} failed (exit {done.returncode}):\n{stderr}")
    if stderr:
        sys.stderr.write(stderr + "\n")  # the functions' warnings: Argo CD logs a plugin's stderr
    return done.stdout


def _out_of_memory(stderr: str) -> bool:
    """Whether a failed build ran out of its memory: Go's runtime (kustomize) or Python's
    (msgen's step) says so when an allocation past RLIMIT_DATA fails."""
    markers = ("fatal error: out of memory", "runtime: out of memory", "MemoryError", "ran out of the memory it is allowed")
    return any(marker in stderr for marker in markers)
