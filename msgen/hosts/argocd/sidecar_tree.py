"""A repository's kustomization, copied for a build that runs none of the repository's programs.

The Argo CD sidecar renders whatever a Git repository holds, for every application it serves.
A kustomize function is a program (`exec: {path: ./script}`, `/bin/sh`, a container, a
Starlark script), so the sidecar builds without `--enable-exec` and refuses every function a
repository declares, naming it, except msgen's own (`exec: {path: msgen-krm}`). That one is
rewritten, in a copy of the tree kustomize reads, into a legacy plug-in config
(`sidecar.msgen/v1` `Function`) that kustomize hands to msgen's plug-in home, written by msgen
for this build: msgen's code from the sidecar's installation runs it, never a path the
repository chose. Without the refusal a function kustomize cannot run would be skipped
without a word, and the build would not be the one the repository's author ran.

The copy holds the kustomization directories the application reaches and nothing else (they
are all kustomize may read), within a size bound; a reference or a symbolic link leading out
of the repository is refused, and no message shows what such a file holds.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The kinds of the plug-in config msgen's function becomes (see plugin_home.install_for_build).
STEP_API_VERSION = "sidecar.msgen/v1"
STEP_KIND = "Function"
#: Where kyaml (`runtimeutil.GetFunctionSpec`) finds that a config is a function.
FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
LEGACY_CONTAINER_ANNOTATION = "config.kubernetes.io/container"
#: msgen's own function, exactly as its overlays declare it.
MSGEN_FUNCTION = {"exec": {"path": "msgen-krm"}}
#: The sidecar's setting that lets kustomize run a repository's exec functions.
EXEC_VARIABLE = "MSGEN_ARGOCD_EXEC_FUNCTIONS"
EXEC_CHOICES = ("refuse", "allow")
#: What a build may copy: a repository's kustomizations, not its data sets.
MAX_TREE_BYTES = 64 << 20
MAX_TREE_FILES = 10_000
_KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_DIRECTORY_FIELDS = ("resources", "components", "bases")
_PLUGIN_FIELDS = ("generators", "transformers", "validators")
_MANIFESTS = (".yaml", ".yml", ".json")


class TreeRefused(Exception):
    """The tree cannot be built in the sidecar; the message names every reason, one a line."""


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


def repository_root(directory: Path, env: dict[str, str] | Any) -> Path | None:
    """The repository the application is in: its directory without ARGOCD_APP_SOURCE_PATH."""
    source_path = (env.get("ARGOCD_APP_SOURCE_PATH") or "").strip("/")
    if not source_path or source_path == ".":
        return directory if "ARGOCD_APP_SOURCE_PATH" in env else None
    parts = Path(source_path).parts
    if ".." in parts or directory.parts[-len(parts) :] != parts:
        return None
    return directory.parents[len(parts) - 1]


def kustomization_file(directory: Path) -> Path | None:
    for name in _KUSTOMIZATIONS:
        if (directory / name).is_file():
            return directory / name
    return None


def _remote(entry: str) -> bool:
    return "://" in entry or entry.startswith(("git@", "github.com/", "gitlab.com/"))


def _inline(entry: str) -> bool:
    return "\n" in entry.strip()


class _Reached:
    """The kustomization directories an application reaches, and its plug-in entries."""

    def __init__(self, boundary: Path):
        self.boundary = boundary
        self.directories: list[Path] = []
        #: (kustomization file, file or directory of configs, or None for an inline entry, its index)
        self.plugins: list[tuple[Path, Path | None, str, int]] = []
        self.refused: list[str] = []

    def walk(self, start: Path) -> None:
        pending = [start]
        while pending:
            directory = pending.pop()
            if directory in self.directories:
                continue
            self.directories.append(directory)
            kustomization = kustomization_file(directory)
            data = _read_kustomization(kustomization) if kustomization else None
            for field in (*_DIRECTORY_FIELDS, *_PLUGIN_FIELDS):
                entries = data.get(field) if isinstance(data, dict) else None
                for index, entry in enumerate(entries if isinstance(entries, list) else []):
                    if not isinstance(entry, str) or _remote(entry):
                        continue
                    assert kustomization is not None
                    if field in _PLUGIN_FIELDS and _inline(entry):
                        self.plugins.append((kustomization, None, field, index))
                        continue
                    target = self._inside(kustomization, entry)
                    if target is None:
                        continue
                    if field in _PLUGIN_FIELDS:
                        self.plugins.append((kustomization, target, field, index))
                    if target.is_dir():
                        pending.append(target)

    def _inside(self, kustomization: Path, entry: str) -> Path | None:
        target = Path(os.path.realpath(kustomization.parent / entry))
        if not _within(target, self.boundary):
            self.refused.append(
                f"{kustomization}: {entry!r} leads out of the repository ({self.boundary}); "
                "accepted: files and directories inside it"
            )
            return None
        return target


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _read_kustomization(path: Path) -> Any:
    from ...model.diagnostics import InputError
    from ...model.source import Source
    from ...yamlio.yaml_loader import load_documents

    try:
        text = path.read_text(encoding="utf-8")
        documents = load_documents(Source(str(path), text))
    except (OSError, UnicodeDecodeError, InputError):
        return None  # kustomize reports it
    return documents[0].data if len(documents) == 1 else None


def prepare(directory: Path, env: dict[str, str] | Any, into: Path) -> tuple[Path, Path]:
    """Copy what `directory`'s kustomization reaches below `into`, msgen's functions
    rewritten; returns the application's directory in the copy and the directory the copy
    mirrors. Raises TreeRefused naming every function, link and reference refused."""
    start = Path(os.path.realpath(directory))
    boundary = repository_root(start, env)
    reached = _Reached(boundary or Path("/"))
    reached.walk(start)
    if boundary is None:
        boundary = Path(os.path.commonpath([str(d) for d in reached.directories]))
        reached.boundary = boundary
    root = Path(os.path.commonpath([str(d) for d in reached.directories]))
    tops = [d for d in reached.directories if not any(o in d.parents for o in reached.directories)]
    copier = _Copier(boundary, root, into)
    for top in sorted(tops):
        copier.copy(top)
    refused = reached.refused + copier.refused
    if not refused:
        for kustomization, target, field, index in reached.plugins:
            copied = into / kustomization.relative_to(root)
            if target is None:
                refused += _rewrite_inline(copied, field, index, root, into)
            elif target.is_dir():
                for path in _manifests(into / target.relative_to(root)):
                    refused += _rewrite_file(path, field, root, into)
            else:
                refused += _rewrite_file(into / target.relative_to(root), field, root, into)
    if refused:
        raise TreeRefused("\n".join(dict.fromkeys(refused)))
    return into / start.relative_to(root), root


def _manifests(directory: Path) -> Iterator[Path]:
    for parent, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(_MANIFESTS) and name not in _KUSTOMIZATIONS:
                yield Path(parent) / name


class _Copier:
    """Copies directory trees, keeping links that stay in the repository, within bounds."""

    def __init__(self, boundary: Path, root: Path, into: Path):
        self.boundary = boundary
        self.root = root
        self.into = into
        self.bytes = 0
        self.files = 0
        self.refused: list[str] = []

    def copy(self, top: Path) -> None:
        for parent, dirs, files in os.walk(top):
            here = Path(parent)
            dirs[:] = sorted(d for d in dirs if d != ".git")
            target = self.into / here.relative_to(self.root)
            target.mkdir(parents=True, exist_ok=True)
            for name in sorted(files) + [d for d in dirs if (here / d).is_symlink()]:
                self._entry(here / name, target / name)
            dirs[:] = [d for d in dirs if not (here / d).is_symlink()]

    def _entry(self, source: Path, target: Path) -> None:
        shown = source.relative_to(self.root)
        if source.is_symlink():
            resolved = Path(os.path.realpath(source))
            if not _within(resolved, self.boundary):
                self.refused.append(
                    f"{shown}: a symbolic link out of the repository ({self.boundary}); "
                    "accepted: links to files inside it"
                )
                return
            os.symlink(os.readlink(source), target)
            return
        if not source.is_file():
            return  # sockets, devices: nothing kustomize reads
        self.files += 1
        self.bytes += source.stat().st_size
        if self.files > MAX_TREE_FILES or self.bytes > MAX_TREE_BYTES:
            raise TreeRefused(
                f"the kustomizations below {self.root} hold more than {MAX_TREE_FILES} files or "
                f"{MAX_TREE_BYTES >> 20} MiB; accepted: at most that much (keep data out of "
                "the repository's kustomization directories)"
            )
        shutil.copyfile(source, target, follow_symlinks=False)  # no exec bit: nothing to run


def function_of(obj: Any) -> Any:
    """The function an object declares as kustomize reads it, or None."""
    if not isinstance(obj, dict):
        return None
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return None
    annotations = metadata.get("annotations")
    annotations = annotations if isinstance(annotations, dict) else {}
    for key in FUNCTION_ANNOTATIONS:
        if annotations.get(key):
            return _spec(annotations[key])
    if annotations.get(LEGACY_CONTAINER_ANNOTATION):
        return {"container": {"image": annotations[LEGACY_CONTAINER_ANNOTATION]}}
    if metadata.get("configFn") is not None:
        return metadata["configFn"]
    return None


def _spec(text: Any) -> Any:
    from ...model.diagnostics import InputError
    from ...model.source import Source
    from ...yamlio.yaml_loader import load_documents

    try:
        documents = load_documents(Source("function", str(text)))
    except InputError:
        return str(text)
    return documents[0].data if documents else str(text)


def described(spec: Any) -> str:
    """The program a function spec names, for the refusal."""
    if isinstance(spec, dict):
        for kind, field in (("exec", "path"), ("container", "image"), ("starlark", "path")):
            part = spec.get(kind)
            if isinstance(part, dict) and part.get(field):
                return f"{kind} {part[field]}"
            if part:
                return f"{kind} {part!r}"
    return f"the function {spec!r}"


def _refusal(where: str, field: str, obj: dict[str, Any], spec: Any) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    what = f"{obj.get('kind')} {name}"
    return (
        f"{where}: {field} {what} runs {described(spec)}: refused, the msgen sidecar runs no "
        "program a repository names; accepted: msgen's own function (exec: {path: msgen-krm}); "
        f"the sidecar's administrator may allow exec functions with {EXEC_VARIABLE}=allow "
        "(docs/security.md says what that risks)"
    )


def step(obj: dict[str, Any]) -> dict[str, Any]:
    """msgen's function config as the legacy plug-in config msgen's plug-in home answers."""
    config = {k: v for k, v in obj.items() if k != "metadata"}
    metadata = dict(obj.get("metadata") or {})
    annotations = {
        k: v for k, v in (metadata.get("annotations") or {}).items() if k not in FUNCTION_ANNOTATIONS
    }
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


def _rewritten(objects: list[Any], where: list[str], field: str) -> tuple[list[Any], list[str]]:
    out, refused = [], []
    for obj, shown in zip(objects, where):
        spec = function_of(obj)
        if spec is None:
            out.append(obj)
        elif spec == MSGEN_FUNCTION:
            out.append(step(obj))
        else:
            refused.append(_refusal(shown, field[:-1], obj, spec))
    return out, refused


def _load(path: Path) -> Any:
    from ...model.diagnostics import InputError
    from ...model.source import Source
    from ...yamlio.yaml_loader import load_documents

    try:
        return load_documents(Source(str(path), path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, InputError):
        return None  # kustomize says what is wrong with it


def _rewrite_file(path: Path, field: str, root: Path, into: Path) -> list[str]:
    from ...yamlio.emit import to_yaml

    documents = _load(path)
    if not documents or all(function_of(d.data) is None for d in documents):
        return []
    shown = [_position(path, d, root, into) for d in documents]
    objects, refused = _rewritten([d.data for d in documents], shown, field)
    if not refused:
        path.write_text(to_yaml(objects), encoding="utf-8")
    return refused


def _rewrite_inline(kustomization: Path, field: str, index: int, root: Path, into: Path) -> list[str]:
    from ...yamlio.emit import to_yaml

    documents = _load(kustomization)
    if not documents:
        return []
    data = documents[0].data
    inline = _inline_objects(data[field][index])
    position = documents[0].positions.at((field, index))
    shown = f"{root / kustomization.relative_to(into)}:{position.line}:{position.column}"
    objects, refused = _rewritten(inline, [shown] * len(inline), field)
    if not refused and objects != inline:
        data[field][index] = to_yaml(objects)
        kustomization.write_text(to_yaml([data]), encoding="utf-8")
    return refused


def _inline_objects(text: str) -> list[Any]:
    from ...model.diagnostics import InputError
    from ...model.source import Source
    from ...yamlio.yaml_loader import load_documents

    try:
        return [d.data for d in load_documents(Source("inline", text))]
    except InputError:
        return []


def _position(path: Path, document: Any, root: Path, into: Path) -> str:
    position = document.positions.at(())
    original = root / path.relative_to(into)
    return f"{original}:{position.line}:{position.column}"
