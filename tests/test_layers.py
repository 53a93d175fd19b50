"""The layers of the package: each package imports only the layers below its own.

`msgen/` is grouped into packages named after what they do, so that a reader sees the
pipeline in the tree and knows which package a change goes into; this test keeps the tree
honest. A package may import the packages of any layer below its own, never one of its own
layer (sideways) nor one above; `reconcile` stands beside the layers and reads only what
`BESIDE` names. The imports counted are those of test_module_layout.py: every `import`
statement, at module level, deferred inside a function, or under `if TYPE_CHECKING:`.

Not counted: the package `msgen` itself (`msgen/__init__.py`: the library API, which Python
imports before any module of the package; a module takes only `__version__` from it), and
modules loaded by name through `importlib` (the registries load their own package's plug-ins).
The modules at the root (`msgen/__init__.py`, `msgen/__main__.py`) are above every layer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_module_layout import PACKAGE, _package, imports, modules

Layers = tuple[tuple[str, ...], ...]
#: For each package beside the layers: the packages it may import, and those that may import it.
Beside = dict[str, tuple[frozenset[str], frozenset[str]]]

#: The layers, top first (see docs/development.md, "The map").
LAYERS: Layers = (
    ("hosts",),  # the front ends: command line, KRM function, kustomize plug-in, Argo CD
    ("compile",),  # the session over many inputs and the stage order
    ("kinds",),  # input kinds: model + to_plan
    ("launchers",),  # how a pod's processes start (options-driven contributors)
    ("frameworks", "checks"),  # framework env contracts; input models, pod schema, API rules
    ("targets", "devices"),  # Plan -> objects, and what is true of each target; devices
    ("options", "yamlio"),  # the option table and its readers; YAML in and out
    ("model",),  # plan, patch, diagnostics, source positions, names, versions, policies
)
#: The reconciler reads the policies (model) and the targets' facts; only its commands (hosts)
#: use it.
BESIDE: Beside = {
    "reconcile": (frozenset({"targets", "model"}), frozenset({"hosts"})),
}


#: The modules at the root of msgen/: the library API and `python -m msgen`; all else is in a layer.
ROOT_MODULES = {"__init__.py", "__main__.py"}


def package_of(module: str, root: Path) -> str:
    """The top-level package of a module of msgen ("" for the root modules)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (root / parts[1]).is_dir() else ""


def allowed(source: str, target: str, layers: Layers, beside: Beside) -> bool:
    """Whether package `source` may import package `target`."""
    if source == target or source == "":
        return True
    if target == "":
        return False
    if source in beside:
        return target in beside[source][0]
    if target in beside:
        return source in beside[target][1]
    rank = {name: i for i, layer in enumerate(layers) for name in layer}
    return source in rank and target in rank and rank[source] < rank[target]


def package_edges(root: Path) -> dict[tuple[str, str], list[str]]:
    """Every import between two packages, as `file:line imports module` by (source, target)."""
    known = modules(root)
    edges: dict[tuple[str, str], list[str]] = {}
    for name, path in known.items():
        for target, line in sorted(imports(name, path, known).items()):
            if target == root.name:
                continue  # the package itself: see the module docstring
            pair = (package_of(name, root), package_of(target, root))
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{path.relative_to(root.parent)}:{line} imports {target}")
    return edges


def upward(root: Path, layers: Layers, beside: Beside) -> list[str]:
    """The imports that point up or sideways, each saying which rule it breaks."""
    found = []
    for (source, target), where in sorted(package_edges(root).items()):
        if not allowed(source, target, layers, beside):
            found += [f"{w} ({source or 'the root'} may not import {target})" for w in where]
    return found


def package_cycles(root: Path) -> list[list[str]]:
    """Circles between packages (each found once, from its smallest member)."""
    graph: dict[str, set[str]] = {}
    for source, target in package_edges(root):
        graph.setdefault(source, set()).add(target)
    found = []
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start and min(path) == start:
                    found.append(path)
                elif nxt not in path and nxt > start:
                    stack.append((nxt, path + [nxt]))
    return found


def declared_packages(root: Path) -> set[str]:
    return {p.parent.name for p in root.glob("*/__init__.py")}


def test_every_package_has_its_place() -> None:
    placed = {name for layer in LAYERS for name in layer} | set(BESIDE)
    assert declared_packages(PACKAGE) == placed, (
        "a package of msgen/ that is not placed in LAYERS or BESIDE (or one placed there that "
        "no longer exists): put it in the layer whose packages it imports and is imported by"
    )


