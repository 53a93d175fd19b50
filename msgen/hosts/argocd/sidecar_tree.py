"""A repository's kustomization, copied for a build that runs no program the repository names.

The Argo CD sidecar renders whatever a Git repository holds, for every application it serves.
Its kustomize builds a copy of the kustomization directories the application reaches
(`tree_copy`), read with msgen's one reader of kustomization trees
(`hosts/kustomization_tree`), first in the repository (what to copy: nothing outside it) and
then in the copy, which is what kustomize will read. There every plug-in config of every
kustomization that a local entry reaches, read as each of kustomize 4.5.4 and 5.x could read
it (inline, a file, a directory, remote), must be on the sidecar's allowlist
(`plugin_allowlist`): a kustomize builtin, msgen's own function, or a job kind msgen compiles
as a legacy plug-in. msgen's function is rewritten in the copy into a legacy plug-in config
(`sidecar.msgen/v1` `Function`) that kustomize hands to msgen's plug-in home, written by msgen
for this build. Then the copy is read once more and every plug-in config checked again, this
time as kustomize's loader will resolve it: a builtin, or a path that lands on an executable
msgen wrote (`verify`).

Only when the build needs msgen's plug-ins does kustomize get `--enable-alpha-plugins`; then
a remote base or component, and a directory listed as plug-in configs (kustomize builds it,
and its output, which a patch there may change after any check of its files, becomes the
configs), are refused: msgen cannot check them before kustomize runs them. Without msgen's
plug-ins kustomize builds with builtins only, which no config a remote base holds can change.
A `file://` repository (a clone of the sidecar's own disk) is refused always.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from .. import kustomization_tree as trees
from ...model.diagnostics import format_diagnostic
from . import plugin_allowlist as allowlist
from .tree_copy import Copier, TooLarge

#: The kinds of the plug-in config msgen's function becomes (see plugin_home.install_for_build).
STEP_API_VERSION = "sidecar.msgen/v1"
STEP_KIND = "Function"
#: The sidecar's setting that lets kustomize run a repository's exec functions.
EXEC_VARIABLE = "MSGEN_ARGOCD_EXEC_FUNCTIONS"
EXEC_CHOICES = ("refuse", "allow")


class TreeRefused(Exception):
    """The tree cannot be built in the sidecar; the message names every reason, one a line."""


class Prepared(NamedTuple):
    app: Path  # the application's directory in the copy
    root: Path  # the repository directory the copy mirrors
    plugins: bool  # the build needs msgen's plug-ins (--enable-alpha-plugins)


def exec_allowed(env: dict[str, str] | Any) -> bool:
    """The sidecar's MSGEN_ARGOCD_EXEC_FUNCTIONS: `allow`, or `refuse` (the default)."""
    value = (env.get(EXEC_VARIABLE) or "refuse").strip()
    if value not in EXEC_CHOICES:
        raise TreeRefused(
            f"{EXEC_VARIABLE}={value!r} is not accepted; accepted: refuse (the default: no "
            "function a repository declares runs) or allow (kustomize runs them: see "
            "docs/security.md)"
        )
    return value == "allow"


def repository_root(directory: Path, env: dict[str, str] | Any) -> Path:
    """The repository the application is in: its directory without ARGOCD_APP_SOURCE_PATH
    (Argo CD sets it); run by hand, the Git work tree holding it, else the directory itself."""
    directory = Path(os.path.realpath(directory))
    source_path = (env.get("ARGOCD_APP_SOURCE_PATH") or "").strip("/")
    if "ARGOCD_APP_SOURCE_PATH" in env:
        parts = Path(source_path).parts if source_path not in ("", ".") else ()
        if ".." in parts or (parts and directory.parts[-len(parts) :] != parts):
            return directory
        return directory.parents[len(parts) - 1] if parts else directory
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return directory


def prepare(directory: Path, env: dict[str, str] | Any, into: Path) -> Prepared:
    """Copy what `directory`'s kustomization reaches below `into`, msgen's functions
    rewritten. Raises TreeRefused naming every config, link and reference refused."""
    start = Path(os.path.realpath(directory))
    boundary = repository_root(start, env)
    original = trees.read(str(start), str(boundary))
    _raise_for([format_diagnostic(d) for d in original.problems])
    reached = [Path(d) for d in original.kustomizations] or [start]
    root = Path(os.path.commonpath([str(d) for d in reached]))
    copier = Copier(boundary, root, into)
    try:
        for top in sorted(d for d in reached if not any(o in d.parents for o in reached)):
            copier.copy(top)
    except TooLarge as exc:
        raise TreeRefused(str(exc)) from None
    _raise_for(copier.refused)
    app = into / start.relative_to(root)
    check = _Check(trees.read(str(app), str(into)), into, root)
    check.run()
    _raise_for(check.refused)
    for path, objects in check.files.items():
        _write(path, objects)
    for (kustomization, field, index), objects in check.inline.items():
        _rewrite_inline(kustomization, field, index, objects)
    return Prepared(app, root, check.plugins)


