"""Safe YAML loading that remembers where every key and value came from.

PyYAML's composer gives a node graph with marks; we turn it into plain data ourselves so that:
- every key and value keeps its line and column (diagnostics point at the exact spot);
- duplicate keys are errors (kubectl rejects them too), not a silent last-one-wins;
- aliases are measured before they are expanded: a billion-laughs document fails fast, in
  memory proportional to its text, instead of exhausting the machine;
- nesting deeper than `MAX_DEPTH` (counted after alias expansion) is refused with its position:
  libyaml's composer and the emitter recurse per level, and a deep enough input would crash them;
- a scalar whose explicit tag cannot hold its text (`!!int abc`) is an error at its position;
- scalars follow what Kubernetes' own YAML reader produces (timestamps stay strings).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, BinaryIO

import yaml

from .diagnostics import Diagnostic, InputError, Position, Severity

try:  # libyaml is several times faster; fall back to the pure-Python parser where it is missing
    from yaml import CSafeLoader as _BaseLoader

    _LIBYAML = True
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

    _LIBYAML = False

def libyaml_loads() -> bool:
    """Whether libyaml parses (it counts positions in UTF-8 bytes, PyYAML in characters)."""
    return _LIBYAML


#: Tags of plain and quoted scalars already resolved: job files repeat the same keys and values.
_RESOLVED: dict[tuple[str, tuple[bool, bool]], str] = {}


class _Loader(_BaseLoader):
    """The safe loader, remembering how each short scalar resolves.

    The composer asks the (pure-Python) resolver for the tag of every scalar, a pattern match
    per scalar that was a third of loading a long stream of jobs; the answer depends on the
    text and its style only (the safe loader has no path resolvers).
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not yaml.ScalarNode or len(value) > 64:
            return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
        key = (value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            if len(_RESOLVED) > 20_000:
                _RESOLVED.clear()
            tag = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
            _RESOLVED[key] = tag
        return tag

Path = tuple[str | int, ...]

#: How many nodes alias expansion may add to one document beyond the nodes it spells out.
ALIAS_EXPANSION_BUDGET = 100_000
#: How deeply collections may nest in one document. Kubernetes objects need about 20 levels;
#: msgen's targets wrap a pod template in at most 10 more, which the emitter must still write.
MAX_DEPTH = 100
#: libyaml's composer is known to survive this depth; shorter texts cannot nest deeper, so only
#: longer ones are first measured event by event (the composer would crash, not fail, on them).
_COMPOSER_SAFE_DEPTH = 10_000

_STR = "tag:yaml.org,2002:str"
_SCALAR_BUILDERS = {
    "tag:yaml.org,2002:int": "construct_yaml_int",
    "tag:yaml.org,2002:float": "construct_yaml_float",
    "tag:yaml.org,2002:bool": "construct_yaml_bool",
    "tag:yaml.org,2002:null": "construct_yaml_null",
}
# Kubernetes reads YAML into JSON: these stay as the text the user wrote.
_TEXT_TAGS = {_STR, "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"}
_MERGE = "tag:yaml.org,2002:merge"
_TAG_ACCEPTS = {
    "int": "digits (1, -2, 0x1f, 0o17)",
    "float": "a number (1.5, 1e3, .inf, .nan)",
    "bool": "true or false (also yes/no, on/off)",
    "null": "null, ~ or nothing",
}


class Source:
    """One input: a file name as the user should see it, and its text.

    Plain classes here, not dataclasses: see `msgen.plan` for why the render path avoids them.
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
            for match in LINE_BREAK.finditer(chunk):
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


def load_documents(source: Source) -> list[Document]:
    """Every non-empty document of `source`; raises InputError for text that is not usable YAML."""
    return list(iter_documents(source))


def iter_documents(source: Source) -> Iterator[Document]:
    """The non-empty documents of `source`, one at a time; raises InputError (possibly after
    some documents) for text that is not usable YAML.

    One document's node graph is held at a time, so a stream of many jobs costs the memory of
    its text and of its largest document, not of all its parsed documents.
    """
    loader = None
    try:
        if not _LIBYAML or _longest_document(source) > _COMPOSER_SAFE_DEPTH:
            _check_event_depth(source)
        loader = _Loader(_reader(source))
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield _Builder(source, index).document(node)
            index += 1
    except yaml.reader.ReaderError as exc:
        raise InputError([_reader_error(source, exc)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = " ".join(p for p in (exc.problem, exc.context) if p) or "malformed"
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
_DOCUMENT_BOUND = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|\Z)", re.MULTILINE)


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
    for match in _DOCUMENT_BOUND.finditer(text):
        longest = max(longest, match.start() - previous)
        previous = match.start()
    return max(longest, len(text) - previous)


def _check_event_depth(source: Source) -> None:
    """Refuse nesting deeper than MAX_DEPTH from parser events, which need no recursion."""
    depth = 0
    for event in yaml.parse(_reader(source), Loader=_Loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
                raise InputError([_too_deep(Position(source.name, line, column))])
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _too_deep(position: Position, index: int = 0) -> Diagnostic:
    return Diagnostic(
        Severity.ERROR,
        f"YAML collections nest deeper than {MAX_DEPTH} levels here; accepted: at most "
        f"{MAX_DEPTH} levels of mappings and lists (aliases expanded)",
        position,
        document_index=index,
    )


def _reader_error(source: Source, exc: yaml.reader.ReaderError) -> Diagnostic:
    """A character YAML does not allow (NUL, BEL, ...), at its line and column.

    libyaml counts the offset in UTF-8 bytes, the pure-Python reader in characters.
    """
    offset = exc.position
    text = source.text
    if _LIBYAML:
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


class _NotATree(Exception):
    """The node graph has shared nodes, merge keys or deep nesting: it needs measuring."""


class _Builder:
    """Turns one composed node graph into data, recording positions as it goes."""

    def __init__(self, source: Source, index: int):
        self.source = source
        self.index = index
        self.positions = Positions(source)
        self.errors: list[Diagnostic] = []
        self._constructor = yaml.constructor.SafeConstructor()
        #: While True, `_build` stops (raising _NotATree) at a node met twice (an alias), a
        #: merge key, or a collection deeper than MAX_DEPTH: what `_check_alias_budget` measures.
        self._tree = False
        self._seen: set[int] = set()
        self.floats = False

    def document(self, root: yaml.Node) -> Document:
        try:
            # Most documents are trees no deeper than MAX_DEPTH: build them in one pass.
            self._tree = True
            data = self._build(root, ())
        except _NotATree:
            # Aliases, a merge key or deep nesting: measure first, then build without the checks.
            self._tree = False
            self.positions = Positions(self.source)
            self.errors = []
            self._check_alias_budget(root)
            data = self._build(root, ())
        if self.errors:
            raise InputError(self.errors)
        return Document(self.source, self.index, data, self.positions, self.floats)

    def _error(self, node: yaml.Node, message: str) -> None:
        mark = node.start_mark
        self.errors.append(
            Diagnostic(
                Severity.ERROR,
                message,
                Position(self.source.name, mark.line + 1, mark.column + 1),
                document_index=self.index,
            )
        )

    def _check_alias_budget(self, root: yaml.Node) -> None:
        """Measure the expanded size of the node graph without expanding it."""
        sizes: dict[int, int] = {}
        heights: dict[int, int] = {}
        distinct = 0
        on_path: set[int] = set()
        # Iterative post-order walk: a hostile document must not hit Python's recursion limit.
        stack: list[tuple[yaml.Node, bool]] = [(root, False)]
        while stack:
            node, children_done = stack.pop()
            key = id(node)
            if children_done:
                on_path.discard(key)
                children = _children(node)
                sizes[key] = 1 + sum(sizes[id(child)] for child in children)
                collection = not isinstance(node, yaml.ScalarNode)
                heights[key] = collection + max((heights[id(c)] for c in children), default=0)
                continue
            if key in sizes:
                continue
            if key in on_path:
                self._error(node, "not valid YAML here: an alias refers to a node that contains it")
                raise InputError(self.errors)
            distinct += 1
            on_path.add(key)
            stack.append((node, True))
            for child in _children(node):
                if id(child) not in sizes:
                    stack.append((child, False))
        if sizes[id(root)] > distinct + ALIAS_EXPANSION_BUDGET:
            self._error(
                root,
                f"YAML aliases expand this document to {sizes[id(root)]} nodes from {distinct}; "
                f"accepted: at most {ALIAS_EXPANSION_BUDGET} nodes added by aliases",
            )
            raise InputError(self.errors)
        if heights[id(root)] > MAX_DEPTH:
            self._refuse_depth(root, heights)

    def _refuse_depth(self, root: yaml.Node, heights: dict[int, int]) -> None:
        """Report the first collection below MAX_DEPTH on the deepest path."""
        node, depth = root, 1
        while depth <= MAX_DEPTH:
            node = max(_children(node), key=lambda child: heights[id(child)])
            depth += not isinstance(node, yaml.ScalarNode)
        mark = node.start_mark
        position = Position(self.source.name, mark.line + 1, mark.column + 1)
        raise InputError([_too_deep(position, self.index)])

    def _build(self, node: yaml.Node, path: Path) -> Any:
        if self._tree:
            if id(node) in self._seen or (
                len(path) >= MAX_DEPTH and not isinstance(node, yaml.ScalarNode)
            ):
                raise _NotATree
            self._seen.add(id(node))
        self.positions.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self._build(item, path + (i,)) for i, item in enumerate(node.value)]
        return self._scalar(node)

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag in _TEXT_TAGS:
            return node.value
        builder = _SCALAR_BUILDERS.get(node.tag)
        if builder == "construct_yaml_float":
            self.floats = True
        if builder is None:
            self._error(node, f"unsupported YAML tag {node.tag!r}; accepted: plain JSON-like YAML")
            return None
        try:
            return getattr(self._constructor, builder)(node)
        except (ValueError, KeyError, IndexError, TypeError, yaml.YAMLError):
            tag = node.tag.rsplit(":", 1)[-1]
            self._error(
                node,
                f"{node.value!r} is not a YAML {tag}, as its tag !!{tag} says; accepted: "
                f"{_TAG_ACCEPTS.get(tag, 'a value of that type')}, or no tag",
            )
            return None

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                if self._tree:
                    raise _NotATree
                merged.update(self._merge_sources(value_node, path))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self._error(key_node, "mapping keys must be plain scalars")
                continue
            key = str(key_node.value)
            if key in first_seen:
                self._error(
                    key_node,
                    f"duplicate key {key!r} (first written on line {first_seen[key]}); "
                    "accepted: each key once per mapping",
                )
                continue
            first_seen[key] = key_node.start_mark.line + 1
            self.positions.keys[path + (key,)] = (
                key_node.start_mark.line + 1,
                key_node.start_mark.column + 1,
            )
            result[key] = self._build(value_node, path + (key,))
        for key, value in merged.items():
            result.setdefault(key, value)
        return result

    def _merge_sources(self, value_node: yaml.Node, path: Path) -> dict[str, Any]:
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        merged: dict[str, Any] = {}
        for src in sources:
            if not isinstance(src, yaml.MappingNode):
                self._error(src, "a YAML merge key (<<) takes a mapping or a list of mappings")
                continue
            for key, value in self._mapping(src, path).items():
                merged.setdefault(key, value)
        return merged


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