def test_the_root_holds_only_the_api_and_main() -> None:
    assert {p.name for p in PACKAGE.glob("*.py")} == ROOT_MODULES, (
        "a module at msgen/'s root: put it in the package of its layer"
    )


def test_no_package_imports_upward_or_sideways() -> None:
    found = upward(PACKAGE, LAYERS, BESIDE)
    assert not found, "imports against the layers (see docs/development.md):\n" + "\n".join(found)


def test_no_circle_between_packages() -> None:
    assert package_cycles(PACKAGE) == []


_LAYERS = (("top",), ("mid_a", "mid_b"), ("low",))
_BESIDE = {"side": (frozenset({"low"}), frozenset({"top"}))}
_FILES = {
    "__init__.py": "",
    "top/__init__.py": "",
    "mid_a/__init__.py": "",
    "mid_b/__init__.py": "",
    "low/__init__.py": "",
    "side/__init__.py": "",
    "top/t.py": "from ..mid_a import a\nfrom ..side import s\n",
    "mid_a/a.py": "from ..low import x\n",
    "side/s.py": "from ..low import x\n",
    "low/x.py": "VALUE = 1\n",
}


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("low/y.py", "def f():\n    from ..top import t\n", "low may not import top"),
        ("mid_b/b.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..mid_a import a\n",
         "mid_b may not import mid_a"),
        ("side/z.py", "from ..mid_a import a\n", "side may not import mid_a"),
        ("mid_a/c.py", "from ..side import s\n", "mid_a may not import side"),
    ],
)
def test_an_upward_sideways_deferred_or_type_only_import_is_found(
    tmp_path: Path, name: str, text: str, why: str
) -> None:
    package = _package(tmp_path, _FILES)
    assert upward(package, _LAYERS, _BESIDE) == []
    (package / name).write_text(text)
    found = upward(package, _LAYERS, _BESIDE)
    assert len(found) == 1 and f"pkg/{name}:" in found[0] and why in found[0], found


def test_a_circle_between_packages_is_found(tmp_path: Path) -> None:
    package = _package(tmp_path, {**_FILES, "low/y.py": "def f():\n    from ..mid_a import a\n"})
    assert package_cycles(package) == [["low", "mid_a"]]


#: Inside `hosts`: a package per host, what they share at its root (below them all). The
#: command line loads the other hosts' commands by module name (not an import); Argo CD's
#: sidecar builds with kustomize's plug-in; Helm, Argo CD and the command line use nothing of
#: each other.
HOST_LAYERS: Layers = (
    ("command_line", "helm", "argocd"),
    ("kustomize",),
    ("",),  # msgen/hosts/*.py: compile_command, click_options, fast_exit, job_text, ...
)
HOSTS = PACKAGE / "hosts"


def host_of(module: str) -> str:
    """The host package of a module of msgen.hosts ("" for the modules they share)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 or (len(parts) == 3 and (HOSTS / parts[2]).is_dir()) else ""


def host_edges() -> dict[tuple[str, str], list[str]]:
    """Every import between two parts of msgen.hosts, as `file:line imports module`."""
    known = modules(PACKAGE)
    edges: dict[tuple[str, str], list[str]] = {}
    for name, path in known.items():
        if not name.startswith("msgen.hosts."):
            continue
        for target, line in sorted(imports(name, path, known).items()):
            if not target.startswith("msgen.hosts.") or target == "msgen.hosts":
                continue
            pair = (host_of(name), host_of(target))
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    return edges


def test_every_host_package_has_its_place() -> None:
    placed = {name for layer in HOST_LAYERS for name in layer} - {""}
    assert {p.parent.name for p in HOSTS.glob("*/__init__.py")} == placed


def test_no_host_imports_another_beside_it_or_above() -> None:
    found = []
    for (source, target), where in sorted(host_edges().items()):
        if not allowed(source or "shared", target or "shared", _hosts_layers(), {}):
            found += [f"{w} ({source or 'the shared modules'} may not import {target or 'the shared modules'})"
                      for w in where]
    assert not found, "imports against msgen/hosts' layout (docs/development.md):\n" + "\n".join(found)


def _hosts_layers() -> Layers:
    return tuple(tuple(name or "shared" for name in layer) for layer in HOST_LAYERS)
