"""Findings about the input, as data.

Every problem a user can cause becomes one `Diagnostic`: what is wrong, where (file, line,
column and the field path) and what would be accepted. Stages return diagnostics
instead of raising, so one run reports every problem at once; the front ends (CLI, KRM
function, plug-ins) decide how to show them and take the exit status from the worst severity.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from enum import Enum

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple, Protocol
else:
    from .type_forms import NamedTuple, Protocol

#: At most this many diagnostics are printed per run; the rest are counted. A file with
#: thousands of copies of a mistake needs the first ones fixed, not a flood.
MAX_REPORTED = 200
#: Excerpts show at most this many characters of a line, around the column.
EXCERPT_WIDTH = 120
#: How an excerpt shows a tab: visibly (YAML refuses tabs where it indents), in one column.
TAB_SHOWN = "\u2192"
#: The line breaks YAML counts lines by (libyaml's positions use the same), as the text of a
#: pattern: `re` compiles it where first asked (a text with other breaks than `\n`).
LINE_BREAK = "\r\n|[\n\r\x85\u2028\u2029]"


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


class Position(NamedTuple):
    """1-based line and column in a named source."""

    file: str
    line: int
    column: int


class Diagnostic(NamedTuple):
    """One finding (a `NamedTuple`, as the render path's records are: see `msgen.model.plan`)."""

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


def did_you_mean(given: object, accepted: Iterable[str]) -> str:
    """` (did you mean 'Always'?)` when `given` is a slip of one of `accepted` (its letter case,
    a letter or two), else nothing: what a misspelt field name gets, for a value too."""
    if not isinstance(given, str) or not given:
        return ""
    choices = [a for a in accepted if a]
    same = [a for a in choices if a.lower() == given.lower()]
    if not same:
        from difflib import get_close_matches  # only for a value that is wrong

        same = get_close_matches(given, choices, n=1)
    return f" (did you mean {same[0]!r}?)" if same and same[0] != given else ""


def position_key(diag: Diagnostic) -> tuple[int, int]:
    """Findings in the order of their place in the input (line, column); unplaced ones first."""
    return (diag.position.line, diag.position.column) if diag.position else (0, 0)


def distinct(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Each finding once: every alias expansion of one bad node reports the same error."""
    seen: set[tuple[Severity, str, Position | None]] = set()
    kept = []
    for diag in diagnostics:
        key = (diag.severity, diag.message, diag.position)
        if key not in seen:
            seen.add(key)
            kept.append(diag)
    return kept


class Lines:
    """One source text, indexed once so each excerpt costs the length of its line only."""

    def __init__(self, text: str):
        self.text = text
        self._starts: list[int] | None = None

    def line(self, number: int) -> str | None:
        if self._starts is None:
            self._starts = _line_starts(self.text)
        if not 1 <= number <= len(self._starts):
            return None
        start = self._starts[number - 1]
        end = self._starts[number] if number < len(self._starts) else len(self.text)
        if start == end == len(self.text):
            return None
        return self.text[start:end].rstrip("\r\n\x85\u2028\u2029")


def _line_starts(text: str) -> list[int]:
    """Where each line of `text` starts: after each of YAML's line breaks (`LINE_BREAK`). A
    text whose only break is `\\n` is cut by str.split, without compiling the pattern."""
    if "\r" in text or not text.isascii():  # the other breaks are \r and beyond ASCII
        return [0, *(m.end() for m in re.finditer(LINE_BREAK, text))]
    return [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n")[:-1])]


class LineReader(Protocol):
    """A source too long to hold as text, which reads just the lines asked for."""

    def read_lines(self, wanted: set[int]) -> dict[int, str]: ...


class PickedLines(Lines):
    """Only some lines of a source (those its reported findings point at)."""

    def __init__(self, picked: dict[int, str]):
        super().__init__("")
        self._picked = picked

    def line(self, number: int) -> str | None:
        return self._picked.get(number)


def report_lines(
    diagnostics: list[Diagnostic],
    texts: Mapping[str, str | LineReader],
    unshown: tuple[int, int] = (0, 0),
) -> list[str]:
    """The printed report: distinct diagnostics with excerpts, at most MAX_REPORTED of them.

    `unshown` counts (findings, errors) a streaming run did not keep (see
    `driver.compile_stream`); they join the count of those not shown.
    Costs O(size of the sources + number of diagnostics): each source is indexed once.
    """
    shown = distinct(diagnostics)
    indexed: dict[str, Lines] = {}
    for name, text in texts.items():
        if not isinstance(text, str):  # a streamed source: read the lines excerpts need
            wanted = {d.position.line for d in shown[:MAX_REPORTED] if d.position and d.position.file == name}
            if wanted:
                indexed[name] = PickedLines(text.read_lines(wanted))
    out = []
    for diag in shown[:MAX_REPORTED]:
        lines = None
        if diag.position is not None and diag.position.file in texts:
            name = diag.position.file
            text = texts[name]
            lines = indexed.get(name) or indexed.setdefault(name, Lines(text if isinstance(text, str) else ""))
        out.append(format_diagnostic(diag, lines))
    rest = shown[MAX_REPORTED:]
    if rest or unshown[0]:
        errors = sum(d.is_error for d in rest) + unshown[1]
        out.append(
            f"... and {len(rest) + unshown[0]} more finding(s) ({errors} error(s)) not shown; "
            f"the first {MAX_REPORTED} are above"
        )
    return out


def format_diagnostic(diag: Diagnostic, source_text: str | Lines | None = None) -> str:
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


def _excerpt(source_text: str | Lines, line: int, column: int) -> str:
    lines = source_text if isinstance(source_text, Lines) else Lines(source_text)
    text = lines.line(line)
    if text is None:
        return ""
    if len(text) > EXCERPT_WIDTH:  # a long line: the part around the column
        start = max(0, min(column - 1 - EXCERPT_WIDTH // 2, len(text) - EXCERPT_WIDTH))
        text = ("..." if start else "") + text[start : start + EXCERPT_WIDTH] + (
            "..." if start + EXCERPT_WIDTH < len(text) else ""
        )
        column = column - start + (3 if start else 0)
    shown = text.replace("\t", TAB_SHOWN)  # one column, as the tab counts: the caret stays
    gutter = f"{line:>5} | "
    caret_pad = " " * (len(gutter) - 2) + "| " + " " * max(column - 1, 0)
    return f"{gutter}{shown}\n{caret_pad}^"
