"""The plain block YAML most jobs are written in, read without PyYAML.

A cold render is mostly start-up, and importing PyYAML was a fifth of it. Most jobs use a
small part of YAML: block mappings and sequences, one-line plain and quoted scalars, literal
blocks (`|`, `|-`: scripts, and the function annotation kustomize gives every KRM item),
one-line flow collections of scalars, comments, `---` between documents. `read` reads exactly
that part and gives the documents (data, positions, floats) that `yaml_loader`'s reading
through PyYAML gives. At the first thing outside it it gives up, before handing out any
document, and returns None; `yaml_loader` then reads the text with PyYAML from the start.
Outside that part are flow collections of collections, anchors, aliases, tags, folded and
kept (`|+`) block scalars, multi-line plain and quoted scalars, escapes, directives, `...`,
tabs, line breaks other than `\\n`, characters YAML does not allow, duplicate and merge keys,
a document that is not a mapping, deep nesting, long texts, and everything that is an error:
every error, and its position, stays PyYAML's.

A plain scalar means what `yaml_go` says, as for PyYAML's reading. tests/test_yamlio_block_reader.py
holds the two readings equal on samples and mutations of them, counting what this one reads.
"""

from __future__ import annotations

import re

from ..model.source import Document, Path, Positions, Source
from .yaml_go import FLOAT, STR, decode, resolve_plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Longer texts go to libyaml, which reads them faster than this reader.
LONGEST = 256 << 10
#: Deeper nesting goes to PyYAML, which measures it (`yaml_builder.MAX_DEPTH`).
_DEEPEST = 40
#: libyaml looks this far for the `:` of a simple key.
_LONGEST_KEY = 1000

#: What the text may not hold (libyaml reads each its own way, or refuses it): control characters
#: but `\n`, the line and paragraph separators, surrogates, a byte-order mark, U+FFFE and U+FFFF.
#: Listed, not negated (a negated class spanning Unicode takes milliseconds to compile, `pyyaml`).
_OUTSIDE = "[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
#: What a plain scalar may not start with: YAML's indicators (`-` may, before a non-space; `?` and `:` go to PyYAML).
_NOT_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@`")
#: What ends a plain scalar in a flow collection (`:` and `#` in it are left to PyYAML).
_FLOW_ENDS = frozenset(",[]{}:")


def _holds_outside(text: str) -> bool:
    """Whether `text` holds one of `_OUTSIDE`: in ASCII any but `\\n` and printable ones (str's tests)."""
    return not text.replace("\n", "").isprintable() if text.isascii() else bool(re.search(_OUTSIDE, text))


class _OutsideThePart(Exception):
    """The text uses YAML this reader does not read: PyYAML reads it."""


def read(source: Source) -> list[Document] | None:
    """Every document of `source` as `yaml_loader.iter_documents` gives them; None outside the part read here."""
    text = source.text
    if len(text) > LONGEST or _holds_outside(text):
        return None
    try:
        return _Reader(source, text).documents()
    except _OutsideThePart:
        return None


