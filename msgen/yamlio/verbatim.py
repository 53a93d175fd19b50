"""Documents that pass through, written out as they were written.

msgen says of a document that is not a job that it passes through unchanged. Written out
again from its data, it would not be: its comments would be gone, its keys reordered, and
a plain `yes` or `0o17` written the way msgen read it. So where the output is a YAML stream,
such a document is its own text, cut from the input at its document markers:

- from the line after its `---` (or from the start of the file), with the comments and blank
  lines before a file's first `---`, to the line before the next `---` or its own `...`;
- every line break and character as written, the last line ended with a line break.

A line starting `---` or `...` at the left margin always bounds a YAML document (inside a
scalar it is an error), so the cut is exact. What is not kept: the `---` and `...` lines
themselves (msgen writes its own separators); a document after a directive (`%YAML`,
`%TAG`: its tags may need it) or with content on its `---` line (`--- {a: 1}`) is written
from its data, as are the items of a `kind: List` (always unpacked) and the JSON output. So is
a document whose text holds a `!` anywhere: a tag (`!!timestamp abc`, `!!binary`) that msgen
read as kubectl does may be refused or read otherwise by another reader, and the data
msgen writes reads alike in all of them.
"""

# No `from __future__ import annotations`: it slows building NamedTuples (see msgen.model.plan).
import codecs
import os
import re
from typing import NamedTuple

from ..model.diagnostics import LINE_BREAK
from ..model.source import Document, Source, StreamedSource
from .yaml_writer import Verbatim as Verbatim  # where the writer meets it: loaded on every render

#: A line that bounds a document: `---` or `...`, then the end of the line or a blank.
_BOUND = re.compile("(---|\\.\\.\\.)(?=[ \t\r\n\x85\u2028\u2029]|$)")
#: What may follow `---` on its line for the document's text to start on the next one.
_EMPTY_REST = re.compile(r"[ \t]*(#.*)?")


class _Piece(NamedTuple):
    """The text between two document bounds: its first line's number, where it starts and
    ends (characters of a Source's text, bytes of a streamed one), how it begins."""

    first_line: int
    start: int
    end: int
    #: "---", "..." or "" (the start of the file)
    opened_by: str
    #: only comments, blank lines and directives: what comes before a document
    preamble: bool
    directive: bool
    #: the `---` line has content after it (`--- {a: 1}`, `--- !tag`)
    content_on_marker: bool


class DocumentTexts:
    """The texts of one source's documents, found once, on first need, in one pass."""

    def __init__(self, source: Source):
        self.source = source
        self._pieces: list[_Piece] | None = None

    def text(self, document: Document) -> str | None:
        """The document as written, or None where it cannot be cut out (see the module)."""
        found = document.positions.values.get(())
        if found is None or document.source is not self.source:
            return None
        if isinstance(self.source, StreamedSource) and not hasattr(os, "pread"):
            return None  # no reading beside the parser (Windows): written from its data
        pieces = self.pieces()
        line = found[0]
        index = max((i for i, p in enumerate(pieces) if p.first_line <= line), default=-1)
        if index < 0 or pieces[index].content_on_marker:
            return None
        first = index
        while first > 0 and pieces[first - 1].preamble and pieces[first - 1].opened_by != "---":
            first -= 1
        if any(p.directive for p in pieces[first : index + 1]):
            return None
        parts = [self._body(p) for p in pieces[first : index + 1]]
        text = "".join(parts)
        if not text.strip() or "!" in text:  # a tag: other readers may read it otherwise, or refuse it
            return None
        return text if text.endswith(("\n", "\r")) else text + "\n"

    def pieces(self) -> list[_Piece]:
        if self._pieces is None:
            self._pieces = _pieces(_lines(self.source))
        return self._pieces

    def _body(self, piece: _Piece) -> str:
        """A piece's text without its `---` line and its closing `...` line."""
        lines = _split(self._slice(piece.start, piece.end))
        if lines and piece.opened_by == "---":
            lines = lines[1:]
        if lines and _BOUND.match(lines[-1]) and lines[-1].startswith("..."):
            lines = lines[:-1]
        return "".join(lines)

    def _slice(self, start: int, end: int) -> str:
        if isinstance(self.source, StreamedSource):  # read beside the parser, not moving it
            return os.pread(self.source.stream.fileno(), end - start, start).decode("utf-8")
        return self.source.text[start:end]


def _split(text: str) -> list[str]:
    """`text`'s lines with their breaks, by the breaks YAML counts lines by."""
    out, start = [], 0
    for match in re.finditer(LINE_BREAK, text):
        out.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _lines(source: Source) -> list[tuple[str, int, int]]:
    """Each line of `source` with where it starts and ends (its break included): characters
    of the text, or bytes of a streamed source (read in pieces, once)."""
    if not isinstance(source, StreamedSource):
        out, offset = [], 0
        for line in _split(source.text):
            out.append((line, offset, offset + len(line)))
            offset += len(line)
        return out
    # Read with pread, which leaves the file's position alone: the parser reads the same file.
    descriptor = source.stream.fileno()
    offset = 3 if os.pread(descriptor, 3, 0) == codecs.BOM_UTF8 else 0
    decoder = codecs.getincrementaldecoder("utf-8")()
    out, partial, at = [], "", offset
    while True:
        chunk = os.pread(descriptor, 1 << 20, at)
        at += len(chunk)
        text = partial + decoder.decode(chunk, final=not chunk)
        lines = _split(text)
        partial = ""
        if chunk and lines and not lines[-1].endswith(("\n", "\u2028", "\u2029", "\x85")):
            partial = lines.pop()  # maybe the first half of a line, or of a \r\n
        elif chunk and lines and lines[-1].endswith("\r"):
            partial = lines.pop()
        for line in lines:
            size = len(line.encode("utf-8"))
            out.append((line, offset, offset + size))
            offset += size
        if not chunk:
            break
    return out


def _pieces(lines: list[tuple[str, int, int]]) -> list[_Piece]:
    """The stream cut at its document bounds."""
    pieces: list[_Piece] = []
    start_line, opened = 0, ""
    for number, (line, _start, _end) in enumerate(lines):
        bound = _BOUND.match(line)
        if bound is None:
            continue
        if bound.group(1) == "---" and number > start_line:
            pieces.append(_piece(lines, start_line, number, opened))
            start_line, opened = number, "---"
        elif bound.group(1) == "---":
            opened = "---"
        else:  # `...` ends the piece it is in
            pieces.append(_piece(lines, start_line, number + 1, opened))
            start_line, opened = number + 1, ""
    if start_line < len(lines):
        pieces.append(_piece(lines, start_line, len(lines), opened))
    return pieces


def _piece(lines: list[tuple[str, int, int]], first: int, end: int, opened: str) -> _Piece:
    own = [line for line, _s, _e in lines[first:end]]
    body = own[1:] if opened == "---" else own
    stripped = [line.strip() for line in body if not _BOUND.match(line) or not line.startswith("...")]
    preamble = all(not s or s.startswith(("#", "%")) for s in stripped)
    directive = any(s.startswith("%") for s in stripped)
    rest = own[0][3:].rstrip("\r\n\x85\u2028\u2029") if opened == "---" else ""
    return _Piece(
        first_line=first + 1,
        start=lines[first][1],
        end=lines[end - 1][2],
        opened_by=opened,
        preamble=preamble,
        directive=directive,
        content_on_marker=opened == "---" and not _EMPTY_REST.fullmatch(rest),
    )
