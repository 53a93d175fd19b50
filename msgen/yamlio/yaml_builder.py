"""One composed YAML node graph into plain data, recording where each key and value was written.

- every key and value keeps its line and column (diagnostics point at the exact spot);
- duplicate keys are errors (kubectl rejects them too), not a silent last-one-wins;
- aliases are measured before they are expanded: a billion-laughs document fails fast, in
  memory proportional to its text, instead of exhausting the machine;
- nesting deeper than `MAX_DEPTH` (counted after alias expansion) is refused with its position:
  the emitter recurses per level, and a deep enough input would crash it;
- a scalar whose explicit tag cannot hold its text (`!!int abc`) is an error at its position;
- scalars follow what Kubernetes' own YAML reader produces (go-yaml's numbers, no
  sexagesimal, timestamps stay strings: `msgen.yamlio.yaml_go`).
"""

from __future__ import annotations

from typing import Any

from ..model.diagnostics import Diagnostic, InputError, Position, Severity
from ..model.source import Document, Path, Positions, Source
from . import yaml_go
from .pyyaml import yaml

#: How many nodes alias expansion may add to one document beyond the nodes it spells out.
ALIAS_EXPANSION_BUDGET = 100_000
#: How deeply collections may nest in one document. Kubernetes objects need about 20 levels;
#: msgen's targets wrap a pod template in at most 10 more, which the emitter must still write.
MAX_DEPTH = 100

_STR = "tag:yaml.org,2002:str"
#: The typed scalars, read as go-yaml reads them (`yaml_go.decode`).
_TYPED = {yaml_go.INT, yaml_go.FLOAT, yaml_go.BOOL, yaml_go.NULL}
# Kubernetes reads YAML into JSON: these stay as the text the user wrote.
_TEXT_TAGS = {_STR, "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"}
_MERGE = "tag:yaml.org,2002:merge"
_TAG_ACCEPTS = {
    "int": "digits (1, -2, 0x1f, 0o17)",
    "float": "a number (1.5, 1e3, .inf, .nan)",
    "bool": "true or false (also yes/no, on/off, y/n)",
    "null": "null, ~ or nothing",
}


def too_deep(position: Position, index: int = 0) -> Diagnostic:
    return Diagnostic(
        Severity.ERROR,
        f"YAML collections nest deeper than {MAX_DEPTH} levels here; accepted: at most "
        f"{MAX_DEPTH} levels of mappings and lists (aliases expanded)",
        position,
        document_index=index,
    )


class _NotATree(Exception):
    """The node graph has shared nodes, merge keys or deep nesting: it needs measuring."""


class DocumentBuilder:
    """Turns one composed node graph into data, recording positions as it goes."""

    def __init__(self, source: Source, index: int):
        self.source = source
        self.index = index
        self.positions = Positions(source)
        self.errors: list[Diagnostic] = []
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
        raise InputError([too_deep(position, self.index)])

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
        if node.tag == _MERGE:
            return node.value  # `<<` as a value: kubectl reads the text
        if node.tag == yaml_go.FLOAT:
            self.floats = True
        if node.tag not in _TYPED:
            self._error(node, f"unsupported YAML tag {node.tag!r}; accepted: plain JSON-like YAML")
            return None
        try:
            return yaml_go.decode(node.tag, node.value)
        except ValueError:
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