class _Reader:
    """One pass over the significant lines (not blank, not only a comment) of a text."""

    def __init__(self, source: Source, text: str):
        self.source = source
        self.raw = text.split("\n")
        #: (line number, indentation, content) of each significant line, `---` included
        self.lines: list[tuple[int, int, str]] = []
        for number, line in enumerate(self.raw, 1):
            content = line.lstrip(" ")
            if content and content[0] != "#":
                self.lines.append((number, len(line) - len(content), content.rstrip(" ")))
        self.at = 0
        self.positions = Positions(source)
        self.floats = False

    def documents(self) -> list[Document]:
        lines = self.lines
        out: list[Document] = []
        while self.at < len(lines):
            number, indent, content = lines[self.at]
            if indent == 0 and _bound(content):
                if content.startswith("...") or content[3:] and not content[3:].lstrip(" ").startswith("#"):
                    raise _OutsideThePart  # `...`, or content on the `---` line
                self.at += 1
                if self.at == len(lines) or lines[self.at][1] == 0 and _bound(lines[self.at][2]):
                    raise _OutsideThePart  # an empty document
                continue
            if indent != 0 or content[:2] == "- " or content == "-":
                raise _OutsideThePart  # a root that is no mapping at the left margin
            self.positions, self.floats = Positions(self.source), False
            data = self.mapping(0, ())
            if self.at < len(lines) and not (lines[self.at][1] == 0 and _bound(lines[self.at][2])):
                raise _OutsideThePart
            out.append(Document(self.source, len(out), data, self.positions, self.floats))
        return out

    def node(self, indent: int, path: Path) -> Any:
        """The block collection whose first line is the current one, at `indent`."""
        if len(path) > _DEEPEST:
            raise _OutsideThePart
        content = self.lines[self.at][2]
        if content[:2] == "- " or content == "-":
            return self.sequence(indent, path)
        return self.mapping(indent, path)

    def mapping(self, indent: int, path: Path, first: str | None = None) -> dict[str, Any]:
        """A block mapping whose keys sit at column `indent` (0-based) from the current line;
        `first`: the first key's line from there, where a sequence item holds the mapping."""
        lines = self.lines
        values, keys = self.positions.values, self.positions.keys
        out: dict[str, Any] = {}
        values[path] = (lines[self.at][0], indent + 1)
        while True:
            number, _, content = lines[self.at]
            if first is not None:
                content, first = first, None
            key, after = _key(content)
            if key in out or key == "<<":
                raise _OutsideThePart  # an error, or a merge: PyYAML's
            here = path + (key,)
            keys[here] = (number, indent + 1)
            self.at += 1
            rest = content[after:].lstrip(" ")
            nxt = lines[self.at] if self.at < len(lines) else None
            if rest[:1] == "|":
                out[key] = self.literal(rest, number, indent + len(content) - len(rest), here, indent)
            elif rest and rest[0] != "#":
                out[key] = self.scalar(rest, number, indent + len(content) - len(rest), here)
                if nxt is not None and nxt[1] > indent:
                    raise _OutsideThePart  # a scalar continued on the next line, or an error
            elif nxt is not None and nxt[1] > indent and not _bound_line(nxt):
                out[key] = self.node(nxt[1], here)
            elif nxt is not None and nxt[1] == indent and _is_item(nxt[2]):
                out[key] = self.sequence(indent, here)  # a sequence not indented
            else:
                out[key] = None  # nothing: null, where the `:` ends
                values[here] = (number, indent + after + 1)
            if self.at == len(lines):
                return out
            nxt = lines[self.at]
            if nxt[1] < indent or _bound_line(nxt):
                return out
            if nxt[1] > indent or _is_item(nxt[2]):
                raise _OutsideThePart

    def sequence(self, indent: int, path: Path) -> list[Any]:
        """A block sequence whose `-` sit at column `indent` (0-based) from the current line."""
        lines = self.lines
        values = self.positions.values
        out: list[Any] = []
        values[path] = (lines[self.at][0], indent + 1)
        while True:
            if len(path) >= _DEEPEST:
                raise _OutsideThePart
            number, _, content = lines[self.at]
            here = path + (len(out),)
            rest = content[1:].lstrip(" ")
            if not rest or rest[0] == "#":  # nothing after the `-` but a comment
                self.at += 1
                nxt = lines[self.at] if self.at < len(lines) else None
                if nxt is not None and nxt[1] > indent and not _bound_line(nxt):
                    out.append(self.node(nxt[1], here))
                else:
                    out.append(None)
                    values[here] = (number, indent + 2)
            else:
                column = indent + len(content) - len(rest)
                if _is_item(rest):
                    raise _OutsideThePart  # a sequence in a sequence's item
                if _holds_key(rest):
                    out.append(self.mapping(column, here, first=rest))
                elif rest[0] == "|":
                    self.at += 1
                    out.append(self.literal(rest, number, column, here, indent))
                else:
                    self.at += 1
                    out.append(self.scalar(rest, number, column, here))
                    if self.at < len(lines) and lines[self.at][1] > indent:
                        raise _OutsideThePart  # a scalar continued on the next line, or an error
            if self.at == len(lines):
                return out
            nxt = lines[self.at]
            if nxt[1] != indent or not _is_item(nxt[2]) or _bound_line(nxt):
                return out  # where it ends, the collection holding it judges the line

    def literal(self, header: str, line: int, column: int, path: Path, parent: int) -> str:
        """A literal block scalar (`|`, or `|-` without its last line break) whose header is
        on `line` at 0-based `column`, its lines indented deeper than `parent`: the text of
        those lines from the first one's indentation. Its lines, comments among them, are
        passed over. Left to PyYAML: keeping (`|+`), an indentation indicator, a first line
        that is empty or not indented, a line of spaces, a block ending the text without a
        line break."""
        strip = header[1:2] == "-"
        after = header[2:] if strip else header[1:]
        if after and not (after[0] == " " and after.lstrip(" ")[:1] == "#"):
            raise _OutsideThePart
        raw = self.raw
        at = line  # the index of the line after the header's
        first = raw[at] if at < len(raw) else ""
        indent = len(first) - len(first.lstrip(" "))
        if not first.strip(" ") or indent <= parent:
            raise _OutsideThePart
        content: list[str] = []
        while at < len(raw):
            text = raw[at]
            if text:
                if not text.strip(" "):
                    raise _OutsideThePart  # spaces alone: content or not by their number
                if len(text) - len(text.lstrip(" ")) < indent:
                    break
            content.append(text[indent:])
            at += 1
        trailing = 0
        while content[-1] == "":
            content.pop()
            trailing += 1
        if at == len(raw) and not trailing:
            raise _OutsideThePart  # the text's last line, without a line break
        lines = self.lines
        while self.at < len(lines) and lines[self.at][0] <= at:
            self.at += 1  # the block's own lines, read above
        self.positions.values[path] = (line, column + 1)
        return "\n".join(content) + ("" if strip else "\n")

    def scalar(self, text: str, line: int, column: int, path: Path) -> Any:
        """The value written as `text` (the rest of its line, not a comment) at 0-based
        `column`."""
        self.positions.values[path] = (line, column + 1)
        first = text[0]
        if first == '"' or first == "'":
            end = _quoted_end(text)
            rest = text[end:] if end > 0 else "x"
            if rest and (rest[0] != " " or rest.lstrip(" ")[:1] != "#"):
                raise _OutsideThePart  # more than one line, an escape, or an error
            return _quoted_value(text, end)
        if first == "[" or first == "{":
            return self.flow(text, line, column, path)
        return self.plain(_plain(_cut_comment(text)))

    def plain(self, plain: str) -> Any:
        tag = resolve_plain(plain)
        if tag == STR or plain == "<<":
            return plain
        if tag == FLOAT:
            self.floats = True
        return decode(tag, plain)

    def flow(self, text: str, line: int, column: int, path: Path) -> Any:
        """A one-line flow sequence or mapping of scalars (`["python", "train.py"]`,
        `{cpu: 250m, memory: 1Gi}`), at 0-based `column`."""
        mapping = text[0] == "{"
        out: Any = {} if mapping else []
        at = _blanks(text, 1)
        if text[at : at + 1] != ("}" if mapping else "]"):
            while True:
                where = (line, column + at + 1)
                if mapping:
                    key, at = _flow_text(text, at)
                    if key in out or key == "<<" or text[at : at + 2] != ": ":
                        raise _OutsideThePart  # a key in another form, or a duplicate
                    here = path + (key,)
                    self.positions.keys[here] = where
                    at = _blanks(text, at + 1)
                    self.positions.values[here] = (line, column + at + 1)
                    out[key], at = self.flow_scalar(text, at)
                else:
                    self.positions.values[path + (len(out),)] = where
                    item, at = self.flow_scalar(text, at)
                    out.append(item)
                at = _blanks(text, at)
                if text[at : at + 1] != ",":
                    break
                at = _blanks(text, at + 1)
        if text[at : at + 1] != ("}" if mapping else "]"):
            raise _OutsideThePart
        rest = text[at + 1 :]
        if rest and (rest[0] != " " or rest.lstrip(" ")[:1] != "#"):
            raise _OutsideThePart  # more after it than a comment, or more than one line
        return out

    def flow_scalar(self, text: str, at: int) -> tuple[Any, int]:
        """The scalar at `at` of a flow collection, and where it ends."""
        value, end = _flow_text(text, at)
        return (value if text[at : at + 1] in ('"', "'") else self.plain(value)), end


