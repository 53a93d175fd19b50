"""Jobs inside a `kind: List`: compiled in place, the List's items put out one by one.

kubectl and Argo CD's directory source unpack a List; a plug-in's output is not unpacked
(argo-cd `kube.SplitYAMLToString`), so a List must not pass through whole: a job in it would
reach the cluster uncompiled, and the List itself is no resource Argo CD can manage.
"""

from __future__ import annotations

from typing import Any, Callable

from ..model.diagnostics import Diagnostic
from ..model.plan import Options
from ..model.source import Document

Compiled = tuple[list[dict[str, Any]], list[Diagnostic], bool]


def is_list(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list)


def compile_items(
    document: Document, options: Options, compile_document: Callable[[Document, Options], Compiled]
) -> Compiled:
    """Each item compiled as a document of its own, positioned in the List's text."""
    objects: list[dict[str, Any]] = []
    diagnostics: list[Diagnostic] = []
    jobs = False
    for index, item in enumerate(document.data["items"]):
        where = document.positions.within(("items", index))
        found = compile_document(Document(document.source, document.index, item, where), options)
        objects += found[0]
        diagnostics += found[1]
        jobs = jobs or found[2]
    return objects, diagnostics, jobs
