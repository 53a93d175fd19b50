"""Finding the file a job came from when a plug-in host hands msgen a re-serialised copy.

kustomize passes jobs to plug-ins as new YAML text (a ResourceList, or a temporary file), so
positions in that text mean nothing to the user. When the job's own file can be found (by the
path kustomize records, or in the kustomization directory) and holds the same object, its
positions are used instead: diagnostics then point into the file the user edits.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..model.diagnostics import InputError, Position
from ..model.source import Document, Path, Positions, Source
from .yaml_loader import load_documents

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MISSING = object()


def yaml_files(directory: str) -> list[str]:
    """The YAML files directly in `directory`, sorted: where a kustomization keeps its jobs."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names if n.endswith((".yaml", ".yml"))]


#: A file larger than this is not read for positions (they stay in the host's text).
MAX_ORIGIN_BYTES = 8 << 20


class OriginFiles:
    """The files one run may read for positions: inside `root` (the kustomization's
    directory) only, each at most MAX_ORIGIN_BYTES, each read and parsed once however many
    items look into it (20 items and a 4 MB file took a minute re-parsing it per item)."""

    def __init__(self, root: str, *more: str):
        self.root = os.path.realpath(root)
        self.roots = [self.root, *(os.path.realpath(r) for r in more)]
        self.parsed: dict[str, list[Document]] = {}

    def inside(self, path: str) -> str | None:
        """`path` (relative to the first root, or absolute) as a real path inside a root, else
        None."""
        real = os.path.realpath(os.path.join(self.root, path))
        inside = any(real == r or real.startswith(r + os.sep) for r in self.roots)
        return real if inside else None

    def documents(self, path: str) -> list[Document]:
        real = self.inside(path)
        if real is None:
            return []
        if real not in self.parsed:
            self.parsed[real] = _parse(real)
        return self.parsed[real]


def _parse(path: str) -> list[Document]:
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_ORIGIN_BYTES:
            return []
        with open(path, encoding="utf-8") as stream:
            return load_documents(Source(os.path.abspath(path), stream.read()))
    except (OSError, UnicodeDecodeError, InputError):
        return []


def find_original(
    candidates: Iterable[str], data: dict[str, Any], fallback: Positions, files: OriginFiles
) -> Document | None:
    """`data` as a document positioned in the first candidate file that holds the same object.

    Where a host changed a value (an overlay's patch), the file no longer shows it; such paths
    keep their `fallback` position in the text the host handed over. Only `files`' root is
    read, each file once.
    """
    identity = _identity(data)
    for path in dict.fromkeys(candidates):
        for document in files.documents(path):
            if isinstance(document.data, dict) and _identity(document.data) == identity:
                positions = _OriginPositions(document.positions, document.data, data, fallback)
                return Document(document.source, document.index, data, positions)
    return None


class _OriginPositions(Positions):
    """Positions in the user's file where it holds what was compiled there.

    A finding's place is the deepest field of its path the compiled object has (a field left
    to its default is found at the mapping that lacks it). That place is in the user's file
    when the file has it too: the same value, or a mapping or list the overlay changed inside
    (it still starts where the user wrote it). A value the overlay replaced, or a field it
    added, is only in the host's copy, whose position is kept (`fallback`).
    """

    def __init__(self, own: Positions, written: Any, compiled: Any, fallback: Positions):
        super().__init__(own.source, own.values, own.keys, own.prefix)
        self._written = written
        self._compiled = compiled
        self._fallback = fallback

    def at(self, path: Path, *, key: bool = False) -> Position:
        place = path
        while place and _value_at(self._compiled, place) is _MISSING:
            place = place[:-1]
        written, compiled = _value_at(self._written, place), _value_at(self._compiled, place)
        same = written == compiled or (
            isinstance(compiled, (dict, list)) and type(written) is type(compiled)
        )
        if written is not _MISSING and same:
            return super().at(place, key=key and place == path)
        return self._fallback.at(path, key=key)


def _value_at(data: Any, path: Path) -> Any:
    for part in path:
        if isinstance(part, int) and isinstance(data, list) and 0 <= part < len(data):
            data = data[part]
        elif isinstance(part, str) and isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return _MISSING
    return data


def _identity(data: dict[str, Any]) -> tuple[str, str, str]:
    metadata = data.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return (str(data.get("apiVersion")), str(data.get("kind")), str(name))
