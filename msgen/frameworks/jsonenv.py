"""JSON env values (`MX_CONFIG`, `CAFFE2_CONFIG`, `MS_CONFIG`) that carry the pod's index.

The index is spliced in as text after serialising, so that a run-time `$(VARIABLE)` stays a
bare JSON number once Kubernetes expands it, exactly as a static index is written.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INDEX = "\x00msgen-index\x00"


def with_index(document: Any, index_text: str) -> str:
    """`document` as compact JSON, with the string `INDEX` replaced by `index_text`."""
    return json.dumps(document, separators=(",", ":")).replace(json.dumps(INDEX), index_text)