def _raise_for(refused: list[str]) -> None:
    if refused:
        raise TreeRefused("\n".join(dict.fromkeys(refused)))


class _Check:
    """The allowlist over every plug-in entry of the copy's tree."""

    def __init__(self, tree: trees.Tree, into: Path, root: Path):
        self.tree, self.into, self.root = tree, str(into), str(root)
        self.refused: list[str] = []
        self.plugins = False
        self.files: dict[str, list[Any]] = {}  # file of the copy → its configs, rewritten
        self.inline: dict[tuple[str, str, int], list[Any]] = {}
        self.unchecked: list[str] = []  # entries msgen cannot see before kustomize builds them

    def shown(self, text: str) -> str:
        return text.replace(self.into, self.root)

    def run(self) -> None:
        for kustomization, entry in self.tree.entries():
            where = self.shown(f"{entry.position.file}:{entry.position.line}:{entry.position.column}")
            if entry.form == trees.REMOTE and _file_scheme(entry.text):
                self.refused.append(f"{where}: error: {entry.field} entry {entry.text!r} clones a repository "
                                    "of the sidecar's own disk; accepted: https, ssh or a path inside the repository")  # fmt: skip
            elif entry.form == trees.REMOTE and entry.field in trees.BUILT_FIELDS:
                self.unchecked.append(f"{where}: error: remote {entry.field} entry {entry.text!r}" + _REMOTE)
            if entry.field in trees.PLUGIN_FIELDS:
                self._plugin_entry(kustomization, entry, where)
        self.refused[:0] = [self.shown(format_diagnostic(d)) for d in self.tree.problems]
        if self.plugins and self.unchecked:
            self.refused += self.unchecked

    def _plugin_entry(self, kustomization: trees.Kustomization, entry: trees.Entry, where: str) -> None:
        if entry.form == trees.INVALID:
            self.refused.append(f"{where}: error: {entry.field} entry {entry.text} is not accepted; accepted: a path or inline YAML")
            return
        if entry.form == trees.INLINE:
            self._inline(kustomization, entry, where)
        if entry.local is not None and os.path.isdir(entry.local):
            self.unchecked.append(f"{where}: error: {entry.field} entry {entry.text!r}, a directory kustomize builds into "
                                  "plug-in configs" + _DIRECTORY)  # fmt: skip
        elif entry.local is not None:
            self._file(entry.field, entry.local, entry.position)
        elif entry.form == trees.REMOTE:
            self.unchecked.append(f"{where}: error: remote {entry.field} entry {entry.text!r}" + _REMOTE)

    def _inline(self, kustomization: trees.Kustomization, entry: trees.Entry, where: str) -> None:
        from ..kustomize_entries import InlineUnreadable, inline_objects

        try:
            objects = inline_objects(entry.text) or []
        except InlineUnreadable:
            self.refused.append(f"{where}: error: {entry.field} entry is neither a path nor YAML msgen can read; "
                                "accepted: a path or inline YAML objects")  # fmt: skip
            return
        found = [c for obj in objects for c in allowlist.configs(obj)]
        rewritten = self._judged(entry.field, [(c, where) for c in found])
        if rewritten is not None:
            self.inline[kustomization.file, entry.field, int(entry.path[1])] = rewritten

    def _file(self, field: str, path: str, position: Any) -> None:
        documents = self.tree.documents(path, position)
        if documents is None:
            return  # a problem of the tree's, refused with the others
        found = []
        for document in documents:
            for config in allowlist.configs(document.data):
                at = document.positions.at(config.path)
                found.append((config, self.shown(f"{at.file}:{at.line}:{at.column}")))
        rewritten = self._judged(field, found)
        if rewritten is not None:
            self.files[path] = rewritten

    def _judged(self, field: str, found: list[tuple[allowlist.Config, str]]) -> list[Any] | None:
        """The configs with msgen's functions as msgen's steps, when there is one; else None."""
        out, steps = [], False
        for config, where in found:
            verdict = allowlist.judge(config.obj)
            if verdict.accepted is None:
                self.refused.append(f"{where}: error: {field[:-1]} {verdict.reason}: refused; "
                                    f"{allowlist.accepted_text(EXEC_VARIABLE)}")  # fmt: skip
                continue
            self.plugins = self.plugins or verdict.accepted != allowlist.BUILTIN
            steps = steps or verdict.accepted == allowlist.STEP
            out.append(step(config.obj) if verdict.accepted == allowlist.STEP else config.obj)
        return out if steps else None


