"""msgen as a kustomize KRM function: `msgen-krm`, a `ResourceList` in, a `ResourceList` out.

- As a generator (`generators:` naming a job file that carries the function annotation) the
  function config is the job: it is compiled to its objects.
- As a transformer (`transformers:`) every job among `items` is replaced by its objects, in
  place, and everything else passes through unchanged, so overlays can patch an MSJob before
  it is compiled.

Options come from the function config's `data` (a ConfigMap keyed by the option names of
msgen.options.option_table that the `krm` host takes) and, per job, from `msgen/<option>` annotations; inside the Argo CD
plugin's build, also from the application (msgen.options.option_layers gives the precedence). kustomize ignores `results`, so every error is also
written to stderr and the exit status is non-zero; warnings go to both without failing.
"""

from __future__ import annotations

import os
import sys

from ...compile import collector
from ... import kinds
from . import krm_checks, krm_config
from ...model.diagnostics import (
    MAX_REPORTED,
    Diagnostic,
    InputError,
    Severity,
    distinct,
    has_errors,
    report_lines,
)
from ...yamlio.emit import to_yaml
from ...compile.driver import Driver
from ...checks.output_bound import OutputBound
from ...yamlio.origin import OriginFiles, find_original, yaml_files
from ...model.plan import Options
from ...model.source import Document, Source
from ...yamlio.inputs import decoded
from ...yamlio.yaml_loader import load_documents
from ...yamlio.terminal import note_terminal_stdin
from ...model.exit_status import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK
from ..compile_command import guarded, internal_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RESOURCE_LIST_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1alpha1")
PATH_ANNOTATIONS = krm_config.PATH_ANNOTATIONS


def main() -> None:
    """The `msgen-krm` console script: `run`, then leave without the interpreter's clean-up
    (kustomize starts msgen-krm afresh for every build; see `msgen.hosts.command_line.entry`)."""
    import gc

    from ..fast_exit import leave, render_modules_loaded
    from .krm_usage import command_line

    try:
        command_line(sys.argv[1:])
    except SystemExit as exc:
        leave(exc.code)

    gc.disable()  # while the modules load, as `msgen.hosts.command_line.entry.main` does
    render_modules_loaded()
    try:
        guarded(run_function, "msgen-krm")
    except SystemExit as exc:
        leave(exc.code)
    leave(EXIT_OK)


def run_function() -> None:
    """The KRM function: no arguments, as `exec: {path: msgen-krm}` runs it."""
    note_terminal_stdin(
        "msgen-krm",
        "a ResourceList",
        "msgen-krm is a KRM function that kustomize runs; to render files: msgen render PATH.",
    )
    raw = sys.stdin.buffer.read()
    try:
        status, output, messages = run_bytes(raw, os.getcwd())
    except Exception as exc:  # the error boundary: kustomize gets a ResourceList whatever happens
        problem = Diagnostic(Severity.ERROR, internal_error("msgen-krm", exc))
        _, output, messages = _failed([problem], {}, [])
        status = EXIT_INTERNAL
    for message in messages:
        print(message, file=sys.stderr)
    sys.stdout.write(output)
    raise SystemExit(status)


def run_bytes(raw: bytes, cwd: str) -> tuple[int, str, list[str]]:
    """`run` for the bytes kustomize wrote: text that is not UTF-8 is an error, positioned."""
    source, problem = decoded("<ResourceList>", raw, "a ResourceList in UTF-8")
    if problem is not None:
        return _failed([problem], {}, [])
    assert source is not None
    return run(source.text, cwd)


def run(text: str, cwd: str) -> tuple[int, str, list[str]]:
    """(exit status, stdout, stderr lines) for one ResourceList."""
    source = Source("<ResourceList>", text)
    try:
        documents = load_documents(source)
    except InputError as exc:
        return _failed(exc.diagnostics, {source.name: source}, [])
    if len(documents) != 1 or not _is_resource_list(documents[0].data):
        not_a_list = Diagnostic(
            Severity.ERROR,
            "stdin is not a ResourceList; accepted: one config.kubernetes.io/v1 ResourceList, "
            "as kustomize sends to KRM functions",
        )
        return _failed([not_a_list], {source.name: source}, [])
    resource_list = documents[0]
    data: dict[str, Any] = resource_list.data
    envelope = _envelope_problems(resource_list)
    if envelope:
        return _failed(envelope, {source.name: source}, [])
    items: list[Any] = list(data.get("items") or [])
    function_config = data.get("functionConfig")
    config_data = (
        function_config.get("data")
        if isinstance(function_config, dict) and not _is_job(function_config)
        else None
    )
    where = krm_config.place(resource_list, function_config, cwd)
    sources = {source.name: source, where.document.source.name: where.document.source}
    config_found = krm_config.data_problems(where, config_data)
    if config_found:
        return _failed(config_found, sources, [])
    options, config_found = krm_config.options(where, config_data)
    if (
        isinstance(function_config, dict)
        and _is_job(function_config)
        and not any(_same(i, function_config) for i in items)
    ):
        items.append(function_config)
    if has_errors(config_found):  # no item is compiled with options the user did not mean
        return _failed(config_found, sources, [])
    if not any(isinstance(i, dict) and _is_job(i) for i in items):
        return _passed_through(text, resource_list, items, options, config_found, sources)
    missing = krm_checks.configuration_missing()
    config_found += [missing] if missing is not None else []
    return _compile_items(resource_list, items, options, cwd, config_found, where.document)


