"""Whether a manifest's text holds a job msgen compiles (or a near miss of one, whose compile
is its error): Argo CD's discover and Helm's post-renderer both ask it before compiling
anything, and must agree on the answer.

The text is parsed by msgen's own loader, as `generate` and the post-renderer will read it (a
regular expression missed `apiVersion: x # comment`, JSON, and List items); text that is not
YAML is still claimed when it names a job kind, so that the compile reports its error with a
position instead of the job being passed over in silence.
"""

from __future__ import annotations

import re
from typing import Any

from .. import kinds
from ..kinds.near_miss import compiled_or_near


def holds_job(text: str) -> bool:
    """Whether a manifest file's text holds a job kind msgen compiles."""
    known = kinds.known_kinds()
    lowered = text.lower()
    if not any(kind.lower() in lowered for _api, kind in known):
        return False
    from ..model.diagnostics import InputError
    from ..model.source import Source
    from ..yamlio.yaml_loader import load_documents

    try:  # read as `generate` will read it, by msgen's own loader
        documents = load_documents(Source("<discover>", text))
    except InputError:
        return _names_a_job(text, known)
    return any(_is_job(item) for document in documents for item in _objects(document.data))


def _objects(document: Any) -> list[Any]:
    """A document's objects: itself, or the items of a List."""
    if isinstance(document, dict) and document.get("kind") == "List":
        items = document.get("items")
        return items if isinstance(items, list) else []
    return [document]


def _is_job(item: Any) -> bool:
    """A job kind, or a near miss of one (`mindspore.cn/v1 MSJob`): compiling it reports the
    kind meant, where passing it over would leave the uncompiled job to be applied."""
    return isinstance(item, dict) and compiled_or_near(item.get("apiVersion"), item.get("kind"))


def _names_a_job(text: str, known: list[tuple[str, str]]) -> bool:
    """For text that is not YAML: an `apiVersion` and a `kind` of one job kind, written in
    YAML (indented, in a list, quoted, with a comment after) or in JSON."""

    def field(name: str, value: str) -> re.Pattern[str]:
        quoted = rf"['\"]?{re.escape(value)}['\"]?"
        return re.compile(
            rf"^[ \t-]*{name}:[ \t]*{quoted}[ \t]*(?:#.*)?$|\"{name}\"\s*:\s*\"{re.escape(value)}\"",
            re.MULTILINE,
        )

    return any(field("apiVersion", api).search(text) and field("kind", kind).search(text) for api, kind in known)
