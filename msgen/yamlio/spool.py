"""Render output written job by job, and shown only whole.

Why: GitOps hosts (Argo CD, kustomize, Flux) prune what a generator stops printing, so msgen
promises that standard output gets the whole output or nothing: no partial stream when the
last of many jobs fails. Holding the whole output in memory until the end kept that promise,
but made memory grow with the number of jobs (a stream of 34,000 jobs needed gigabytes).

Design: each document's objects are turned into text as soon as the document compiles, and
the text goes to a spool: held in memory up to `_IN_MEMORY` characters (a typical render,
which then never imports `tempfile`), beyond that moved to an anonymous temporary file
(`tempfile.TemporaryFile`: unlinked at creation, so nothing is left behind even when msgen is
killed). The objects are then dropped.
Only when every input compiled is the spool copied, in pieces of `_PIECE` characters, to
standard output, or written to `-o FILE` through `atomic_file` (a temporary file beside the
target, then one rename). When any input has an error the spool is closed unread: nothing is
written. Memory stays that of one document and one piece; the disk holds one copy of the
output. The text is exactly what `to_yaml` / `to_json` of all the objects would be.
"""

from __future__ import annotations

import io
import sys
from types import TracebackType

from .emit import JsonStream, YamlStream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

_PIECE = 1 << 20
#: Output up to this many characters stays in memory; more goes to a temporary file.
_IN_MEMORY = 8 << 20


class Spool:
    """Output text of one render, in a temporary file until `deliver`."""

    def __init__(self, output_format: str = "yaml"):
        self._stream = JsonStream() if output_format == "json" else YamlStream()
        # newline="": the text goes back out exactly as written (no \r translation).
        self._file: TextIO = io.StringIO(newline="")
        self._held = 0  # characters in memory, until the spool moves to a file

    def add(self, objects: list[dict[str, Any]]) -> int:
        """Write one compiled document's objects; the size of their text."""
        text = self._stream.piece(objects)
        self._write(text)
        return len(text)

    def _write(self, text: str) -> None:
        if self._held >= 0:
            self._held += len(text)
            if self._held > _IN_MEMORY:
                self._to_file()
        self._file.write(text)

    def _to_file(self) -> None:
        import tempfile

        spilled: TextIO = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")
        assert isinstance(self._file, io.StringIO)
        spilled.write(self._file.getvalue())
        self._file.close()
        self._file = spilled
        self._held = -1

    def deliver(self, output: str | None = None) -> None:
        """Copy the whole output to standard output, or atomically to the file `output`."""
        self._write(self._stream.end())
        self._file.seek(0)
        if output is None:
            while True:
                piece = self._file.read(_PIECE)
                if not piece:
                    break
                sys.stdout.write(piece)
            sys.stdout.flush()
        else:
            from .atomic_file import write_whole

            write_whole(output, self._file)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
