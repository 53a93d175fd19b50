"""Every error one run can find in a job, without the cascades a wrong value would set off.

A job is checked in stages: its input model and its kind's rules (`to_plan`), then its pod
templates against Kubernetes' schema (`checks.pod_schema`) and the API server's rules
(`checks.apirules`), then what its target, framework, devices and launcher make of it. A stage
that needs the one before it to have succeeded cannot run after its errors (there is no plan
to render), but the pod-template checks need no plan: they read the templates as written.
So a job whose model has errors still has its templates checked, found where the kind's
model declares them (`template_paths`), and the schema's findings no longer hide the API
server's: `replcas`, `comand` and `imagePullPolicy: Allways` are three errors of one run.

What keeps this from reporting nonsense is `beyond`: a later stage's finding at a place an
earlier stage already found wrong (that very field, or a value inside it) says nothing new,
and is left out. A value of the wrong type is never walked into (the checks skip what is not
the mapping or list they expect), so no finding is made inside it. A job whose earlier stages
found as many errors as a report shows (`room_for_more`) is not checked further.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..checks import apirules, pod_schema
from ..checks.input_model import BaseModel, declared_bases, own_fields, resolve
from ..kinds.podtemplate import PodTemplateSpec
from ..model.diagnostics import MAX_REPORTED, Diagnostic
from ..model.plan import Options
from ..model.source import Document, Path
from ..model.type_forms import Literal, arguments, origin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.extension_points import InputModel

#: How pydantic's "missing" errors read (`checks.validation`): they stand at the mapping the
#: field is missing from, but cover only that field.
_MISSING = "missing required field '"
#: How an unknown field reads (the input model's and the schema's): at the field, in its mapping.
_UNKNOWN = "unknown field '"


def check_template(
    template: Any, document: Document, path: Path, options: Options
) -> list[Diagnostic]:
    """The schema's findings in one pod template, then the API server rules' beyond them."""
    version = options.kube_version
    found = pod_schema.check_template(template, document, path, version)
    rules = apirules.check_template(template, document, path, version, options.target)
    return found + beyond(found, rules)


def unplanned(
    document: Document, model: type[InputModel], options: Options, earlier: list[Diagnostic]
) -> list[Diagnostic]:
    """The pod-template findings of a job that did not become a plan, beyond `earlier`'s."""
    out: list[Diagnostic] = []
    for path in template_paths(model, document.data):
        template = _at(document.data, path)
        out.extend(check_template(template, document, path, options))
    return beyond(earlier, out)


#: The options the template checks depend on (the API server's release, the target's facts):
#: where a job's annotation gives one of them a bad value, its templates are not checked
#: with the run's value instead, which may not be the one meant.
_DECIDING = ("msgen/target", "msgen/kube-version")


def room_for_more(found: list[Diagnostic]) -> bool:
    """Whether a later stage's findings could still be shown: a report prints MAX_REPORTED
    findings, so a job whose earlier stages found that many errors (a hostile or generated
    file, its mistakes aliased thousands of times) is not walked again by later ones."""
    return sum(d.is_error for d in found) < MAX_REPORTED


def decided_by_bad_option(noted: list[Diagnostic]) -> bool:
    """Whether a bad annotation of `noted` (the job's options) decides the template checks."""
    deciding = {f"metadata.annotations.{name}" for name in _DECIDING}
    return any(d.is_error and d.field_path in deciding for d in noted)


def beyond(earlier: list[Diagnostic], later: list[Diagnostic]) -> list[Diagnostic]:
    """`later`'s findings but those that repeat an error of `earlier`: at, or inside, the
    field an error is about (for a missing field, that field); at a field holding it, in the
    same place (a missing `hostPath.path` is one error, whichever check names it); or about
    the mapping in which an error found an unknown field (`imagee:` is why the container
    "needs an image"). Linear in the findings: each is looked up by its path's prefixes."""
    errors = [d for d in earlier if d.is_error and d.field_path]
    if not errors:
        return later
    covered = {_covered(d) for d in errors}
    by_position: dict[object, list[str]] = {}
    for error in errors:
        by_position.setdefault(error.position, []).append(_covered(error))
    unknown_in = {_parent(d.field_path) for d in errors if d.message.startswith(_UNKNOWN)}
    kept = []
    for diag in later:
        path = diag.field_path
        if any(prefix in covered for prefix in _prefixes(path)) or path in unknown_in:
            continue
        if any(_within(place, path) for place in by_position.get(diag.position, ())):
            continue
        kept.append(diag)
    return kept


def _prefixes(path: str) -> list[str]:
    """`a.b[0].c` -> `a`, `a.b`, `a.b[0]`, `a.b[0].c`: the fields that hold it, and itself."""
    cuts = [i for i, c in enumerate(path) if c in ".[" and i > 0]
    return [path[:i] for i in cuts] + [path]


def _parent(path: str) -> str:
    """`a.b[0].c` -> `a.b[0]`; `a.b[0]` -> `a.b`."""
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


def _covered(diag: Diagnostic) -> str:
    """The field an error is about: its path, or for a missing field, that field's."""
    if diag.message.startswith(_MISSING):
        name = diag.message[len(_MISSING):].split("'", 1)[0]
        return f"{diag.field_path}.{name}"
    return diag.field_path


def _within(path: str, place: str) -> bool:
    return path == place or path.startswith((place + ".", place + "["))


def template_paths(model: type[InputModel], data: Any, path: Path = ()) -> Iterator[Path]:
    """Where `data` holds a pod template (a mapping), as `model` declares: a field typed
    `PodTemplateSpec`, in models, lists and maps of them, wherever the data has that shape."""
    if not isinstance(data, dict):
        return
    for name, annotation in _fields(model):
        if name in data:
            yield from _walk(annotation, data[name], path + (name,))


def _walk(annotation: Any, value: Any, path: Path) -> Iterator[Path]:
    if annotation is PodTemplateSpec:
        if isinstance(value, dict):
            yield path
        return
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield from template_paths(annotation, value, path)
        return
    kind, args = origin(annotation), arguments(annotation)  # msgen.model.type_forms' forms
    if kind is list and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(args[0], item, path + (index,))
    elif kind is dict and isinstance(value, dict) and len(args) == 2:
        for key, item in value.items():
            yield from _walk(args[1], item, path + (key,))
    elif args and kind not in (list, dict, Literal):  # a union: each member's shape
        for member in args:
            found = list(_walk(member, value, path))
            if found:
                yield from found
                return


def _fields(model: type[InputModel]) -> list[tuple[str, Any]]:
    return [
        (name, resolve(klass, annotation, for_pydantic=False))
        for klass in declared_bases(model)
        for name, annotation in own_fields(klass).items()
    ]


def _at(data: Any, path: Path) -> Any:
    for part in path:
        data = data[part]
    return data

