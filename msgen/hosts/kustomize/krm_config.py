"""The function config of `msgen-krm`: its options, with findings in the file the user wrote.

kustomize hands a KRM function its config re-serialised inside the ResourceList, and 4.5.4
adds no `config.kubernetes.io/path` to it (kpt and other hosts may), so a position in that
text (`<ResourceList>:78:5`) names nothing the user can open. The config is looked for where it
was written: the file its path annotation names; the YAML files of the directory kustomize
runs the function in; and, because kustomize 4.5.4 runs it in the directory of a base the
overlay includes rather than the overlay's own (kustomize issue 4347), the files of the
kustomizations the running `kustomize build` reads, found from its command line (Linux's
/proc; nothing elsewhere). The first file holding the same ConfigMap is the config's; a
finding in it (a misspelt option, a bad value, a value another host overrides) then points
into that file. When no file holds it, findings point into the ResourceList as before.
"""

from __future__ import annotations

import os

from ...options import text as option_text
from ...model.diagnostics import Diagnostic, Severity
from ...yamlio.origin import OriginFiles, find_original, yaml_files
from ...model.plan import Options
from ...model.source import Document, Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")


class ConfigPlace:
    """Where the function config's findings point: the user's file (`prefix` empty), or the
    ResourceList (`prefix` = `functionConfig`)."""

    __slots__ = ("document", "prefix")

    def __init__(self, document: Document, prefix: Path):
        self.document = document
        self.prefix = prefix

    def diagnostic(
        self, path: Path, message: str, *, severity: Severity = Severity.ERROR, key: bool = False
    ) -> Diagnostic:
        return self.document.diagnostic(self.prefix + path, message, severity=severity, key=key)


def place(resource_list: Document, config: Any, cwd: str) -> ConfigPlace:
    """Where the findings of `config` (the ResourceList's `functionConfig`) point."""
    if isinstance(config, dict):
        metadata = config.get("metadata")
        annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
        annotations = annotations if isinstance(annotations, dict) else {}
        named = [str(annotations[a]) for a in PATH_ANNOTATIONS if a in annotations]
        fallback = resource_list.positions.within(("functionConfig",))
        found = find_original(named + yaml_files(cwd), config, fallback, OriginFiles(cwd))
        if found is None:  # the files the running build's kustomizations name, and only those
            listed = kustomization_files(build_roots())
            if listed:
                within = OriginFiles(*{os.path.dirname(os.path.realpath(f)) for f in listed})
                found = find_original(listed, config, fallback, within)
        if found is not None:
            return ConfigPlace(found, ())
    return ConfigPlace(resource_list, ("functionConfig",))


def data_problems(where: ConfigPlace, values: Any) -> list[Diagnostic]:
    """The config's `data`, when it is not a mapping."""
    if values is None or isinstance(values, dict):
        return []
    shown = "a list" if isinstance(values, list) else repr(values)
    return [
        where.diagnostic(
            ("data",),
            f"{shown} is not accepted; accepted: a mapping of msgen options to strings "
            "(target: pod)",
        )
    ]


def options(where: ConfigPlace, data: Any) -> tuple[Options, list[Diagnostic]]:
    """The config's `data` (None for a generator, whose config is the job), between the facts
    and the choices of the host whose build runs this function (Argo CD's plugin hands them
    over in MSGEN_HOST_OPTIONS; see msgen.options.option_layers). A value that loses to the host's, or
    wins over it, is a warning at its key."""
    from ...options.option_layers import Layer, from_env, with_function_config

    values = {str(k): (str(v).strip() if v is not None else "", f"functionConfig.data.{k}")
              for k, v in (data or {}).items()}  # fmt: skip
    try:
        handoff = from_env(os.environ)
        chosen, overrides = with_function_config(handoff, Layer(values, "krm"))
    except option_text.OptionError as exc:
        named = {shown: key for key, (_text, shown) in values.items()}
        key = named.get(exc.key, exc.key)
        path: Path = ("data", key) if key in values else ()
        return Options(), [where.diagnostic(path, str(exc), key=exc.unknown_name)]
    found = []
    for override in overrides:
        path = ("data", override.option) if override.option in values else ()
        found.append(where.diagnostic(path, override.message(), severity=Severity.WARNING))
    return chosen, found


def build_roots() -> list[str]:
    """The directories the parent process builds when it is `kustomize build DIR...` (its
    arguments that are directories, else its working directory), read from Linux's /proc."""
    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/cmdline", "rb") as stream:
            argv = [a.decode("utf-8", "replace") for a in stream.read().split(b"\0") if a]
        here = os.readlink(f"/proc/{parent}/cwd")
    except OSError:
        return []
    if "build" not in argv[1:2]:
        return []
    given = [os.path.join(here, a) for a in argv[2:] if not a.startswith("-")]
    return [d for d in given if os.path.isdir(d)] or [here]


#: A build's tree is small: at most this many kustomizations are read for the config.
MAX_KUSTOMIZATIONS = 64


def kustomization_files(roots: list[str]) -> list[str]:
    """The files a kustomization at each of `roots` names as generators or transformers, and
    the YAML files beside it, through its local resources, bases and components: read by
    msgen's one reader of kustomization trees, inside the sidecar's copy when the sidecar's
    build runs this function, else inside the Git work tree of each root (or the root)."""
    files: list[str] = []
    for directory, entries in _kustomizations(roots):
        files += [e.local for e in entries if e.field in ("generators", "transformers") and e.local]
        files += yaml_files(directory)
    return [f for f in dict.fromkeys(files) if os.path.isfile(f)]


def configurations(roots: list[str]) -> list[str]:
    """The transformer configurations (`configurations:`) the kustomizations at `roots` and
    below them list, read by the same reader."""
    files = [e.local for _directory, entries in _kustomizations(roots) for e in entries
             if e.field == "configurations" and e.local]  # fmt: skip
    return [f for f in dict.fromkeys(files) if os.path.isfile(f)]


def _kustomizations(roots: list[str]) -> list[tuple[str, list[Any]]]:
    """Each kustomization reached from `roots` (its directory), with its entries that name a
    local file, at most MAX_KUSTOMIZATIONS from each root."""
    from .. import kustomization_tree as trees

    out: list[tuple[str, list[Any]]] = []
    for start in roots:
        tree = trees.read(start, _boundary(start), trees.Limits(kustomizations=MAX_KUSTOMIZATIONS))
        for directory, kustomization in tree.kustomizations.items():
            out.append((directory, [e for e in kustomization.entries if e.form == trees.FILE]))
    return out


def _boundary(start: str) -> str:
    """Where the kustomizations a build of `start` reads may be: the sidecar's copy, when
    msgen's sidecar runs the build (it reads nothing else); else the Git work tree holding
    `start`, or anywhere (the user's own build, of their own files)."""
    from pathlib import Path as FilePath

    tree = os.environ.get("MSGEN_SIDECAR_TREE")
    real = FilePath(os.path.realpath(start))
    if tree and (real == FilePath(os.path.realpath(tree)) or FilePath(os.path.realpath(tree)) in real.parents):
        return tree
    return str(next((c for c in (real, *real.parents) if (c / ".git").exists()), FilePath("/")))
