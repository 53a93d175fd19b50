"""One reader of a kustomization tree, for every host: what an application's kustomize build
reaches, read once, inside the repository, within bounds.

Argo CD's discover and generate (the sidecar's checked copy), and the KRM function's search
for its config, all ask the same question: which kustomizations does a build reach, and what
does each of their entries name? They read it here, with msgen's YAML loader (positions for
every entry), kustomize's own rules for a remote or inline entry (`kustomize_entries`), the
kustomization file names of `yamlio.inputs`, and one boundary: a path is read only when its
real path (links resolved) is inside the repository's root. What crosses it is a problem with
the entry's position, never opened; nor is any file that is not a regular file (a FIFO would
block the read).

Every entry of every field that names something is classified (`Entry.form`): a local file, a
local directory, remote, inline YAML, missing, outside the root, or invalid (not a string).
`Entry.local` is the local file or directory at the entry's path whatever its form: kustomize
4.5.4 and 5.x disagree on some remote spellings, and an inline-looking entry may also name a
file, so a checker looks at both. Kustomizations are followed through every entry of
`resources`, `bases`, `components` and the plug-in fields whose path is a local directory.

Bounds (`Limits`): kustomizations and their nesting depth, files read, and bytes, counted as
kustomize builds: a base that two overlays include is built twice, so builds and bytes are
counted once per inclusion (a diamond of overlays 20 levels deep is a million builds).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from ..model.diagnostics import Diagnostic, InputError, Position, Severity
from ..model.source import Document, Path
from ..yamlio.inputs import KUSTOMIZATION_FILES, decoded
from ..yamlio.yaml_loader import load_documents
from . import kustomize_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..model.type_forms import NamedTuple

FILE, DIRECTORY, REMOTE, INLINE, MISSING, OUTSIDE, INVALID = (
    "local file", "local directory", "remote", "inline", "missing", "outside", "invalid",
)  # fmt: skip
#: The fields whose entries kustomize builds as kustomizations when they are directories.
BUILT_FIELDS = ("resources", "bases", "components", "generators", "transformers", "validators")
PLUGIN_FIELDS = ("generators", "transformers", "validators")
#: Field → how kustomize reads each entry (see `_form`).
_STRING_LISTS = {
    "resources": "resource", "bases": "resource", "components": "directory",
    "generators": "plugin", "transformers": "plugin", "validators": "plugin",
    "configurations": "file", "crds": "file", "patchesStrategicMerge": "patch",
}  # fmt: skip
#: Fields of mappings whose `path` (or `patch`, inline) names a file.
_PATH_LISTS = ("patches", "patchesJson6902", "replacements")
_GENERATOR_LISTS = ("configMapGenerator", "secretGenerator")
FIELDS = (*_STRING_LISTS, *_PATH_LISTS, *_GENERATOR_LISTS, "openapi")


class Limits(NamedTuple):
    """How much one tree may make msgen (and kustomize) read."""

    kustomizations: int = 500  # builds: once per inclusion
    depth: int = 40  # kustomizations nested in each other
    files: int = 10_000  # files msgen reads
    bytes: int = 64 << 20  # bytes kustomize reads, once per build that reads them
    file_bytes: int = 8 << 20  # one file msgen reads


class Entry(NamedTuple):
    """One entry of a kustomization field."""

    field: str
    path: Path  # in the kustomization's data: ("resources", 2), ("patches", 0, "path")
    text: str
    form: str
    local: str | None  # the real local file or directory at the entry's path, inside the root
    position: Position


class Kustomization(NamedTuple):
    directory: str  # real path
    file: str
    document: Document
    entries: tuple[Entry, ...]


#: The bounds of a tree nobody lowered.
DEFAULT_LIMITS = Limits()


class Tree:
    """The kustomizations reached from one directory, and what was refused on the way."""

    def __init__(self, root: str, limits: Limits = DEFAULT_LIMITS):
        self.root = os.path.realpath(root)
        self.limits = limits
        self.kustomizations: dict[str, Kustomization] = {}
        self.problems: list[Diagnostic] = []
        self.files_read = 0
        self.bytes_read = 0
        self._sizes: dict[str, int] = {}

    def entries(self, *fields: str) -> Iterator[tuple[Kustomization, Entry]]:
        for kustomization in self.kustomizations.values():
            for entry in kustomization.entries:
                if not fields or entry.field in fields:
                    yield kustomization, entry

    def inside(self, path: str) -> str | None:
        """`path`'s real path when it is inside the root, else None."""
        lexical = os.path.normpath(path)
        if not _within(lexical, self.root):
            return None
        real = os.path.realpath(lexical)
        return real if _within(real, self.root) else None

    def text(self, path: str, where: Position | None = None) -> str | None:
        """A regular file inside the root, read within the bounds; None (and a problem at
        `where`) when it is refused or unreadable."""
        where = where or Position(path, 1, 1)
        real = self.inside(path)
        if real is None:
            self._refuse(where, _outside(path, self.root))
            return None
        try:  # O_NONBLOCK: opening a FIFO does not wait for a writer (fstat then refuses it)
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            self._refuse(where, f"{path} cannot be read ({exc.strerror})")
            return None
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self._refuse(where, _not_regular(path))
                return None
            self.files_read += 1
            self.bytes_read += info.st_size
            if info.st_size > self.limits.file_bytes or self.files_read > self.limits.files \
                    or self.bytes_read > self.limits.bytes:  # fmt: skip
                self._refuse(where, self._too_much(path))
                return None
            raw = stream.read(self.limits.file_bytes + 1)
        source, problem = decoded(path, raw)
        if problem is not None:
            self.problems.append(problem)
            return None
        assert source is not None
        return source.text

    def documents(self, path: str, where: Position | None = None) -> list[Document] | None:
        """The YAML documents of a file inside the root (see `text`); None when refused or
        not YAML (the loader's errors are problems)."""
        text = self.text(path, where)
        if text is None:
            return None
        from ..model.source import Source

        try:
            return load_documents(Source(path, text))
        except InputError as exc:
            self.problems.extend(exc.diagnostics)
            return None

    def _refuse(self, where: Position, message: str) -> None:
        self.problems.append(Diagnostic(Severity.ERROR, message, where))

    def _too_much(self, path: str) -> str:
        limits = self.limits
        return (
            f"{path}: reading it passes msgen's bound on what a kustomization tree may make it "
            f"read; accepted: at most {limits.files} files of at most {_size(limits.file_bytes)} "
            f"each, {_size(limits.bytes)} in all"
        )