def _passed_through(text: str, resource_list: Document, items: list[Any], options: Options,
                    found: list[Diagnostic], sources: dict[str, Source]) -> tuple[int, str, list[str]]:
    """No job to compile (msgen-krm listed above the overlay that compiled the jobs, to check
    them): the ResourceList back as it came, byte for byte, once the objects msgen compiled
    earlier are found to agree with themselves. A list that came without `items` goes back
    with an empty one (kustomize reads `items` from every reply), and the reply is held to the
    run's output bound as a compiled one is."""
    found = found + krm_checks.compiled_problems(items)
    if has_errors(found):
        return _failed(found, sources, [])
    if not isinstance(resource_list.data.get("items"), list):
        reply = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": []}
        text = to_yaml([reply])
    too_much = OutputBound(options).check_text(len(text))
    if too_much is not None:
        return _failed(found + [resource_list.diagnostic(("items",), too_much)], sources, [])
    return 0, text, report_lines(found, _texts(sources))


def _compile_items(
    resource_list: Document,
    items: list[Any],
    options: Options,
    cwd: str,
    config_found: list[Diagnostic],
    config: Document,
) -> tuple[int, str, list[str]]:
    """Every job among `items` replaced by its objects, in place, through the driver every
    host compiles with (so two items that make the same object are an error, as two files
    are for `msgen render`); every other item passes through."""
    output: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = [_result(d, None) for d in config_found]
    driver = Driver(options, output.extend, bounded=True, around_document=collector.paused)
    driver.result.sources[resource_list.source.name] = resource_list.source
    driver.result.sources[config.source.name] = config.source  # where its findings point
    files = _Files(cwd)
    for index, item in enumerate(items):
        if not (isinstance(item, dict) and _is_job(item)):
            output.append(item)
            continue
        document = _item_document(resource_list, index, item, cwd, files)
        for diag in distinct(driver.add_document(document)):
            if len(results) < MAX_REPORTED:
                results.append(_result(diag, item))
    compilation = driver.result
    unshown = (compilation.unshown_findings, compilation.unshown_errors)
    if compilation.ok:  # what an overlay in between did to objects compiled earlier
        compilation.diagnostics += krm_checks.compiled_problems(
            [i for i in items if isinstance(i, dict) and not _is_job(i)])
    if not compilation.ok:
        found = config_found + compilation.diagnostics
        return _failed(found, compilation.sources, results, unshown)
    found = config_found + compilation.diagnostics
    messages = report_lines(found, _texts(compilation.sources), unshown)
    reply: dict[str, Any] = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": output,
    }
    if results:
        reply["results"] = _bounded(results, unshown[0])
    text = to_yaml([reply])
    too_much = driver.bound.check_text(len(text))
    if too_much is not None:  # the items that passed through count too
        problem = resource_list.diagnostic(("items",), too_much)
        return _failed(config_found + [problem], compilation.sources, results, unshown)
    return EXIT_OK, text, messages


def _envelope_problems(resource_list: Document) -> list[Diagnostic]:
    """What kustomize never sends but a hand-written or broken ResourceList may hold."""
    data = resource_list.data
    out = []
    items = data.get("items")
    if items is not None and not isinstance(items, list):
        out.append(
            resource_list.diagnostic(
                ("items",), f"{_shown(items)} is not accepted; accepted: a list of objects"
            )
        )
    for index, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            out.append(
                resource_list.diagnostic(
                    ("items", index),
                    f"{_shown(item)} is not accepted; accepted: an object (a mapping)",
                )
            )
        elif _is_job(item) and not isinstance(item.get("metadata"), dict):
            out.append(
                resource_list.diagnostic(
                    ("items", index, "metadata"),
                    f"{_shown(item.get('metadata'))} is not accepted; accepted: the job's "
                    "metadata, a mapping with its name",
                )
            )
    config = data.get("functionConfig")
    if config is not None and not isinstance(config, dict):
        out.append(
            resource_list.diagnostic(
                ("functionConfig",), f"{_shown(config)} is not accepted; accepted: a ConfigMap"
            )
        )
    elif isinstance(config, dict) and _is_job(config) and not isinstance(config.get("metadata"), dict):
        out.append(
            resource_list.diagnostic(
                ("functionConfig", "metadata"),
                f"{_shown(config.get('metadata'))} is not accepted; accepted: the job's "
                "metadata, a mapping with its name",
            )
        )
    return out


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return repr(value)


