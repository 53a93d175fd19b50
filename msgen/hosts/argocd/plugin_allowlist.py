"""What a kustomize build in the Argo CD sidecar may load as a plug-in: a list of what is
accepted, never of what is refused.

kustomize runs a plug-in config (an entry of `generators:`, `transformers:` or `validators:`,
in a file, inline, or an item of a `*List`) in one of three ways: a builtin (`apiVersion:
builtin`, compiled into kustomize), a KRM function (the program its annotation names), or a
legacy exec plug-in, the executable at `<plug-in home>/<group>/<version>/<lower kind>/<kind>`,
a path joined and cleaned as text, so `kind: ../../../../bin/sh` runs `/bin/sh` with the
config as its script. Every name a repository writes can select a program, so the sidecar
accepts only:

- a kustomize builtin: `apiVersion: builtin` and a kind in `BUILTIN_KINDS` (the factories of
  kustomize 4.5.4's and 5.x's `builtinhelpers`, without `HelmChartInflationGenerator`: the
  sidecar inflates no chart, and kustomize runs helm only with `--enable-helm`);
- msgen's own function, `exec: {path: msgen-krm}` (becomes msgen's step: `sidecar_tree`);
- a job kind msgen compiles (`kinds.known_kinds`) as a legacy plug-in, which the plug-in home
  msgen writes for the build answers with msgen's code.

Anything else is refused before kustomize runs, with its file, line and kind.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from ...model.source import Path

BUILTIN_API_VERSION = "builtin"
#: kustomize's builtin plug-ins: `GeneratorFactories` and `TransformerFactories` of
#: api/internal/plugins/builtinhelpers (api v0.11.4 = kustomize 4.5.4, v0.18.0 = 5.5.0;
#: LegacyOrderTransformer is 4.x's only), less HelmChartInflationGenerator.
BUILTIN_KINDS = (
    "AnnotationsTransformer", "ConfigMapGenerator", "HashTransformer", "IAMPolicyGenerator",
    "ImageTagTransformer", "LabelTransformer", "LegacyOrderTransformer", "NamespaceTransformer",
    "PatchJson6902Transformer", "PatchStrategicMergeTransformer", "PatchTransformer",
    "PrefixSuffixTransformer", "PrefixTransformer", "ReplacementTransformer",
    "ReplicaCountTransformer", "SecretGenerator", "SuffixTransformer", "ValueAddTransformer",
)  # fmt: skip
#: Where kyaml (`runtimeutil.GetFunctionSpec`) finds that a config is a function.
FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
LEGACY_CONTAINER_ANNOTATION = "config.kubernetes.io/container"
#: msgen's own function, exactly as its overlays declare it.
MSGEN_FUNCTION = {"exec": {"path": "msgen-krm"}}
#: How deep `*List`s may nest in one config (kustomize expands them without a bound).
MAX_LIST_DEPTH = 16

BUILTIN, STEP, LEGACY = "builtin", "msgen's function", "msgen's legacy plug-in"


class Config(NamedTuple):
    """One plug-in config as kustomize will load it: the object, and where it is in the
    document it was read from (an item of a `*List`: ("items", 2))."""

    obj: Any
    path: Path


class Verdict(NamedTuple):
    accepted: str | None  # BUILTIN, STEP, LEGACY; None: refused
    reason: str  # why it is refused


def configs(obj: Any, path: Path = (), depth: int = 0) -> Iterator[Config]:
    """The configs kustomize reads from one document: `*List` kinds expanded into their
    items, recursively (`resource.Factory.inlineAnyEmbeddedLists`)."""
    if obj is None:
        return
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if not (isinstance(kind, str) and kind.endswith("List") and "items" in obj):
        yield Config(obj, path)
        return
    items = obj["items"]
    if depth >= MAX_LIST_DEPTH or not (items is None or isinstance(items, list)):
        yield Config(obj, path)  # refused below: not a config msgen accepts
        return
    for index, item in enumerate(items or []):
        yield from configs(item, (*path, "items", index), depth + 1)


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


def judge(obj: Any) -> Verdict:
    """Whether the sidecar's kustomize may load `obj` as a plug-in, and as what."""
    from ... import kinds

    if not isinstance(obj, dict):
        return Verdict(None, f"{_shown(obj)} is no plug-in config (not a mapping)")
    spec = function_of(obj)
    if spec is not None:
        if spec == MSGEN_FUNCTION:
            return Verdict(STEP, "")
        return Verdict(None, f"{_named(obj)} runs {described(spec)}: the msgen sidecar runs no program a repository names")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if api_version == BUILTIN_API_VERSION and kind in BUILTIN_KINDS:
        return Verdict(BUILTIN, "")
    if (api_version, kind) in kinds.known_kinds():
        return Verdict(LEGACY, "")
    if api_version == BUILTIN_API_VERSION:
        return Verdict(None, f"{_named(obj)} is no kustomize builtin the msgen sidecar runs")
    return Verdict(None, f"{_named(obj)} would make kustomize look for a program named by its "
                         "apiVersion and kind")  # fmt: skip


def _named(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return f"kind {_shown(obj.get('kind'))} (apiVersion {_shown(obj.get('apiVersion'))}, name {_shown(name)})"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def accepted_text(exec_variable: str) -> str:
    """What the sidecar accepts, for every refusal."""
    from ... import kinds

    jobs = ", ".join(sorted({f"{a} {k}" for a, k in kinds.known_kinds()}))
    return (
        f"accepted: a kustomize builtin (apiVersion: builtin, kind: {', '.join(BUILTIN_KINDS)}), "
        f"msgen's own function (exec: {{path: msgen-krm}}) or a job msgen compiles ({jobs}); the "
        f"sidecar's administrator may let kustomize run a repository's exec functions with "
        f"{exec_variable}=allow (docs/security.md says what that risks)"
    )
