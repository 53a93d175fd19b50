"""The plug-in home one build in the Argo CD sidecar uses: every job kind msgen compiles as a
legacy plug-in, and the step msgen's own KRM function becomes there (`sidecar_tree`), each run
by this very interpreter's msgen, never by one found on PATH nor a program the repository names.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from ... import kinds
from ..kustomize.legacy_plugin import write
from .sidecar_tree import STEP_API_VERSION, STEP_KIND


def install_for_build(home: Path) -> list[Path]:
    """Write the plug-in home below `home`; returns the executables written."""
    def script(command: str) -> str:
        return (
            "#!/bin/sh\n# written by msgen for one build in its Argo CD sidecar\n"
            f"exec {shlex.quote(sys.executable)} -m msgen {command} \"$@\"\n"
        )

    written = [write(home, a, k, script("kustomize-plugin")) for a, k in kinds.known_kinds()]
    return written + [write(home, STEP_API_VERSION, STEP_KIND, script("krm-step"))]