class _Files:
    """The files a run may read for positions: inside the directory kustomize runs the
    function in; then, for a job not found there, the files of the kustomizations the running
    `kustomize build` reads (found once, on first need: kustomize 4.5.4 runs the function in a
    base's directory, not the overlay's that holds the job; see `krm_config`)."""

    def __init__(self, cwd: str):
        self.here = OriginFiles(cwd)
        self._built: tuple[list[str], OriginFiles] | None = None

    def built(self) -> tuple[list[str], OriginFiles]:
        if self._built is None:
            listed = krm_config.kustomization_files(krm_config.build_roots())
            roots = {os.path.dirname(os.path.realpath(f)) for f in listed}
            self._built = (listed, OriginFiles(*sorted(roots)) if roots else self.here)
        return self._built


def _item_document(
    resource_list: Document, index: int, item: dict[str, Any], cwd: str, files: _Files
) -> Document:
    """The job as a document, positioned in its own file when that can be found inside the
    kustomization's root or the running build's kustomizations (a path annotation naming a
    file elsewhere is not read)."""
    metadata = item.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    annotations = annotations if isinstance(annotations, dict) else {}
    named = [str(annotations[a]) for a in PATH_ANNOTATIONS if a in annotations]
    positions = resource_list.positions.within(("items", index))
    original = find_original(named + yaml_files(cwd), item, positions, files.here)
    if original is None:
        listed, within = files.built()
        if listed:
            original = find_original(listed, item, positions, within)
    if original is not None:
        return original
    return Document(resource_list.source, 0, item, positions)


def _result(diag: Diagnostic, item: dict[str, Any] | None) -> dict[str, Any]:
    result: dict[str, Any] = {"message": diag.message, "severity": diag.severity.value}
    if item is not None:
        metadata = item.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        ref = {
            "apiVersion": item.get("apiVersion"),
            "kind": item.get("kind"),
            "name": metadata.get("name"),
        }
        if metadata.get("namespace"):
            ref["namespace"] = metadata["namespace"]
        result["resourceRef"] = ref
    if diag.field_path:
        result["field"] = {"path": diag.field_path}
    if diag.position is not None:
        result["file"] = {"path": diag.position.file, "index": diag.document_index}
        result["message"] = f"{diag.position.line}:{diag.position.column}: {diag.message}"
    return result


def _failed(
    diagnostics: list[Diagnostic],
    sources: dict[str, Source],
    results: list[dict[str, Any]],
    unshown: tuple[int, int] = (0, 0),
) -> tuple[int, str, list[str]]:
    """The failed reply: no items, and in `results` every error (the function config's own,
    an envelope's, or an item's, with its item), as on stderr."""
    messages = report_lines(diagnostics, _texts(sources), unshown)
    errors = sum(d.is_error for d in distinct(diagnostics)) + unshown[1]
    messages.append(f"msgen-krm: {errors} error(s); the build must not use this output")
    listed = {(r["message"], r["severity"]) for r in results}
    for diag in distinct(diagnostics):  # findings of no item: the envelope's, the config's
        result = _result(diag, None)
        if (result["message"], result["severity"]) not in listed and len(results) < MAX_REPORTED:
            results.append(result)
    reply = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": [],
        "results": _bounded(results, unshown[0]),
    }
    return EXIT_INPUT, to_yaml([reply]), messages


def _bounded(results: list[dict[str, Any]], unshown: int) -> list[dict[str, Any]]:
    """At most MAX_REPORTED results, then one saying how many more there were."""
    rest = len(results) - MAX_REPORTED + unshown
    if rest <= 0:
        return results
    return results[:MAX_REPORTED] + [
        {"message": f"... and {rest} more result(s) not shown", "severity": "error"}
    ]


def _texts(sources: dict[str, Source]) -> dict[str, str]:
    return {name: source.text for name, source in sources.items()}


def _is_resource_list(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and data.get("kind") == "ResourceList"
        and data.get("apiVersion") in RESOURCE_LIST_VERSIONS
    )


def _is_job(data: dict[str, Any]) -> bool:
    """A job kind, or a near miss of one: compiled, so that the near miss is an error rather
    than an uncompiled job in the build's output."""
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if isinstance(api_version, str) and isinstance(kind, str) and kinds.lookup(api_version, kind):
        return True
    from ...kinds.near_miss import compiled_or_near  # only for a kind msgen does not compile

    return compiled_or_near(api_version, kind)


def _same(a: Any, b: dict[str, Any]) -> bool:
    if not isinstance(a, dict):
        return False
    meta_a, meta_b = a.get("metadata"), b.get("metadata")
    meta_a = meta_a if isinstance(meta_a, dict) else {}
    meta_b = meta_b if isinstance(meta_b, dict) else {}
    return (a.get("apiVersion"), a.get("kind"), meta_a.get("name")) == (
        b.get("apiVersion"),
        b.get("kind"),
        meta_b.get("name"),
    )
