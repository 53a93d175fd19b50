"""Reading the user's inputs: files, directories (sorted, recursive) and standard input; a
pipe or a device named on the command line (`msgen render <(...)`, /dev/stdin) is read once,
as standard input is."""

from __future__ import annotations

import codecs
import os
import stat
import sys

from ..model.diagnostics import Diagnostic, Position, Severity
from ..model.source import Source, StreamedSource

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

YAML_SUFFIXES = (".yaml", ".yml")
#: The files a directory's manifests are read from: YAML, and JSON as kubectl and Argo CD read.
MANIFEST_SUFFIXES = (*YAML_SUFFIXES, ".json")
#: kustomize's own files live beside manifests; they are instructions to kustomize, not objects.
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


class MissingPath(Exception):
    pass


class Refused(str):
    """A path found in a directory that is not read: the reason is `refusal(path)`'s."""


class NotRegular(Refused):
    """A directory's entry with a manifest's name that is no regular file (a FIFO, a socket, a
    device): opening a FIFO for reading waits for a writer, forever."""


def refusal(path: Refused) -> Diagnostic:
    """The error for a file of a directory that leads out of it (a symbolic link), or that is
    no regular file, which is not read: its contents appear in no message."""
    if isinstance(path, NotRegular):
        message = ("not a regular file (a FIFO, a socket or a device), not read; accepted: "
                   "regular files in a directory msgen reads")  # fmt: skip
    else:
        message = ("a symbolic link out of the directory msgen was given, not read; accepted: "
                   "files inside that directory (links to files inside it too)")  # fmt: skip
    return Diagnostic(Severity.ERROR, message, Position(str(path), 1, 1))


def _regular(path: str) -> bool:
    """Whether `path` (links followed) is a regular file; a dangling link counts as one (its
    reading reports it missing)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def expand_paths(paths: list[str]) -> list[str]:
    """Every file to read, in order: directories become their YAML and JSON files, sorted; a
    directory's file that is a link out of it becomes a `Refused` path (the input of a GitOps
    host is a repository, whose links must not reach the machine's other files), one that is
    no regular file a `NotRegular` path (never opened)."""
    out: list[str] = []
    for path in paths or ["-"]:
        if path == "-":
            out.append(path)
        elif os.path.isdir(path):
            found = []
            inside = os.path.realpath(path)
            for root, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for name in files:
                    if name.endswith(MANIFEST_SUFFIXES) and name not in KUSTOMIZATION_FILES:
                        file = os.path.join(root, name)
                        real = os.path.realpath(file)
                        leaves = os.path.islink(file) and not real.startswith(inside + os.sep)
                        found.append(Refused(file) if leaves else file if _regular(file) else NotRegular(file))
            from pathlib import Path  # only for a directory: a file's render does without it

            out.extend(sorted(found, key=lambda p: Path(p).relative_to(path).as_posix()))
        elif os.path.exists(path):  # a file; or, named on the command line, a pipe or a
            out.append(path)  # device (`<(...)`'s /dev/fd/63, /dev/stdin), read as kubectl does
        else:
            raise MissingPath(path)
    return out


def read_source(path: str) -> tuple[Source | None, Diagnostic | None]:
    name = "<stdin>" if path == "-" else path
    if path == "-":
        from .terminal import note_terminal_stdin  # standard input only

        note_terminal_stdin("msgen", "YAML", "To read files instead: msgen COMMAND PATH... (msgen --help).")
    if path == "-":
        raw = sys.stdin.buffer.read()
    else:
        try:
            with open(path, "rb") as stream:
                raw = stream.read()
        except OSError as exc:
            return None, unreadable(path, exc)
    return decoded(name, raw)


def unreadable(path: str, exc: OSError) -> Diagnostic:
    """The error for a path that exists but cannot be read (a socket, no permission)."""
    return Diagnostic(
        Severity.ERROR,
        f"cannot be read ({exc.strerror or exc}); accepted: a readable file, directory or pipe",
        Position(path, 1, 1),
    )


#: Inputs larger than this are parsed from their file as it is read, not held as text.
STREAM_ABOVE = 4 << 20
_PIECE = 1 << 20


def open_source(path: str) -> tuple[Source | None, Diagnostic | None]:
    """`read_source`, except that an input larger than STREAM_ABOVE becomes a StreamedSource:
    checked for UTF-8 piece by piece and parsed from its file (standard input is first copied
    to an anonymous temporary file), so a long stream of jobs costs no memory for its text."""
    name = "<stdin>" if path == "-" else path
    stream: bytes | BinaryIO
    if path == "-":
        from .terminal import note_terminal_stdin  # standard input only

        note_terminal_stdin("msgen", "YAML", "To read files instead: msgen COMMAND PATH... (msgen --help).")
        stream = _spooled(sys.stdin.buffer)
    else:
        try:
            if os.path.isfile(path) and os.path.getsize(path) <= STREAM_ABOVE:
                return read_source(path)
            given = open(path, "rb")
        except OSError as exc:
            return None, unreadable(path, exc)
        if os.path.isfile(path):
            stream = given
        else:  # a pipe or a device named as a path: read once, as standard input is
            with given:
                stream = _spooled(given)
    if isinstance(stream, bytes):
        return decoded(name, stream)
    from .yaml_loader import libyaml_loads  # only for a large input: PyYAML reads it

    stream.seek(0)
    if not libyaml_loads():  # the pure-Python parser counts positions in characters
        with stream:
            return decoded(name, stream.read())
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        while piece := stream.read(_PIECE):
            decoder.decode(piece)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        stream.seek(0)
        raw = stream.read()  # only to say where: a message is worth the memory
        stream.close()
        return decoded(name, raw)
    return StreamedSource(name, stream), None


def _spooled(given: BinaryIO) -> bytes | BinaryIO:
    """What a stream that can be read only once holds: its bytes when they are few, else an
    anonymous temporary file holding them (parsed from there, as a large file is)."""
    head = given.read(STREAM_ABOVE + 1)
    if len(head) <= STREAM_ABOVE:
        return head
    import shutil
    import tempfile

    stream: BinaryIO = tempfile.TemporaryFile(prefix="msgen-stdin-")
    stream.write(head)
    shutil.copyfileobj(given, stream, _PIECE)
    return stream


def decoded(
    name: str, raw: bytes, accepted: str = "YAML in UTF-8"
) -> tuple[Source | None, Diagnostic | None]:
    """`raw` as text, or why it is not UTF-8 at its line and column (every host reads bytes
    through here, so a stray byte is reported alike in a file and in a ResourceList)."""
    try:
        # utf-8-sig's decoding, without its codec module: a leading byte-order mark dropped
        # (and an error's offset counted after it, as that codec counts it)
        text = (raw[3:] if raw[:3] == b"\xef\xbb\xbf" else raw).decode("utf-8")
        return Source(name, text), None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, Diagnostic(
            Severity.ERROR,
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); accepted: {accepted}",
            Position(name, line, column),
        )
