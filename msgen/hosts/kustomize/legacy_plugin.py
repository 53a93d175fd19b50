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
from collections.abc import Mapping
from pathlib import Path
from typing import Callable

from ... import kinds
from ..plugin_script import installed_script, plugin_script
from ...yamlio.origin import OriginFiles, find_original, yaml_files
from ...model.source import Document


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


def install(home: Path) -> list[Path]:
    """Write the plugin executable for every kind msgen compiles; returns their paths."""
    script = plugin_script(installed_script())
    return [write(home, api_version, kind, script) for api_version, kind in kinds.known_kinds()]


def write(home: Path, api_version: str, kind: str, script: str) -> Path:
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
