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
from typing import Any

from ...options import text as option_text
from ...model.diagnostics import Diagnostic, Severity
from ...yamlio.origin import OriginFiles, find_original, yaml_files
from ...model.plan import Options
from ...model.source import Document, Path

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


#: At most this many kustomizations are read for the config (a build's tree is small).
MAX_KUSTOMIZATIONS = 64
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


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


def kustomization_files(roots: list[str]) -> list[str]:
    """The files a kustomization at each of `roots` names as generators or transformers, and
    the YAML files beside it, through its local resources, bases and components."""
    files: list[str] = []
    for directory, data in kustomizations(roots):
        for field in ("generators", "transformers"):
            files += [os.path.join(directory, e) for e in _entries(data.get(field))]
        files += yaml_files(directory)
    return [f for f in dict.fromkeys(files) if os.path.isfile(f)]


def configurations(roots: list[str]) -> list[str]:
    """The transformer configurations (`configurations:`) the kustomizations at `roots` and
    below them list."""
    files = [os.path.join(directory, e) for directory, data in kustomizations(roots)
             for e in _entries(data.get("configurations"))]
    return [f for f in dict.fromkeys(files) if os.path.isfile(f)]


def kustomizations(roots: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """Each kustomization reached from `roots` (its directory and data), through local
    resources, bases and components, at most MAX_KUSTOMIZATIONS."""
    from ...model.diagnostics import InputError
    from ...model.source import Source
    from ...yamlio.yaml_loader import load_documents

    out: list[tuple[str, dict[str, Any]]] = []
    pending, seen = list(roots), set[str]()
    while pending and len(seen) < MAX_KUSTOMIZATIONS:
        directory = os.path.realpath(pending.pop(0))
        if directory in seen:
            continue
        seen.add(directory)
        found = [os.path.join(directory, n) for n in KUSTOMIZATION_FILES]
        path = next((f for f in found if os.path.isfile(f)), None)
        if path is None:
            continue
        try:
            with open(path, encoding="utf-8") as stream:
                documents = load_documents(Source(path, stream.read()))
        except (OSError, UnicodeDecodeError, InputError):
            continue
        data = documents[0].data if documents else None
        if not isinstance(data, dict):
            continue
        out.append((directory, data))
        for field in ("resources", "bases", "components"):
            pending += [os.path.join(directory, e) for e in _entries(data.get(field))]
    return out


def _entries(value: Any) -> list[str]:
    """The local paths among a kustomization list's entries (not URLs, not inline YAML)."""
    if not isinstance(value, list):
        return []
    return [e for e in value if isinstance(e, str) and "\n" not in e and "://" not in e]

