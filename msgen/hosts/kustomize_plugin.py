"""msgen as a legacy kustomize exec plugin: the only exec route `kubectl kustomize` runs.

kustomize looks for an executable at `<home>/<group>/<version>/<lowercase kind>/<Kind>` and
runs it with a temporary file holding the generator's config (here: the job itself), from
the kustomization directory. `install` writes one such executable per kind msgen compiles. It
runs the `msgen` console script installed beside this interpreter, so it works whatever PATH
kustomize is started with; when that script is gone (the virtualenv was removed or recreated
without msgen) it runs the `msgen` on PATH instead, and without either it says what to do
rather than failing with "not found" (127).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Callable

from .. import kinds
from ..yamlio.origin import OriginFiles, find_original, yaml_files
from ..model.source import Document


def search_order(env: Mapping[str, str]) -> list[Path]:
    """kustomize's own order for the plugin home."""
    if env.get("KUSTOMIZE_PLUGIN_HOME"):
        return [Path(env["KUSTOMIZE_PLUGIN_HOME"])]
    home = Path(env.get("HOME") or Path.home())
    order = []
    if env.get("XDG_CONFIG_HOME"):
        order.append(Path(env["XDG_CONFIG_HOME"]) / "kustomize" / "plugin")
    order += [home / ".config" / "kustomize" / "plugin", home / "kustomize" / "plugin"]
    return order


def default_home(env: Mapping[str, str]) -> Path:
    """The first home in kustomize's order that exists, else the first it would look at."""
    order = search_order(env)
    return next((p for p in order if p.is_dir()), order[0])


def plugin_path(home: Path, api_version: str, kind: str) -> Path:
    return home / api_version / kind.lower() / kind


def installed_script() -> Path | None:
    """The `msgen` console script of this installation, where pip put it."""
    import sysconfig

    user_scheme = f"{os.name}_user" if os.name != "nt" else "nt_user"
    places = [Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))]
    if user_scheme in sysconfig.get_scheme_names():
        places.append(Path(sysconfig.get_path("scripts", user_scheme)))
    return next((p / "msgen" for p in places if (p / "msgen").is_file()), None)


def plugin_script(
    msgen: Path | None,
    what: str = "kustomize exec plugin",
    installer: str = "install-kustomize-plugin",
    command: str = "kustomize-plugin",
    run: str = 'exec "$msgen" {command} "$@"',
) -> str:
    """The plugin executable's text: `msgen` if it is still there, else msgen from PATH; it
    runs `msgen COMMAND` (as `run` says), and says to run `msgen INSTALLER` again when there
    is no msgen."""
    recorded = shlex.quote(str(msgen)) if msgen is not None else "''"
    last = run.format(command=command).rstrip("\n")
    return f"""#!/bin/sh
# {what}, written by `msgen {installer}`: runs the msgen installed
# with it, else the msgen on PATH (checked by its --version: gettext also has a msgen).
msgen={recorded}
if [ -z "$msgen" ] || [ ! -x "$msgen" ]; then
    msgen="$(command -v msgen || true)"
    if [ -z "$msgen" ] || ! "$msgen" --version 2>/dev/null | grep -q '^msgen, version '; then
        echo "$0: the msgen it was installed with is gone and no msgen is on PATH;" \\
            "install msgen, then run: msgen {installer}" >&2
        exit 1
    fi
fi
{last}
"""


def install(home: Path) -> list[Path]:
    """Write the plugin executable for every kind msgen compiles; returns their paths."""
    script = plugin_script(installed_script())
    return [_write(home, api_version, kind, script) for api_version, kind in kinds.known_kinds()]


def install_for_build(home: Path) -> list[Path]:
    """A plug-in home for one build in the Argo CD sidecar: every job kind, and the step msgen's
    own KRM function becomes there (msgen.hosts.sidecar_tree), each run by this very interpreter's
    msgen (not one found on PATH)."""
    from .sidecar_tree import STEP_API_VERSION, STEP_KIND

    def script(command: str) -> str:
        return (
            "#!/bin/sh\n# written by msgen for one build in its Argo CD sidecar\n"
            f"exec {shlex.quote(sys.executable)} -m msgen {command} \"$@\"\n"
        )

    written = [_write(home, a, k, script("kustomize-plugin")) for a, k in kinds.known_kinds()]
    return written + [_write(home, STEP_API_VERSION, STEP_KIND, script("krm-step"))]


def _write(home: Path, api_version: str, kind: str, script: str) -> Path:
    path = plugin_path(home, api_version, kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{kind}.tmp")
    temp.write_text(script)
    temp.chmod(0o755)
    os.replace(temp, path)
    return path


def locate_in(directory: str) -> Callable[[Document], Document]:
    """Re-position the config kustomize copied to a temporary file onto the user's own file."""

    files = OriginFiles(directory)

    def locate(document: Document) -> Document:
        if not isinstance(document.data, dict):
            return document
        found = find_original(yaml_files(directory), document.data, document.positions, files)
        return found if found is not None else document

    return locate
