"""msgen's YAML, written by laying out the blocks here and asking PyYAML about scalars only.

Going through PyYAML's representer for every node costs most of a large render (a 4,096-pod
job makes ~500,000 nodes), so `BlockWriter` writes the block structure itself: the shapes
msgen emits are few (mappings with string keys, lists, scalars), and their layout does not
depend on the scalars. What does depend on them, how each scalar is written (plain, quoted,
escaped, a literal block and its indicators), stays PyYAML's decision (`yaml_dumper`): each
distinct scalar is rendered once through the dumper and remembered by the writer. Anything
outside those shapes (a container that appears twice, which PyYAML writes as an anchor; a
type PyYAML refuses; a key or scalar too long for a simple layout) goes through PyYAML whole,
so the output never changes; tests compare both ways on the golden files and on generated data.
"""

from __future__ import annotations

import re

from ..model.memo import Memo
from . import scalar_styles

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
else:
    from ..model.type_forms import Any


#: Scalars longer than this could meet the line width (65,536 columns) at some indentation;
#: PyYAML then folds them at a column that depends on where they sit, so they go to PyYAML.
_LONGEST_SCALAR = 16_384
#: What YAML counts as a line break (libyaml continues the indentation after each).
_LINE_BREAKS = {"\n", "\r", "\r\n", "\x85", "\u2028", "\u2029"}
#: ... and a line of PyYAML's text, with its break, and a break alone: patterns, compiled (and
#: cached by `re`) where PyYAML is asked, not on a render that never asks it.
_BREAKS = "[^\r\n\x85\u2028\u2029]*(?:\r\n|[\r\n\x85\u2028\u2029])"
_BREAK_ONLY = "\r\n|[\r\n\x85\u2028\u2029]"
#: How many distinct scalars a writer remembers before it forgets them all.
_MAX_REMEMBERED = 20_000


class Verbatim(dict[str, Any]):
    """An object that passes through, with the text it was written as (`verbatim`): every
    host uses it as the mapping it is; a YAML stream writes `text` instead."""

    __slots__ = ("text",)

    def __init__(self, data: dict[str, Any], text: str):
        super().__init__(data)
        self.text = text


class _Unsupported(Exception):
    """A document the writer does not lay out itself; PyYAML writes it."""


class _Scalar:
    """How PyYAML writes one scalar as a block mapping's value or a block sequence's item.

    `head` follows `key: ` or `- ` on the same line; `rest` are the following lines, indented
    as for a mapping at column 0 (PyYAML indents a scalar's continuation relative to the
    collection it is in, so they move with it). `keep` marks a literal block that keeps its
    final line breaks (`|+`): libyaml then ends the stream with `...`.
    """

    __slots__ = ("head", "rest", "keep")

    def __init__(self, head: str, rest: list[str], keep: bool):
        self.head = head
        self.rest = rest
        self.keep = keep


#: Text PyYAML always writes plain, as it is (names, labels, paths, images): it starts with a
#: letter, holds no indicator, space or line break (a `:` inside it, not followed by a space
#: or the end, is an indicator only in flow context), and no YAML 1.1 resolver reads it as
#: anything but a string unless it is one of `_NOT_STRINGS` (only letters start no number,
#: date, merge or value key). Tested against PyYAML; other text asks the dumper.
#: A typical render then asks PyYAML a few times instead of once per scalar
#: (bench/emit_plain_scalars.py measures it; bench/README.md has the figures).
_PLAIN = re.compile(r"[A-Za-z](?:[A-Za-z0-9_./-]|:(?!\Z)){0,200}")
#: libyaml writes a longer key as a complex key (`? key`); PyYAML's pure emitter does so from
#: 123 characters on, so plain keys of 123-128 characters are written as libyaml writes them.
_LONGEST_SIMPLE_KEY = 128
_NOT_STRINGS = frozenset(
    "y Y n N yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF "
    "null Null NULL".split()
)


def pyyaml_dump(objects: list[Any], dumper: type[Any] | None = None) -> str:
    """`yaml_dumper.pyyaml_dump`, PyYAML loaded on the first scalar the writer asks it about."""
    from .yaml_dumper import pyyaml_dump as dump

    return dump(objects, dumper)