def _flow_text(text: str, at: int) -> tuple[str, int]:
    """The text of the (quoted or plain) scalar at `at` of a flow collection, and its end."""
    if text[at : at + 1] in ('"', "'"):
        end = _quoted_end(text[at:])
        if end < 0:
            raise _OutsideThePart
        return _quoted_value(text[at:], end), at + end
    end = at
    while end < len(text) and text[end] not in _FLOW_ENDS:
        end += 1
    item = text[at:end].rstrip(" ")
    if not item or item[0] in _NOT_FIRST or "#" in item:
        raise _OutsideThePart
    return item, at + len(item)


def _blanks(text: str, at: int) -> int:
    """Where the spaces from `at` end."""
    while text[at : at + 1] == " ":
        at += 1
    return at


def _bound(content: str) -> bool:
    """Whether a line at the left margin is a document's bound (`---` or `...`)."""
    return content[:3] in ("---", "...") and content[3:4] in ("", " ")


def _bound_line(line: tuple[int, int, str]) -> bool:
    return line[1] == 0 and _bound(line[2])


def _is_item(content: str) -> bool:
    return content[:2] == "- " or content == "-"


def _holds_key(text: str) -> bool:
    """Whether a sequence item's text starts a mapping (`- name: x`)."""
    first = text[0]
    if first == '"' or first == "'":
        end = _quoted_end(text)
        return end > 0 and text[end : end + 1] == ":" and text[end + 1 : end + 2] in ("", " ")
    cut = _cut_comment(text)
    return ": " in cut or cut.endswith(":")


