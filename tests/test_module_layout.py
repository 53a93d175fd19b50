"""The shape of the package: no import circles, no module over MAX_LINES lines.

A circle between two modules means neither can be read, tested or changed alone, and one of
them has to defer its import to load at all. The graph is built from the `import` statements
themselves (with `ast`, nothing is imported), and every statement counts, wherever it is:

- at module level, inside a function, and under `if TYPE_CHECKING:`. A deferred import keeps
  start-up cheap (see test_render_imports.py), but the module still needs the other one to
  work; a type-only import still makes the module's meaning depend on the other's.
- `from .pkg import name` depends on the module `pkg.name` when there is one, else on `pkg`.
- Not counted: the package a module sits in, which Python imports first (every plug-in of a
  registry would otherwise close a circle with its package's `__init__`), and modules loaded
  by name through `importlib` (the registries: kinds, frameworks, targets), which the
  registries' own tests cover.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "msgen"
#: Lines a module may have: small modules with names that say what they hold.
MAX_LINES = 400

#: Circles accepted for now, each with what keeps it. A circle not listed fails, and so does
#: a listed one that is gone (so the list cannot outlive its reason). None today.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def modules(root: Path) -> dict[str, Path]:
    """Every module under `root`, by its dotted name (a package by its own name)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """The package's modules `name` imports, each with the line of its first import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = name.split(".")[0]
    out: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                for alias in node.names
            ]
        for target in targets:
            if target.split(".")[0] == top and target in known and target != name:
                out.setdefault(target, node.lineno)
    return out


def circles(root: Path) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    known = modules(root)
    graph = {name: sorted(imports(name, path, known)) for name, path in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if child < len(graph[node]):
                work.append((node, child + 1))
                nxt = graph[node][child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def _explain(root: Path, group: list[str]) -> str:
    known = modules(root)
    edges = [
        f"  {known[name].relative_to(root.parent)}:{line} imports {target}"
        for name in group
        for target, line in sorted(imports(name, known[name], known).items())
        if target in group
    ]
    return "\n".join([" <-> ".join(group), *edges])


def test_no_module_imports_itself_through_others() -> None:
    every = circles(PACKAGE)
    found = [group for group in every if frozenset(group) not in KNOWN_CIRCLES]
    assert not found, "import circles:\n" + "\n".join(_explain(PACKAGE, g) for g in found)
    gone = KNOWN_CIRCLES - {frozenset(group) for group in every}
    assert not gone, f"listed circles that no longer exist (remove them from KNOWN_CIRCLES): {gone}"


def test_no_module_is_over_the_line_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines: split them by what they hold"


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_a_circle_through_a_deferred_or_type_only_import_is_found(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "from . import a\n",
            "a.py": "from .sub import b\n",
            "sub/__init__.py": "",
            "sub/b.py": "def f():\n    from ..c import x\n",
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n",
            "d.py": "import pkg.a\n",
        },
    )
    assert circles(package) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    assert "pkg/sub/b.py:2 imports pkg.c" in _explain(package, ["pkg.a", "pkg.c", "pkg.sub.b"])


def test_a_package_and_the_modules_it_registers_are_no_circle(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {"__init__.py": "from . import a\n", "a.py": "X = 1\n", "b.py": "from pkg import a\n"},
    )
    assert circles(package) == []
