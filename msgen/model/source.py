"""Inputs and the positions inside them: what every stage's findings point at.

A `Source` is one input (a file, standard input, a KRM item), a `Document` one YAML document
of it as plain data, and `Positions` where each of its keys and values was written, so a
diagnostic names file:line:column. Reading YAML into documents is `yaml_loader`'s.
"""

from __future__ import annotations

from .diagnostics import Diagnostic, Position, Severity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

Path = tuple[str | int, ...]


class Source:
    """One input: a file name as the user should see it, and its text.

    Plain classes here, not dataclasses: see `msgen.model.plan` for why the render path avoids them.
    """

    __slots__ = ("name", "_text")

    def __init__(self, name: str, text: str):
        self.name = name
        self._text = text

    @property
    def text(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Source({self.name!r})"


class StreamedSource(Source):
    """An input read from an open file as it is parsed, not held as text.

    A render of a long stream (tens of thousands of jobs, hundreds of megabytes) would
    otherwise hold all of its text, twice while decoding it. The file (the user's file, or
    standard input copied to a temporary file) must be valid UTF-8, and seekable; `text` reads
    it whole, which only the report of a finding in it, or an invalid character, needs.
    """

    __slots__ = ("stream",)

    def __init__(self, name: str, stream: BinaryIO):
        self.name = name
        self.stream = stream

    @property
    def text(self) -> str:
        self.stream.seek(0)
        return self.stream.read().decode("utf-8-sig")

    def read_lines(self, wanted: set[int]) -> dict[int, str]:
        """The lines numbered in `wanted` (1-based, YAML's line breaks, without them), read in
        pieces: a report of findings in a stream of hundreds of megabytes holds only those."""
        import codecs
        import re

        from .diagnostics import LINE_BREAK

        self.stream.seek(0)
        decoder = codecs.getincrementaldecoder("utf-8-sig")()
        out: dict[int, str] = {}
        number, partial, last = 1, "", max(wanted, default=0)
        while number <= last:
            piece = self.stream.read(1 << 20)
            final = not piece
            chunk = partial + decoder.decode(piece, final=final)
            start = 0
            for match in re.finditer(LINE_BREAK, chunk):
                if not final and match.end() == len(chunk) and match.group() == "\r":
                    break  # maybe the first half of a \r\n split between pieces
                if number in wanted:
                    out[number] = chunk[start : match.start()]
                number, start = number + 1, match.end()
            partial = chunk[start:]
            if final:
                if partial and number in wanted:
                    out[number] = partial
                break
        return out

    def close(self) -> None:
        self.stream.close()

    def __repr__(self) -> str:
        return f"StreamedSource({self.name!r})"


class Positions:
    """Where each path of a document was written (1-based line, column).

    `prefix`: where this document sits inside a larger one (an item of a KRM ResourceList).
    """

    __slots__ = ("source", "values", "keys", "prefix")

    def __init__(
        self,
        source: Source,
        values: dict[Path, tuple[int, int]] | None = None,
        keys: dict[Path, tuple[int, int]] | None = None,
        prefix: Path = (),
    ):
        self.source = source
        self.values: dict[Path, tuple[int, int]] = {} if values is None else values
        self.keys: dict[Path, tuple[int, int]] = {} if keys is None else keys
        self.prefix = prefix

    def within(self, prefix: Path) -> Positions:
        """The positions of the sub-document at `prefix`, addressed from its own root."""
        return Positions(self.source, self.values, self.keys, self.prefix + prefix)

    def at(self, path: Path, *, key: bool = False) -> Position:
        """The position of `path` (its key when `key`), or of its nearest written ancestor."""
        probe = self.prefix + path
        while True:
            found = (self.keys.get(probe) if key else None) or self.values.get(probe)
            if found is not None:
                return Position(self.source.name, found[0], found[1])
            if not probe:
                return Position(self.source.name, 1, 1)
            probe = probe[:-1]


class Document:
    """One YAML document of a source, as plain data plus positions.

    `floats` is False when no scalar of the document is a YAML float (so none is NaN or
    infinite).
    """

    __slots__ = ("source", "index", "data", "positions", "floats")

    def __init__(
        self, source: Source, index: int, data: Any, positions: Positions, floats: bool = True
    ):
        self.source = source
        self.index = index
        self.data = data
        self.positions = positions
        self.floats = floats

    def __repr__(self) -> str:
        return f"Document({self.source.name!r}, {self.index})"

    def diagnostic(
        self, path: Path, message: str, *, severity: Severity = Severity.ERROR, key: bool = False
    ) -> Diagnostic:
        return Diagnostic(
            severity=severity,
            message=message,
            position=self.positions.at(path, key=key),
            field_path=format_path(path),
            document_index=self.index,
        )


def format_path(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