class BlockWriter:
    """Writes block mappings and sequences directly, asking `dumper` only about scalars.

    What it learnt of the dumper's scalars is its own (one writer per output stream), at most
    `_MAX_REMEMBERED` of them: (type, value) -> _Scalar, and key texts.
    """

    def __init__(self, dumper: type[Any] | None = None):
        #: None for `yaml_dumper.DUMPER`, loaded when first asked (`_dumper`)
        self.dumper = dumper
        self.scalars: Memo[tuple[type, Any], _Scalar] = Memo("scalars as written", _MAX_REMEMBERED)
        self.keys: Memo[str, str] = Memo("keys as written", _MAX_REMEMBERED)
        #: the one-line strings among `scalars`, by their text: the common case, looked up inline
        self.lines: Memo[str, str] = Memo("one-line strings as written", _MAX_REMEMBERED)
        #: `dumper`, double-quoting what libyaml escapes (`_for`), made on first need
        self.quoting: type[Any] | None = None
        self.out: list[str] = []
        self.seen: set[int] = set()
        self.keep = False

    def documents(self, objects: list[Any], first: bool = True) -> tuple[str, bool]:
        """The documents, each after a `---` line unless `first` (the stream's first), and
        whether libyaml would end the stream with `...` (a `|+` in its last document)."""
        if len(self.scalars) > self.scalars.bound or len(self.keys) > self.keys.bound:
            self.scalars.clear()
            self.keys.clear()
            self.lines.clear()
        parts: list[str] = []
        keep = False
        for obj in objects:
            text, keep = self.document(obj, first)
            parts.append(text)
            first = False
        return "".join(parts), keep

    def document(self, obj: Any, first: bool) -> tuple[str, bool]:
        if isinstance(obj, Verbatim):  # a document that passes through: as it was written
            return obj.text if first else "---\n" + obj.text, False
        self.out = [] if first else ["---\n"]
        self.seen = set()
        self.keep = False
        try:
            if not isinstance(obj, dict) or not obj:
                raise _Unsupported
            self.mapping(obj, 0, False)
        except _Unsupported:
            # PyYAML writes a later document's start by its root (`--- x`, `---\n- x`): ask
            # for it after an empty first document, which is written `{}`.
            text = pyyaml_dump([obj] if first else [{}, obj], self._dumper())
            text = text if first else text[len("{}\n") :]
            if text.endswith("\n...\n"):
                return text[:-4], True
            return text, False
        return "".join(self.out), self.keep

    def mapping(self, mapping: dict[Any, Any], indent: int, inline: bool) -> None:
        if id(mapping) in self.seen:
            raise _Unsupported  # PyYAML would write an anchor and an alias
        self.seen.add(id(mapping))
        out = self.out
        pad = " " * indent
        keys = self.keys
        lines = self.lines
        for key, value in mapping.items():
            text = keys.get(key) if type(key) is str else None
            if text is None:
                text = self.key(key)
            if inline:
                out.append(text)
                inline = False
            else:
                out.append(pad + text)
            kind = type(value)
            if kind is dict:
                if value:
                    out.append(":\n")
                    self.mapping(value, indent + 2, False)
                else:
                    out.append(": {}\n")
            elif kind is list:
                if not value:
                    out.append(": []\n")
                elif self.numbers(value):
                    out.append(": ")
                    out.append(self.flow(value))
                else:
                    out.append(":\n")
                    self.sequence(value, indent, False)
            elif kind is str and value in lines:
                out.append(": " + lines[value])
            else:
                out.append(": ")
                self.scalar(value, indent)

    def sequence(self, items: list[Any], indent: int, inline: bool) -> None:
        if id(items) in self.seen:
            raise _Unsupported
        self.seen.add(id(items))
        out = self.out
        dash = " " * indent + "- "
        for item in items:
            if inline:
                out.append("- ")
                inline = False
            else:
                out.append(dash)
            kind = type(item)
            if kind is dict:
                if item:
                    self.mapping(item, indent + 2, True)
                else:
                    out.append("{}\n")
            elif kind is list:
                if not item:
                    out.append("[]\n")
                elif self.numbers(item):
                    out.append(self.flow(item))
                else:
                    self.sequence(item, indent + 2, True)
            elif kind is str and item in self.lines:
                out.append(self.lines[item])
            else:
                self.scalar(item, indent)

    @staticmethod
    def numbers(items: list[Any]) -> bool:
        return all(type(i) is int for i in items)

    def flow(self, items: list[int]) -> str:
        if id(items) in self.seen:
            raise _Unsupported
        self.seen.add(id(items))
        text = "[" + ", ".join(str(i) for i in items) + "]\n"
        if len(text) > _LONGEST_SCALAR:
            raise _Unsupported
        return text

    def scalar(self, value: Any, indent: int) -> None:
        """`value` after `key: ` or `- `, where the collection holding it sits at `indent`."""
        kind = type(value)
        key = (kind, repr(value) if kind is float else value)
        found = self.scalars.get(key)
        if found is None:
            found = self.render(value)
            self.scalars[key] = found
            if kind is str and not found.rest and not found.keep:
                self.lines[value] = found.head
        self.out.append(found.head)
        if found.rest:
            pad = " " * indent
            self.out.extend(line if line in _LINE_BREAKS else pad + line for line in found.rest)
        if found.keep:
            self.keep = True

    def render(self, value: Any) -> _Scalar:
        """How PyYAML writes `value` as the value of a block mapping at column 0."""
        if type(value) not in (str, int, bool, float, type(None)):
            raise _Unsupported
        if type(value) is str and len(value) > _LONGEST_SCALAR:
            raise _Unsupported
        if type(value) is str and _PLAIN.fullmatch(value) and value not in _NOT_STRINGS:
            return _Scalar(value + "\n", [], False)
        if type(value) is str and "\n" in value.rstrip("\n"):  # a literal block (yaml_dumper)
            block = scalar_styles.literal_block(value)
            if block is not None:
                return _Scalar(*block)
        elif type(value) is str:
            written = scalar_styles.one_line(value)
            if written is not None:
                return _Scalar(written + "\n", [], False)
        if type(value) is int:  # SafeRepresenter.represent_int: str(), plain
            return _Scalar(f"{value}\n", [], False)
        if type(value) is bool or value is None:
            return _Scalar({True: "true\n", False: "false\n", None: "null\n"}[value], [], False)
        text = pyyaml_dump([{"k": value}], self._for(value))
        keep = text.endswith("\n...\n")
        if keep:
            text = text[:-4]
        lines = re.findall(_BREAKS, text)
        if "".join(lines) != text or not lines[0].startswith("k: "):
            raise _Unsupported
        rest = lines[1:]
        if any(not re.fullmatch(_BREAK_ONLY, line) and not line.startswith("  ") for line in rest):
            raise _Unsupported
        return _Scalar(lines[0][3:], rest, keep)

    def _dumper(self) -> type[Any]:
        if self.dumper is None:
            from .yaml_dumper import DUMPER

            self.dumper = DUMPER
        return self.dumper

    def _for(self, value: Any) -> type[Any]:
        """The dumper that writes `value` as libyaml does.

        Without libyaml, PyYAML's pure emitter decides alone, and it writes two kinds of
        character unlike libyaml: characters beyond U+FFFF (libyaml escapes them, `\\U0001F600`)
        and NEXT LINE U+0085 (libyaml escapes it, `\\N`). Both make libyaml choose a
        double-quoted scalar, and PyYAML's double-quoted scalar escapes them the same way.
        """
        from .yaml_dumper import LIBYAML_ESCAPES, double_quoting, is_libyaml

        dumper = self._dumper()
        if is_libyaml(dumper) or type(value) is not str:
            return dumper
        if not LIBYAML_ESCAPES.search(value):
            return dumper
        if self.quoting is None:
            self.quoting = double_quoting(dumper)
        return self.quoting

    def key(self, key: Any) -> str:
        """How PyYAML writes `key` as a simple key, without the `: ` after it."""
        if type(key) is not str or len(key) > _LONGEST_SCALAR:
            raise _Unsupported
        if len(key) <= _LONGEST_SIMPLE_KEY and _PLAIN.fullmatch(key) and key not in _NOT_STRINGS:
            self.keys[key] = key
            return key
        # PyYAML's pure emitter writes an empty key as a complex key (`? ''`), libyaml as `''`.
        text = pyyaml_dump([{key: 0}], self._for(key)) if key else "'': 0\n"
        if not text.endswith(": 0\n") or "\n" in text[:-1] or text.startswith("? "):
            raise _Unsupported
        self.keys[key] = text[:-4]
        return text[:-4]
