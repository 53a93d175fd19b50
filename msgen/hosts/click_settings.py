"""The settings every msgen command shares (`-h` as well as `--help`, help 100 columns wide).

One dict for the main group and the commands loaded on demand (plug-ins, samples, the
reconciler's), so their help reads alike; a module of its own so none of them imports
another's private names.
"""

from __future__ import annotations

from typing import Any

CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
