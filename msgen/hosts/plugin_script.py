"""The small executable a plug-in host runs to start msgen: kustomize's legacy plug-in and
Helm 4's post-renderer plug-in are each such a script, written by `msgen install-...`.

It runs the `msgen` console script installed beside this interpreter, so it works whatever
PATH the host is started with; when that script is gone (the virtualenv was removed or
recreated without msgen) it runs `msgen-k8s` from PATH instead, else the `msgen` on PATH
(checked by its `--version`: GNU gettext has a `msgen` too), and without either it says what
to do rather than failing with "not found" (127).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path


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
    """The plugin executable's text: `msgen` if it is still there, else msgen-k8s or msgen
    from PATH; it runs `msgen COMMAND` (as `run` says), and says to run `msgen INSTALLER`
    again when there is no msgen."""
    recorded = shlex.quote(str(msgen)) if msgen is not None else "''"
    last = run.format(command=command).rstrip("\n")
    return f"""#!/bin/sh
# {what}, written by `msgen {installer}`: runs the msgen installed
# with it, else msgen-k8s or msgen from PATH (checked by its --version: gettext also has a
# msgen).
msgen={recorded}
if [ -z "$msgen" ] || [ ! -x "$msgen" ]; then
    msgen="$(command -v msgen-k8s || command -v msgen || true)"
    if [ -z "$msgen" ] || ! "$msgen" --version 2>/dev/null | grep -q '^msgen, version '; then
        echo "$0: the msgen it was installed with is gone and no msgen is on PATH;" \\
            "install msgen, then run: msgen {installer}" >&2
        exit 1
    fi
fi
{last}
"""