def _key(content: str) -> tuple[str, int]:
    """A line's key, and where what follows its `:` starts."""
    first = content[0]
    if first == '"' or first == "'":
        end = _quoted_end(content)
        if end < 0 or content[end : end + 1] != ":" or content[end + 1 : end + 2] not in ("", " "):
            raise _OutsideThePart
        key = _quoted_value(content, end)
    else:
        end = content.find(": ")
        if end < 0:
            if not content.endswith(":"):
                raise _OutsideThePart  # no key: a scalar, or an error
            end = len(content) - 1
        key = content[:end]
        if " #" in key:
            raise _OutsideThePart  # a scalar and a comment
        _plain(key)
    if len(key) > _LONGEST_KEY:
        raise _OutsideThePart
    return key, end + 1


def _cut_comment(text: str) -> str:
    """A plain scalar's line without a comment (` #` starts one)."""
    at = text.find(" #")
    return text if at < 0 else text[:at].rstrip(" ")


def _plain(text: str) -> str:
    """`text` as a plain scalar, which must be all of it."""
    first = text[:1]
    if not first or first in _NOT_FIRST and (first != "-" or text[1:2] in ("", " ")):
        raise _OutsideThePart  # an indicator
    if text.startswith(("---", "...")) or ": " in text or text.endswith(":"):
        raise _OutsideThePart
    return text


def _quoted_end(text: str) -> int:
    """Where the one-line quoted scalar starting `text` ends (after its quote), or -1 (not closed, or escaped)."""
    if text[0] == '"':
        end = text.find('"', 1)
        if end < 0 or "\\" in text[1:end]:
            return -1
        return end + 1
    end = 1
    while True:
        end = text.find("'", end)
        if end < 0:
            return -1
        if text[end + 1 : end + 2] != "'":
            return end + 1
        end += 2


def _quoted_value(text: str, end: int) -> str:
    if text[0] == '"':
        return text[1 : end - 1]
    return text[1 : end - 1].replace("''", "'")
