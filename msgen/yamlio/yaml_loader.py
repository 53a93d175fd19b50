"""Safe YAML loading, document by document, with every key's and value's position.

The plain block YAML most jobs are written in is read by `block_reader`, without loading
PyYAML (its import was a fifth of a cold render); any other text is read by PyYAML
(`pyyaml_documents`), the reference that reader is tested against. There libyaml parses where
it is present (several times faster), PyYAML's pure parser elsewhere; `yaml_builder` turns
each composed document into plain data and positions. Before libyaml's composer sees a text
that could nest deeper than it survives, parser events (no recursion) refuse nesting deeper
than `MAX_DEPTH`. A character YAML does not allow is reported at its line and column.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..model.diagnostics import Diagnostic, InputError, Position, Severity
from ..model.memo import CompileMemos, Memo
from ..model.source import Document, Source, StreamedSource
from . import block_reader

TYPE_CHECKING = False
if TYPE_CHECKING:  # PyYAML loads only for a text the block reader leaves to it
    from typing import Any
    from .pyyaml import yaml


def libyaml_loads() -> bool:
    """Whether libyaml parses (it counts positions in UTF-8 bytes, PyYAML in characters)."""
    return _pyyaml()[1]


def tokens(text: str) -> Iterator[Any]:
    """The tokens of `text` as the parser msgen loads with scans them (for `msgen convert`,
    which must find the same gaps between tokens that a render's loading found)."""
    from .pyyaml import yaml

    return yaml.scan(text, Loader=_pyyaml()[0])


_PYYAML: list[tuple[type[Any], bool, type[Any]]] = []


def _pyyaml() -> tuple[type[Any], bool, type[Any]]:
    """PyYAML's safe loader (libyaml's where present), whether it is libyaml's, and msgen's
    loader on it (`_loader_on`); loaded on first need."""
    if not _PYYAML:
        from .pyyaml import yaml

        try:  # libyaml is several times faster; fall back to the pure-Python parser where it is missing
            base: type[Any] = yaml.CSafeLoader
            libyaml = True
        except AttributeError:  # pragma: no cover - depends on the PyYAML build
            base, libyaml = yaml.SafeLoader, False
        _PYYAML.append((base, libyaml, _loader_on(base)))
    return _PYYAML[0]


def _loader_on(base: type[Any]) -> type[Any]:
    from .pyyaml import yaml
    from .yaml_go import resolve_plain

    class _Loader(base):  # type: ignore[misc]
        """The safe loader, reading plain scalars as kubectl does, remembering each short one.

        A plain scalar's type is go-yaml's (`yaml_go.resolve_plain`: `12:30:00` is a string,
        `0o17` an integer, `1e3` a float), not YAML 1.1's as PyYAML's resolver would have it, so
        a job means to msgen what it means to `kubectl apply`. The composer asks for the tag of
        every scalar, work that was a third of loading a long stream of jobs; the answer depends
        on the text and its style only (the safe loader has no path resolvers). `tags` remembers
        them, for the compile session that owns it (`memo.CompileMemos`).
        """

        def __init__(self, stream: Any, tags: Memo[tuple[str, tuple[bool, bool]], str]):
            super().__init__(stream)
            self.tags = tags

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is not yaml.ScalarNode or not implicit[0]:
                return super().resolve(kind, value, implicit)
            if len(value) > 64:
                return resolve_plain(value)
            key = (value, implicit)
            tag = self.tags.get(key)
            if tag is None:
                tag = self.tags.remember(key, resolve_plain(value))
            return tag

    return _Loader


#: libyaml's composer is known to survive this depth; shorter texts cannot nest deeper, so only
#: longer ones are first measured event by event (the composer would crash, not fail, on them).
_COMPOSER_SAFE_DEPTH = 10_000


def load_documents(source: Source) -> list[Document]:
    """Every non-empty document of `source`; raises InputError for text that is not usable YAML."""
    return list(iter_documents(source))


def iter_documents(
    source: Source, tags: Memo[tuple[str, tuple[bool, bool]], str] | None = None
) -> Iterator[Document]:
    """The non-empty documents of `source`, one at a time; raises InputError (possibly after
    some documents) for text that is not usable YAML.

    One document's node graph is held at a time, so a stream of many jobs costs the memory of
    its text and of its largest document, not of all its parsed documents (a text the block
    reader reads, at most `block_reader.LONGEST`, is read whole). `tags`: the compile
    session's memo of resolved scalars (`memo.CompileMemos.yaml_tags`), else one for this
    source alone.
    """
    if not isinstance(source, StreamedSource):
        documents = block_reader.read(source)
        if documents is not None:
            return iter(documents)
    return pyyaml_documents(source, tags)


def pyyaml_documents(
    source: Source, tags: Memo[tuple[str, tuple[bool, bool]], str] | None = None
) -> Iterator[Document]:
    """`iter_documents` read by PyYAML: the reference for every text."""
    from .pyyaml import yaml
    from .yaml_builder import DocumentBuilder

    base, libyaml, loader_class = _pyyaml()
    loader = None
    try:
        if not libyaml or _longest_document(source) > _COMPOSER_SAFE_DEPTH:
            _check_event_depth(source)
        loader = loader_class(_reader(source), tags if tags is not None else CompileMemos().yaml_tags)
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield DocumentBuilder(source, index).document(node)
            index += 1
    except yaml.reader.ReaderError as exc:
        raise InputError([_reader_error(source, exc)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = " ".join(p for p in (exc.problem, _context(exc)) if p) or "malformed"
        if "cannot start any token" in problem and _character_at(source, line, column) == "\t":
            problem = (
                "a tab character (shown as \u2192): YAML indents with spaces only, and a tab "
                "cannot start a value; accepted: spaces in its place"
            )
        raise InputError(
            [
                Diagnostic(
                    Severity.ERROR,
                    f"not valid YAML: {problem}",
                    Position(source.name, line, column),
                )
            ]
        ) from None
    except yaml.YAMLError as exc:
        raise InputError(
            [Diagnostic(Severity.ERROR, f"not valid YAML: {exc}", Position(source.name, 1, 1))]
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def _character_at(source: Source, line: int, column: int) -> str:
    """The character at a 1-based line and column of `source` ('' past its end)."""
    if isinstance(source, StreamedSource):
        text = source.read_lines({line}).get(line, "")
    else:
        lines = source.text.splitlines()
        text = lines[line - 1] if 0 < line <= len(lines) else ""
    return text[column - 1] if 0 < column <= len(text) else ""


#: What the parser was reading, as its errors name it, and the character that opened it.
_OPENED_BY = {"while parsing a flow sequence": "[", "while parsing a flow mapping": "{"}


def _context(exc: yaml.MarkedYAMLError) -> str | None:
    """The parser's context with where it began: a `[` left open on line 14 is noticed on a
    later line, where the error points, so the message names the line that opened it."""
    context, mark, noticed = exc.context, exc.context_mark, exc.problem_mark
    if not context or mark is None:
        return context
    if noticed is not None and (mark.line, mark.column) == (noticed.line, noticed.column):
        return context
    where = f"line {mark.line + 1}, column {mark.column + 1}"
    opener = _OPENED_BY.get(context)
    if opener is not None:
        return f"{context}: the {opener!r} opened at {where} is not closed"
    return f"{context} that starts at {where}"


def _reader(source: Source) -> Any:
    """What the parser reads `source` from, in pieces."""
    if isinstance(source, StreamedSource):
        source.stream.seek(0)
        return source.stream
    return _TextReader(source.text)


class _TextReader:
    """`text` as a stream, read in pieces: given a whole string, libyaml's parser would first
    make a UTF-8 copy of all of it."""

    def __init__(self, text: str):
        self.text = text
        self.offset = 0

    def read(self, size: int = -1) -> str:
        start = self.offset
        end = len(self.text) if size < 0 else start + size
        self.offset = min(end, len(self.text))
        return self.text[start:end]


#: A line that starts a document or ends one: libyaml's scanner takes these, at column 0, as
#: the document's bounds wherever they appear (inside a scalar they are an error).
#: Compiled by `re` when first asked (PyYAML's reading only), as a line's start (re.MULTILINE).
_DOCUMENT_BOUND = r"^(?:---|\.\.\.)(?=[ \t\r\n]|\Z)"


def _longest_document(source: Source) -> int:
    """At least the length of the longest document of `source`, in characters or (streamed)
    bytes: a document nests at most as deep as it has characters. Bounds after other line
    breaks than \\n are not looked for: missing one only makes the answer larger."""
    if isinstance(source, StreamedSource):
        source.stream.seek(0)
        longest = length = 0
        for line in source.stream:
            if line[:3] in (b"---", b"...") and line[3:4] in (b"", b" ", b"\t", b"\r", b"\n"):
                longest, length = max(longest, length), 0
            length += len(line)
        return max(longest, length)
    text = source.text
    longest, previous = 0, 0
    for match in re.finditer(_DOCUMENT_BOUND, text, re.MULTILINE):
        longest = max(longest, match.start() - previous)
        previous = match.start()
    return max(longest, len(text) - previous)


def _check_event_depth(source: Source) -> None:
    """Refuse nesting deeper than MAX_DEPTH from parser events, which need no recursion."""
    from .pyyaml import yaml
    from .yaml_builder import MAX_DEPTH, too_deep

    depth = 0
    for event in yaml.parse(_reader(source), Loader=_pyyaml()[0]):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
                raise InputError([too_deep(Position(source.name, line, column))])
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _reader_error(source: Source, exc: yaml.reader.ReaderError) -> Diagnostic:
    """A character YAML does not allow (NUL, BEL, ...), at its line and column.

    libyaml counts the offset in UTF-8 bytes, the pure-Python reader in characters.
    """
    offset = exc.position
    text = source.text
    if libyaml_loads():
        raw = text.encode("utf-8")
        if isinstance(source, StreamedSource):
            source.stream.seek(0)
            raw = source.stream.read()  # with the byte-order mark libyaml skipped, if any
        offset = len(raw[:offset].decode("utf-8-sig", "ignore"))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    char = text[offset] if offset < len(text) else ""
    return Diagnostic(
        Severity.ERROR,
        f"not valid YAML: the character U+{ord(char or chr(0)):04X} is not allowed in YAML "
        "text; accepted: printable characters, tabs and line breaks (escape others in a "
        'double-quoted string, as "\\u0007")',
        Position(source.name, line, column),
    )
