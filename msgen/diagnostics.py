"""Findings about the input, as data.

Every problem a user can cause becomes one `Diagnostic`: what is wrong, where (file, line,
column and the field path) and what would be accepted. Stages return diagnostics
instead of raising, so one run reports every problem at once; the front ends (CLI, KRM
function, plug-ins) decide how to show them and take the exit status from the worst severity.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Position:
    """1-based line and column in a named source."""

    file: str
    line: int
    column: int


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    message: str
    position: Position | None = None
    field_path: str = ""
    document_index: int = 0

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


class InputError(Exception):
    """Raised by a stage that cannot go on; carries the diagnostics that stopped it."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


def format_diagnostic(diag: Diagnostic, source_text: str | None = None) -> str:
    """`file:line:col: severity: [path: ]message`, then the source line with a caret under it."""
    where = ""
    if diag.position is not None:
        pos = diag.position
        where = f"{pos.file}:{pos.line}:{pos.column}: "
    path = f"{diag.field_path}: " if diag.field_path else ""
    text = f"{where}{diag.severity.value}: {path}{diag.message}"
    if source_text is not None and diag.position is not None:
        excerpt = _excerpt(source_text, diag.position.line, diag.position.column)
        if excerpt:
            text += "\n" + excerpt
    return text


def _excerpt(source_text: str, line: int, column: int) -> str:
    lines = source_text.splitlines()
    if not 1 <= line <= len(lines):
        return ""
    shown = lines[line - 1].replace("\t", " ")
    gutter = f"{line:>5} | "
    caret_pad = " " * (len(gutter) - 2) + "| " + " " * max(column - 1, 0)
    return f"{gutter}{shown}\n{caret_pad}^"