_UNCHECKED = (": msgen cannot check what kustomize loads from it before kustomize runs it, and this "
              "build runs msgen's plug-ins; accepted: {}, or an application without msgen's function "
              "or job plug-ins (kustomize then builds with its builtins alone)")
_REMOTE = _UNCHECKED.format("a directory inside the repository")
_DIRECTORY = _UNCHECKED.format("the plug-in config files listed one by one")


def _file_scheme(entry: str) -> bool:
    from ..kustomize_entries import local_repository

    return local_repository(entry)


def step(obj: dict[str, Any]) -> dict[str, Any]:
    """msgen's function config as the legacy plug-in config msgen's plug-in home answers."""
    config = {k: v for k, v in obj.items() if k != "metadata"}
    metadata = dict(obj.get("metadata") or {})
    annotations = {
        k: v for k, v in (metadata.get("annotations") or {}).items()
        if k not in allowlist.FUNCTION_ANNOTATIONS
    }  # fmt: skip
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    config = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": metadata, **config}
    return {
        "apiVersion": STEP_API_VERSION,
        "kind": STEP_KIND,
        "metadata": {"name": str(metadata.get("name") or "msgen")},
        "functionConfig": config,
    }


def _write(path: str, objects: list[Any]) -> None:
    from ...yamlio.emit import to_yaml

    Path(path).write_text(to_yaml(objects), encoding="utf-8")


def _rewrite_inline(kustomization: str, field: str, index: int, objects: list[Any]) -> None:
    from ...model.source import Source
    from ...yamlio.emit import to_yaml
    from ...yamlio.yaml_loader import load_documents

    data = load_documents(Source(kustomization, Path(kustomization).read_text(encoding="utf-8")))[0].data
    data[field][index] = to_yaml(objects)
    Path(kustomization).write_text(to_yaml([data]), encoding="utf-8")


def verify(app: Path, into: Path, home: Path, written: list[Path]) -> None:
    """The copy as kustomize will load it: every plug-in config of every kustomization a local
    entry reaches is a builtin, or lands, as kustomize's loader joins its path
    (`<home>/<group>/<version>/<lower kind>/<kind>`, cleaned as text), on an executable msgen
    wrote. A second check, made after the rewrite; raises TreeRefused."""
    tree = trees.read(str(app), str(into))
    executables = {os.path.normpath(p) for p in written}
    wrong = [format_diagnostic(d) for d in tree.problems]
    for _kustomization, entry in tree.entries(*trees.PLUGIN_FIELDS):
        objects: list[Any] = []
        if entry.form == trees.INLINE:
            from ..kustomize_entries import inline_objects

            objects += inline_objects(entry.text) or []
        if entry.local is not None and os.path.isfile(entry.local):
            objects += [d.data for d in tree.documents(entry.local) or []]
        for config in (c for obj in objects for c in allowlist.configs(obj)):
            if not _loadable(config.obj, home, executables):
                wrong.append(f"{entry.position.file}:{entry.position.line}: {entry.field} entry loads "
                             f"{allowlist._named(config.obj) if isinstance(config.obj, dict) else config.obj!r}")  # fmt: skip
    if wrong:
        raise TreeRefused("msgen's second check of the copy it built refused it:\n" + "\n".join(wrong))


def _loadable(obj: Any, home: Path, executables: set[str]) -> bool:
    if not isinstance(obj, dict) or allowlist.function_of(obj) is not None:
        return False
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False
    if api_version == allowlist.BUILTIN_API_VERSION:
        return kind in allowlist.BUILTIN_KINDS
    # resid.ParseGroupVersion: the group before the first "/", the version after it
    group, version = api_version.split("/", 1) if "/" in api_version else ("", api_version)
    path = os.path.normpath(os.path.join(str(home), group, version, kind.lower(), kind))
    return path in executables