def _size(count: int) -> str:
    return f"{count >> 20} MiB" if count >= 1 << 20 else f"{count} bytes"


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _outside(entry: str, root: str) -> str:
    return f"{entry!r} leads out of the repository ({root}); accepted: files and directories inside it"


def _not_regular(entry: str) -> str:
    return f"{entry!r} is not a regular file (a FIFO, device or socket), not read; accepted: files and directories"


def kustomization_file(directory: str) -> str | None:
    """The kustomization file of `directory` (kustomize's names, in its order), or None."""
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def read(start: str, root: str, limits: Limits = DEFAULT_LIMITS) -> Tree:
    """The tree of kustomizations reached from `start` (a directory), inside `root`."""
    tree = Tree(root, limits)
    start = os.path.realpath(start)
    if not _within(start, tree.root):
        tree._refuse(Position(start, 1, 1), _outside(start, tree.root))
        return tree
    pending = [(start, 0, None)]
    while pending:
        directory, depth, where = pending.pop()
        if directory in tree.kustomizations:
            continue
        if depth > limits.depth or len(tree.kustomizations) >= limits.kustomizations:
            tree._refuse(where or Position(directory, 1, 1), _too_deep(directory, limits))
            break
        found = _load(tree, directory)
        if found is None:
            continue
        tree.kustomizations[directory] = found
        children = [e for e in found.entries if e.field in BUILT_FIELDS and _is_directory(e.local)]
        pending.extend((e.local, depth + 1, e.position) for e in reversed(children))  # type: ignore[misc]
    _check_builds(tree, start)
    return tree


def _too_deep(directory: str, limits: Limits) -> str:
    return (
        f"{directory}: a kustomization tree deeper than {limits.depth} levels or with more than "
        f"{limits.kustomizations} kustomizations; accepted: at most that"
    )


def _is_directory(path: str | None) -> bool:
    return path is not None and os.path.isdir(path)


def _load(tree: Tree, directory: str) -> Kustomization | None:
    path = kustomization_file(directory)
    if path is None:
        return None
    documents = tree.documents(path)
    if documents is None:
        return None
    if len(documents) > 1:
        tree._refuse(Position(path, documents[1].positions.at(()).line, 1),
                     f"{path} holds {len(documents)} YAML documents; accepted: one kustomization")  # fmt: skip
        return None
    document = documents[0] if documents else None
    data = document.data if document is not None else None
    if document is None or not isinstance(data, dict):
        return None  # kustomize says what is wrong with it
    tree._sizes[directory] = os.path.getsize(path)
    _near_misses(tree, document, data)
    entries = tuple(_entries(tree, directory, document, data))
    return Kustomization(directory, path, document, entries)


def _near_misses(tree: Tree, document: Document, data: dict[Any, Any]) -> None:
    """kustomize decodes a kustomization as JSON, whose field names match without regard to
    case (`Transformers:` is `transformers:`); msgen reads the exact names, so any other
    spelling of a field it reads is refused."""
    folded = {f.casefold(): f for f in FIELDS}
    for key in data:
        field = folded.get(str(key).casefold())
        if field is not None and key != field:
            tree.problems.append(document.diagnostic(
                (str(key),), f"{key!r} is read by kustomize as {field!r} (it matches field names "
                f"without regard to case); accepted: {field}", key=True))  # fmt: skip


