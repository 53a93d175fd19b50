"""Options given as text: job annotations, a KRM function config, Argo CD's environment.

Every front end reads options the same way, so a job renders the same whether `msgen render`,
kustomize or Argo CD runs it. Per-job annotations (`msgen/<option>`) override the run's
options for that job only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import versions
from .diagnostics import Diagnostic, Severity
from .names import dns1123_problem
from .plan import Options
from .targets import NAMES as TARGET_NAMES

if TYPE_CHECKING:
    from .source import Document

ANNOTATION_PREFIX = "msgen/"
QUANTITY = re.compile(r"^[1-9][0-9]*(Ki|Mi|Gi|Ti|k|M|G|T)?$")
LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")

#: option name → (Options field, accepted values or None for free text)
OPTION_NAMES: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "target": ("target", TARGET_NAMES),
    "kube-version": ("kube_version", None),
    "namespace": ("namespace", None),
    "scheduler-address": ("scheduler_address", ("cluster-ip", "dns")),
    "allow-env-override": ("allow_env_override", ("true", "false")),
    "argocd-sync-waves": ("argocd_sync_waves", ("true", "false")),
    "gang-scheduler": ("gang_scheduler", ("none", "volcano", "scheduler-plugins")),
    "kueue-queue": ("kueue_queue", None),
    "launcher": ("launcher", ("per-device", "msrun", "none")),
    "rank-table": ("rank_table", ("none", "operator")),
    "shm-size": ("shm_size", None),
    "accelerator-type": ("accelerator_type", None),
    "recovery-volume": ("recovery_volume", None),
    "gitops": ("gitops", ("true", "false")),
    "run-name": ("run_name", ("job", "content")),
}


class OptionError(ValueError):
    """A bad option value; `key` is the name as the user wrote it."""

    def __init__(self, key: str, message: str, *, unknown_name: bool = False):
        super().__init__(message)
        self.key = key
        self.unknown_name = unknown_name


def apply(
    base: Options,
    values: Mapping[str, Any],
    *,
    prefix: str = "",
    shown_as: Mapping[str, str] | None = None,
) -> Options:
    """`base` with every `<prefix><option>` of `values` applied; other keys are ignored.

    An unknown `<prefix>...` key is an error (a misspelt annotation or config key). Errors name
    an option as `shown_as` says (an environment variable), else as its key.
    """
    changes: dict[str, Any] = {}
    for key, raw in values.items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix) :]
        if name not in OPTION_NAMES:
            known = ", ".join(prefix + n for n in OPTION_NAMES)
            raise OptionError(
                key, f"unknown msgen option {key!r}; accepted: {known}", unknown_name=True
            )
        field, accepted = OPTION_NAMES[name]
        shown = (shown_as or {}).get(key, key)
        changes[field] = _value(shown, name, str(raw).strip() if raw is not None else "", accepted)
    return base._replace(**changes) if changes else base


def for_job(document: Document, options: Options) -> tuple[Options, list[Diagnostic]]:
    """The run's options with the job's `msgen/<option>` annotations applied. A bad annotation
    is an error at it; one that overrides a value a plug-in host's layer set differently
    (`Options.origins`) is a warning, so that value is never dropped silently."""
    metadata = document.data.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if not isinstance(annotations, dict):
        return options, []
    try:
        changed = apply(options, annotations, prefix=ANNOTATION_PREFIX)
    except OptionError as exc:
        path = ("metadata", "annotations", exc.key)
        return options, [document.diagnostic(path, str(exc), key=exc.unknown_name)]
    found = []
    for name, origin in options.origins:
        key = ANNOTATION_PREFIX + name
        field = OPTION_NAMES[name][0]
        if key in annotations and getattr(changed, field) != getattr(options, field):
            found.append(
                document.diagnostic(
                    ("metadata", "annotations", key),
                    f"{key}={str(annotations[key]).strip()!r} overrides {origin} for this job "
                    "(a job's annotation wins)",
                    severity=Severity.WARNING,
                )
            )
    return changed, found


def _value(key: str, name: str, text: str, accepted: tuple[str, ...] | None) -> Any:
    if accepted is not None and text not in accepted:
        raise OptionError(key, f"{key}: {text!r} is not accepted; accepted: {', '.join(accepted)}")
    if name == "kube-version":
        try:
            return versions.parse(text)
        except ValueError as exc:
            raise OptionError(key, f"{key}: {exc}") from None
    if name == "kueue-queue":
        problem = dns1123_problem(text) if text else None
        if problem is not None:
            raise OptionError(key, f"{key}: {text!r} {problem}")
        return text or None
    if name == "namespace":
        problem = dns1123_problem(text)
        if problem is not None:
            raise OptionError(key, f"{key}: {text!r} {problem}")
        return text
    if name == "shm-size":
        if not QUANTITY.match(text):
            raise OptionError(
                key, f"{key}: {text!r} is not accepted; accepted: a size such as 16Gi or 512Mi"
            )
        return text
    if name in ("accelerator-type", "recovery-volume"):
        problem = dns1123_problem(text) if name == "recovery-volume" else _label_value(text)
        if problem is not None:
            raise OptionError(key, f"{key}: {text!r} {problem}")
        return text
    if accepted == ("true", "false"):
        return text == "true"
    return text


def _label_value(text: str) -> str | None:
    if LABEL_VALUE.match(text):
        return None
    return (
        "is not a label value; accepted: at most 63 letters, digits, '-', '_' or '.', "
        "starting and ending with a letter or digit"
    )
