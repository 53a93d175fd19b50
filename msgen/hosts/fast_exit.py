"""How the console scripts leave once a render is done: without the interpreter's clean-up.

Argo CD and kustomize start `msgen render` and `msgen-krm` afresh for every build. Once the
output is flushed, tearing down some 200 modules and collecting their objects is work that
nothing needs (msgen registers no exit handlers, holds no files open for writing, and starts
no threads on the render path), so both scripts leave with `os._exit`; and both load the bulk
of a render's modules with the cycle collector paused, then freeze them.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing loads after the collector is off (msgen/__init__.py)
if TYPE_CHECKING:
    from typing import NoReturn


def render_modules_loaded() -> None:
    """Load the bulk of a render's modules, then freeze them and resume collecting (the console scripts'
    `main` turned the collector off until then)."""
    import gc

    from ..compile import driver, pipeline  # noqa: F401 - the bulk of the render's modules (and its loader)

    gc.freeze()
    gc.enable()


def leave(code: object) -> NoReturn:
    """Exit with `code` as `sys.exit(code)` would, skipping the interpreter's clean-up.

    Both streams are flushed first; one whose reader has gone makes the status 1, as click
    gives a closed pipe (without this, the interpreter would report it while shutting down).
    """
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        sys.stderr.write(f"{code}\n")
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 1
    os._exit(status)
