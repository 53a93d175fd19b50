"""The cycle collector, as msgen's console commands run it (never the library API).

`msgen render`, the plug-in commands and `msgen-krm` own their process, which ends after one
render: they pause the collector while each document compiles and is written (`paused`,
handed to the driver as `around_document`). The library API leaves the collector as it finds
it: its caller owns the process.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Python's cycle collector paused while one document compiles and is written.

    Everything a document's compilation allocates lives until its objects are written, and
    holds almost no reference cycles, so collecting then is pure cost: each full collection
    walks every live object, and a job of 8,192 bare pods paid five of them, a third of its
    time and more than linearly in the pods. The collector runs again between documents.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