def _entries(tree: Tree, directory: str, document: Document, data: dict[str, Any]) -> Iterator[Entry]:
    def entry(field: str, path: Path, value: Any, how: str) -> Entry:
        position = document.positions.at(path)
        if not isinstance(value, str):
            return Entry(field, path, repr(value), INVALID, None, position)
        return _classified(tree, directory, Entry(field, path, value, "", None, position), how)

    for field, how in _STRING_LISTS.items():
        for index, value in enumerate(_listed(data.get(field))):
            yield entry(field, (field, index), value, how)
    for field in _PATH_LISTS:
        for index, item in enumerate(_listed(data.get(field))):
            if isinstance(item, dict) and "path" in item:
                yield entry(field, (field, index, "path"), item["path"], "file")
            elif isinstance(item, dict) and isinstance(item.get("patch"), str):
                yield Entry(field, (field, index, "patch"), item["patch"], INLINE, None,
                            document.positions.at((field, index, "patch")))  # fmt: skip
    for field in _GENERATOR_LISTS:
        for index, item in enumerate(_listed(data.get(field))):
            item = item if isinstance(item, dict) else {}
            for key in ("files", "envs"):
                for at, value in enumerate(_listed(item.get(key))):
                    source = value.split("=", 1)[-1] if isinstance(value, str) else value
                    yield entry(field, (field, index, key, at), source, "file")
            if "env" in item:
                yield entry(field, (field, index, "env"), item["env"], "file")
    openapi = data.get("openapi")
    if isinstance(openapi, dict) and "path" in openapi:
        yield entry("openapi", ("openapi", "path"), openapi["path"], "file")


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _classified(tree: Tree, directory: str, entry: Entry, how: str) -> Entry:
    """The entry's form as kustomize reads it (`how`: resource, directory, plugin, file,
    patch), and the local file or directory at its path."""
    text = entry.text
    state, local = _local(tree, directory, text)
    found = local if state == _FOUND else None
    if how in ("plugin", "patch"):
        try:
            inline = kustomize_entries.inline_objects(text)
        except kustomize_entries.InlineUnreadable:
            inline = []
        if inline is not None:
            return entry._replace(form=INLINE, local=found)
    repository = how in ("resource", "directory", "plugin") and kustomize_entries.remote_repository(text)
    if kustomize_entries.remote_file(text):  # fetched first; what is at its path is still looked at
        return entry._replace(form=REMOTE, local=found)
    if state == _OUTSIDE:
        if repository:
            return entry._replace(form=REMOTE)
        tree._refuse(entry.position, _outside(text, tree.root))
        return entry._replace(form=OUTSIDE)
    if state == _SPECIAL:
        tree._refuse(entry.position, _not_regular(text))
        return entry._replace(form=INVALID)
    is_file = found is not None and os.path.isfile(found)
    if is_file and how != "directory":
        form = FILE
    elif repository:
        form = REMOTE
    elif found is not None:
        form = FILE if is_file else DIRECTORY
    else:
        form = MISSING
    if is_file:
        tree._sizes[local] = os.path.getsize(local)
    return entry._replace(form=form, local=found)


_FOUND, _NOTHING, _OUTSIDE, _SPECIAL = "found", "nothing", "outside", "special"


def _local(tree: Tree, directory: str, text: str) -> tuple[str, str]:
    """What is at `text` from `directory`: _FOUND and its real path (a regular file or a
    directory), _NOTHING, _OUTSIDE the root, or _SPECIAL (a FIFO, a device: never opened)."""
    real = tree.inside(kustomize_entries.local_path(directory, text))
    if real is None:
        return _OUTSIDE, ""
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return _NOTHING, ""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return _FOUND, real
    return _SPECIAL, real


def _check_builds(tree: Tree, start: str) -> None:
    """Builds and bytes counted as kustomize counts them: once per inclusion."""
    memo: dict[str, tuple[int, int]] = {}

    def cost(directory: str, visiting: frozenset[str]) -> tuple[int, int]:
        if directory in memo:
            return memo[directory]
        kustomization = tree.kustomizations.get(directory)
        if kustomization is None or directory in visiting:
            return 0, 0
        builds, size = 1, tree._sizes.get(directory, 0)
        for entry in kustomization.entries:
            if entry.form == FILE and entry.local is not None:
                size += tree._sizes.get(entry.local, 0)
            elif entry.field in BUILT_FIELDS and entry.local in tree.kustomizations:
                more = cost(entry.local, visiting | {directory})
                builds, size = builds + more[0], size + more[1]
        builds = min(builds, tree.limits.kustomizations + 1)
        memo[directory] = builds, min(size, tree.limits.bytes + 1)
        return memo[directory]

    builds, size = cost(start, frozenset())
    if builds > tree.limits.kustomizations or size > tree.limits.bytes:
        file = tree.kustomizations[start].file
        tree._refuse(Position(file, 1, 1), (
            f"building {file} builds {'more than ' if builds > tree.limits.kustomizations else ''}"
            f"{min(builds, tree.limits.kustomizations)} kustomizations reading "
            f"{'more than ' if size > tree.limits.bytes else ''}{_size(min(size, tree.limits.bytes))} "
            "(a base included by two overlays is built twice); accepted: at most "
            f"{tree.limits.kustomizations} builds and {_size(tree.limits.bytes)}"))  # fmt: skip
