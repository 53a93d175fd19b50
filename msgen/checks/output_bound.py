"""A bound on one run's whole output: objects and size, past which the run fails.

Each job is capped on its own (its replicas, its repeated env: `output_size`), but a run has
no such cap: 50 KB of input (a 50 KB env value and 9,999 bare pods) made 490-514 MB of YAML,
and 20 such jobs in 14 KB made 276 MB in the Argo CD plugin. The input comes from whoever may
push to a repository; the output goes to a cluster, a kustomize build or Argo CD's repo
server. So a run stops at `max-output-objects` objects or `max-output-size` of text (counted
in characters as written, before the run's end), with an error at the document that
crossed the bound naming the option that raises it; nothing is written.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.plan import Options
from ..model.quantity import amount
from ..model.source import Document

def size_of(text: str) -> int:
    """A size option's value (`256Mi`, `1.5Gi`: a quantity of whole bytes, checked by
    `options.text`) in characters."""
    exact = amount(text)
    assert exact is not None, text
    return exact.numerator // exact.denominator


class OutputBound:
    """What one run wrote so far, against its options' bound."""

    def __init__(self, options: Options):
        self.max_objects = options.max_output_objects
        self.max_size = size_of(options.max_output_size)
        self.shown_size = options.max_output_size
        self.objects = 0
        self.size = 0
        self.passed = False

    def add(self, document: Document, objects: int, size: int | None) -> Diagnostic | None:
        """Count one document's objects (and their text's size, when the host wrote it); the
        error, once, when the run passes its bound."""
        self.objects += objects
        self.size += size or 0
        if self.passed:
            return None
        if self.objects > self.max_objects:
            self.passed = True
            return _passed(document, f"{self.objects} objects", "max-output-objects",
                           str(self.max_objects), "N")
        if self.size > self.max_size:
            self.passed = True
            return _passed(document, f"{self.size} characters of output", "max-output-size",
                           self.shown_size, "SIZE")
        return None

    def check_text(self, size: int) -> str | None:
        """For a host that writes its output at the end (the KRM function): the error when
        the whole text is past the bound, else None."""
        if size <= self.max_size:
            return None
        return (f"the output is {size} characters, more than max-output-size {self.shown_size}; "
                "accepted: a smaller output, or raise the bound (functionConfig data "
                "max-output-size: 1Gi)")


def _passed(document: Document, amount: str, option: str, bound: str, metavar: str) -> Diagnostic:
    return document.diagnostic(
        ("kind",),
        f"with this job the run's output reaches {amount}, past {option} {bound}: nothing is "
        f"written; accepted: at most that much in one run (fewer jobs or replicas), or raise the "
        f"bound: --{option} {metavar}, the KRM function's data `{option}`, the Argo CD parameter "
        f"`{option}`",
    )
