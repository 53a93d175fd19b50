"""msgen as a Helm 4 plug-in of type `postrenderer/v1`, written by `msgen install-helm-plugin`.

Helm 4 finds a plug-in as `<plugins dir>/<name>/plugin.yaml` (helm.sh/helm/v4
`internal/plugin`: `apiVersion: v1`, `type: postrenderer/v1`, `runtime: subprocess`, the
command in `runtimeConfig.platformCommand`), runs that command with the rendered manifests on
stdin and `--post-renderer-args` appended, and installs its stdout. The command is a small
script beside plugin.yaml that runs the msgen installed with it, else the msgen on PATH, as
the kustomize plug-in does (`msgen.hosts.plugin_script`).

Helm 3 reads every plugin.yaml of its plugins directory strictly and refuses a Helm 4 one
("failed to load plugins", and then loads none of them): the directory must be Helm 4's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ... import __version__
from ..plugin_script import installed_script, plugin_script

NAME = "msgen"
COMMAND = "post-renderer"
#: How the script runs msgen. Helm 4 (4.3.1, `internal/plugin/runtime_subprocess.go`) keeps
#: a post-renderer plug-in's stderr in a buffer it never shows, even with --debug: a failed
#: install said only `plugin "msgen" exited with error`. So msgen's messages go to Helm's own
#: stderr (its parent's) where that is a terminal or a pipe; not where it is a regular file,
#: whose text Helm would then write over from its own offset (the message is lost there).
RUN = """errors="$(mktemp)" || exit 1
"$msgen" {command} "$@" 2>"$errors"
status=$?
helm_stderr="/proc/$PPID/fd/2"
if [ -s "$errors" ]; then
    if [ -w "$helm_stderr" ] && [ ! -f "$helm_stderr" ]; then
        cat "$errors" >>"$helm_stderr"
    else
        cat "$errors" >&2
    fi
fi
rm -f "$errors"
exit "$status"
"""


def default_plugins_dir(env: Mapping[str, str]) -> Path:
    """Helm's plugins directory, as `helm env HELM_PLUGINS` says (the first of a list)."""
    if env.get("HELM_PLUGINS"):
        return Path(env["HELM_PLUGINS"].split(os.pathsep)[0])
    if env.get("HELM_DATA_HOME"):
        return Path(env["HELM_DATA_HOME"]) / "plugins"
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]) / "helm" / "plugins"
    return Path(env.get("HOME") or Path.home()) / ".local" / "share" / "helm" / "plugins"


def helm3_reads(plugins_dir: Path, env: Mapping[str, str]) -> str | None:
    """Why a Helm 3 would read `plugins_dir` (where a Helm 4 plug-in makes it load none), or
    None: a Helm 3 plug-in is installed there (its plugin.yaml has no `apiVersion`), or the
    `helm` on PATH is Helm 3 and lists the directory among its plugins directories."""
    try:
        installed = sorted(p for p in plugins_dir.glob("*/plugin.yaml") if p.parent.name != NAME)
    except OSError:
        installed = []
    for path in installed:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        if not any(line.startswith("apiVersion:") for line in lines):
            return f"it holds the Helm 3 plug-in {path.parent.name!r} ({path})"
    import shutil
    import subprocess

    helm = shutil.which("helm", path=env.get("PATH"))
    if helm is None:
        return None
    try:
        shown = subprocess.run([helm, "version", "--short"], capture_output=True, text=True, timeout=20,
                               env=dict(env)).stdout.strip()
        if not shown.startswith("v3."):
            return None
        listed = subprocess.run([helm, "env", "HELM_PLUGINS"], capture_output=True, text=True, timeout=20,
                                env=dict(env)).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    target = os.path.realpath(plugins_dir)
    if any(os.path.realpath(entry) == target for entry in listed.split(os.pathsep) if entry):
        return f"the helm on PATH ({helm}) is {shown.split('+')[0]}, whose plugins directory it is"
    return None


def plugin_yaml() -> str:
    # A version that is not SemVer (a development build's) would make Helm refuse the plug-in.
    version = __version__ if all(p.isdigit() for p in __version__.split(".")) else "0.0.0"
    return f"""# Helm 4 post-renderer plug-in, written by `msgen install-helm-plugin`.
# helm install NAME CHART --post-renderer {NAME} [--post-renderer-args=--target=jobset ...]
apiVersion: v1
name: {NAME}
type: postrenderer/v1
runtime: subprocess
version: {version}
runtimeConfig:
  platformCommand:
    - command: ${{HELM_PLUGIN_DIR}}/{COMMAND}
"""


def install(plugins_dir: Path) -> list[Path]:
    """Write `<plugins_dir>/msgen/` (plugin.yaml and its command); returns what was written."""
    directory = plugins_dir / NAME
    directory.mkdir(parents=True, exist_ok=True)
    script = plugin_script(installed_script(), "Helm post-renderer", "install-helm-plugin",
                           "helm-post-renderer", RUN)
    written = []
    for name, text, mode in ((COMMAND, script, 0o755), ("plugin.yaml", plugin_yaml(), 0o644)):
        path = directory / name
        temp = directory / f".{name}.tmp"
        temp.write_text(text)
        temp.chmod(mode)
        os.replace(temp, path)
        written.append(path)
    return written
