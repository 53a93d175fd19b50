"""msgen as an Argo CD Config Management Plugin: which directories are msgen's (`discover`).

Argo CD picks this plugin for an application when `discover` prints anything. A directory is
msgen's when one of its manifests (`*.yaml`, `*.yml`, `*.json`, as Argo CD's own directory
source reads them) holds a job kind msgen compiles, at the top level or as an item of a
`kind: List`. A directory with a kustomization is built with kustomize (kustomize_build.py);
it is msgen's when what it reaches holds a job or runs msgen-krm, and discover prints its
kustomization file.

Each candidate file is parsed (`msgen.hosts.job_text`); a file that is not YAML is still
claimed when its text names a job kind, so that `generate` reports its error with a position
instead of the application silently matching no plugin. Options are read by `argocd_env`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..job_text import holds_job
from .kustomize_build import files_reached, kustomization_in
from ...yamlio.inputs import KUSTOMIZATION_FILES, MANIFEST_SUFFIXES

#: Larger files are read this far only (a plugin's discovery runs on every refresh).
_READ_AT_MOST = 8 << 20


def discover(directory: str) -> list[str]:
    """Relative paths of the files below `directory` that make it an msgen application."""
    if kustomization_in(directory) is not None:
        return _discover_kustomization(directory)
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(MANIFEST_SUFFIXES) or name in KUSTOMIZATION_FILES:
                continue
            path = os.path.join(root, name)
            if _leaves(path, directory):
                continue  # generate refuses it (inputs.Refused); discovery does not read it
            if holds_job(_read(path)):
                found.append(os.path.relpath(path, directory))
    return found


def _discover_kustomization(directory: str) -> list[str]:
    """A kustomization is the plugin's when what it reaches holds a job or runs msgen-krm."""
    kustomization = kustomization_in(directory)
    assert kustomization is not None
    for path in files_reached(Path(directory)):
        text = _read(str(path))
        if "msgen-krm" in text or holds_job(text):
            return [kustomization.name]
    return []


def _leaves(path: str, directory: str) -> bool:
    """A symbolic link out of `directory`, or no regular file (a FIFO would block the read)."""
    real = os.path.realpath(path)
    return not real.startswith(os.path.realpath(directory) + os.sep) or not os.path.isfile(real)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read(_READ_AT_MOST)
    except OSError:
        return ""
