"""Options given as text: job annotations, a KRM function config, Argo CD's environment.

Every front end reads options the same way, so a job renders the same whether `msgen render`,
kustomize or Argo CD runs it. Per-job annotations (`msgen/<option>`) override the run's
options for that job only. Which options there are, and what each accepts, is
`msgen.options.option_table`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..model import mindspore_versions, quantity, versions
from ..model.diagnostics import Diagnostic, Severity, did_you_mean
from ..model.names import dns1123_label, label_value, refused
from .option_table import BY_NAME, Row, choices, names
from ..model.plan import Options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ..model.source import Document

ANNOTATION_PREFIX = "msgen/"
#: Matched whole (`fullmatch`): a count option (max-output-objects).
COUNT = re.compile(r"[1-9][0-9]{0,17}")


class OptionError(ValueError):
    """A bad option value; `key` is the name as the user wrote it; `detail` the message
    without that name, for a finding placed at the option itself (its path names it)."""

    def __init__(self, key: str, message: str, *, unknown_name: bool = False, detail: str | None = None):
        super().__init__(message)
        self.key = key
        self.unknown_name = unknown_name
        self.detail = message if detail is None else detail


def _refused(key: str, detail: str) -> OptionError:
    """The error for a bad value of option `key`: `key: detail`."""
    return OptionError(key, f"{key}: {detail}", detail=detail)


def apply(
    base: Options,
    values: Mapping[str, Any],
    *,
    prefix: str = "",
    shown_as: Mapping[str, str] | None = None,
    host: str | None = None,
) -> Options:
    """`base` with every `<prefix><option>` of `values` applied; other keys are ignored.

    An unknown `<prefix>...` key is an error (a misspelt annotation or config key), as is an
    option `host` does not take (None: any host's). Errors name an option as `shown_as` says
    (an environment variable), else as its key.
    """
    changed, errors = apply_each(base, values, prefix=prefix, shown_as=shown_as, host=host)
    if errors:
        raise errors[0]
    return changed


def apply_each(
    base: Options,
    values: Mapping[str, Any],
    *,
    prefix: str = "",
    shown_as: Mapping[str, str] | None = None,
    host: str | None = None,
) -> tuple[Options, list[OptionError]]:
    """`apply`, with every bad key's error rather than the first one's: a job with two
    misspelt annotations hears of both in one run."""
    known_names = names(host)
    changes: dict[str, Any] = {}
    errors: list[OptionError] = []
    for key, raw in values.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix) :]
        if name not in known_names:
            known = ", ".join(prefix + n for n in known_names)
            errors.append(OptionError(
                key,
                f"unknown msgen option {key!r}{_did_you_mean(prefix, name, known_names)}; "
                f"accepted: {known}",
                unknown_name=True,
            ))
            continue
        row = BY_NAME[name]
        shown = (shown_as or {}).get(key, key)
        try:
            changes[row.field] = value_of(row, shown, str(raw).strip() if raw is not None else "")
        except OptionError as exc:
            errors.append(exc)
    return (base._replace(**changes) if changes else base), errors


def for_job(document: Document, options: Options) -> tuple[Options, list[Diagnostic]]:
    """The run's options with the job's `msgen/<option>` annotations applied. A bad annotation
    is an error at it; one that overrides a value a plug-in host's layer set differently
    (`Options.origins`) is a warning, so that value is never dropped silently."""
    metadata = document.data.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if not isinstance(annotations, dict):
        options, found = _within_known(document, options, {})
        return options, found + _namespace_kept(document, options)
    changed, errors = apply_each(options, annotations, prefix=ANNOTATION_PREFIX, host="annotation")
    if errors:  # each at its annotation, whose path names the option
        return options, [
            document.diagnostic(("metadata", "annotations", exc.key), exc.detail, key=exc.unknown_name)
            for exc in errors
        ]
    found = []
    for name, origin in options.origins:
        key = ANNOTATION_PREFIX + name
        field = BY_NAME[name].field
        if key in annotations and getattr(changed, field) != getattr(options, field):
            found.append(
                document.diagnostic(
                    ("metadata", "annotations", key),
                    f"{key}={str(annotations[key]).strip()!r} overrides {origin} for this job "
                    "(a job's own annotation wins over the options of the whole run)",
                    severity=Severity.WARNING,
                )
            )
    changed, newer = _within_known(document, changed, annotations)
    return changed, found + newer + _namespace_kept(document, changed)


def _namespace_kept(document: Document, options: Options) -> list[Diagnostic]:
    """A job's own `metadata.namespace` is kept when the run names another (`-n`, a KRM
    config, Argo CD's destination): the run's namespace is for jobs that name none, as Argo
    CD's destination and Helm's `--namespace` leave a namespace a manifest writes. kubectl
    refuses the mismatch, but it acts on a cluster at once; a render may read a directory of
    jobs of several namespaces. So it is a warning at the job's namespace, not silence."""
    metadata = document.data.get("metadata")
    written = metadata.get("namespace") if isinstance(metadata, dict) else None
    if not options.namespace or not isinstance(written, str) or written in ("", options.namespace):
        return []
    given = dict(options.origins).get("namespace", f"namespace {options.namespace!r}")
    return [
        document.diagnostic(
            ("metadata", "namespace"),
            f"the job's own namespace {written!r} is kept: {given} is for jobs whose metadata "
            f"names none (for {options.namespace!r}, write it here, or leave the job's "
            "namespace out)",
            severity=Severity.WARNING,
        )
    ]


def _within_known(
    document: Document, options: Options, annotations: Mapping[str, Any]
) -> tuple[Options, list[Diagnostic]]:
    """A Kubernetes release newer than msgen knows renders as the newest it knows, with a
    warning at what asked for it. The command line says so when it parses `--kube-version`;
    a job's annotation, a KRM function config and Argo CD's `KUBE_VERSION` arrive here, so
    every host warns alike (once per job, at the annotation or else at the job's kind)."""
    if options.kube_version <= versions.NEWEST:
        return options, []
    key = ANNOTATION_PREFIX + "kube-version"
    if key in annotations:
        path: tuple[str, ...] = ("metadata", "annotations", key)
        message = versions.newer_than_known(options.kube_version)
    else:
        path = ("kind",)
        shown = versions.show(options.kube_version)
        given = dict(options.origins).get("kube-version", f"kube-version {shown}")
        message = f"{given}: {versions.newer_than_known(options.kube_version)}"
    clamped = options._replace(kube_version=versions.NEWEST)
    return clamped, [document.diagnostic(path, message, severity=Severity.WARNING)]


def _did_you_mean(prefix: str, name: str, known: list[str]) -> str:
    """` (did you mean 'msgen/target'?)` for a slip such as `msgen/targt`, else nothing."""
    from difflib import get_close_matches  # only for a misspelt option

    close = get_close_matches(name, known, n=1)
    return f" (did you mean {prefix + close[0]!r}?)" if close else ""


def value_of(row: Row, key: str, text: str, *, empty_unsets: bool = True) -> Any:
    """The `Options` value of `text` given for `row` (named `key` in messages); raises
    OptionError saying what is accepted. `empty_unsets=False`: an empty text is checked as
    any other, even for an option whose empty text unsets it (the command line's reading)."""
    accepted = choices(row)
    if accepted is not None and text not in accepted:
        raise _refused(
            key, f"{text!r} is not accepted{did_you_mean(text, accepted)}; accepted: {', '.join(accepted)}"
        )
    if row.empty_unsets and empty_unsets and not text:
        return None
    if row.check == "version":
        try:
            return versions.parse(text)
        except ValueError as exc:
            raise _refused(key, str(exc)) from None
    if row.check == "mindspore-version":
        try:
            return mindspore_versions.parse(text)
        except ValueError as exc:
            raise _refused(key, str(exc)) from None
    if row.check == "count":
        if not COUNT.fullmatch(text):
            raise _refused(key, f"{text!r} is not accepted; accepted: a whole number, 1 or more")
        return int(text)
    if row.check == "quantity":
        if not _is_size(text):
            raise _refused(key, f"{text!r} is not accepted; accepted: a size such as 16Gi or 512Mi, "
                           f"below {SIZE_CEILING_SHOWN}")
        return text
    if row.check in ("dns-label", "label-value"):
        problems = dns1123_label(text) if row.check == "dns-label" else label_value(text, empty=False)
        if problems:
            raise _refused(key, f"{text!r} {refused(problems)}")
        return text
    if accepted == ("true", "false"):
        return text == "true"
    return text


#: A size option is a count of bytes every reader holds in 64 bits (Kubernetes' quantities,
#: Go's int64): `99999999999999999999999999999999Ei` was accepted, and no bound it sets means
#: anything.
SIZE_CEILING = 8 << 60
SIZE_CEILING_SHOWN = "8Ei"


def _is_size(text: str) -> bool:
    """A size option (`--shm-size`): a Kubernetes quantity (msgen.model.quantity's grammar) of
    whole bytes, more than none and below SIZE_CEILING."""
    exact = quantity.amount(text)
    return exact is not None and exact.whole and 0 < exact.numerator // exact.denominator < SIZE_CEILING


