"""Object metadata the API server checks: namespaces, labels and annotations.

A job's own namespace and labels are copied onto every object msgen writes, and a pod
template's labels onto every pod, so a key like `-x` or a namespace like `Team_A` would be
refused for each of them; here it is one error at the field that holds it.
"""

from __future__ import annotations

from ...model.source import Path
from ...model import names
from .findings import Findings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Kubernetes' limit on the total size of one object's annotations (keys and values).
ANNOTATIONS_MAX_BYTES = 256 * 1024


def check_namespace(found: Findings, path: Path, value: Any) -> None:
    if isinstance(value, str) and value:
        found.check(path, "namespace", value, names.dns1123_label(value))


def check_labels(found: Findings, path: Path, labels: Any) -> None:
    if not isinstance(labels, dict):
        return
    for key, value in labels.items():
        found.check(path + (key,), "label key", key, names.qualified_name(str(key)), key=True)
        if isinstance(value, str):
            found.check(path + (key,), "label value", value, names.label_value(value))


def check_annotations(found: Findings, path: Path, annotations: Any) -> None:
    if not isinstance(annotations, dict):
        return
    size = 0
    for key, value in annotations.items():
        problems = names.qualified_name(str(key).lower())
        found.check(path + (key,), "annotation key", key, problems, key=True)
        size += len(str(key).encode()) + (len(value.encode()) if isinstance(value, str) else 0)
    if size > ANNOTATIONS_MAX_BYTES:
        found.refuse(
            path,
            f"annotations of {size} bytes are not accepted: Kubernetes accepts at most "
            f"{ANNOTATIONS_MAX_BYTES} bytes of annotation keys and values per object",
        )


def check_object_meta(found: Findings, path: Path, metadata: Any, *, namespace: bool) -> None:
    """Labels and annotations (and, for a job, its namespace) of the metadata at `path`."""
    if not isinstance(metadata, dict):
        return
    if namespace:
        check_namespace(found, path + ("namespace",), metadata.get("namespace"))
    check_labels(found, path + ("labels",), metadata.get("labels"))
    check_annotations(found, path + ("annotations",), metadata.get("annotations"))
