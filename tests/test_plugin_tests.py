"""Tests mirror the code: every registered plug-in module (kind, framework, device, launcher,
target) and each core module with logic of its own has a test module named after it,
`tests/test_<package>_<module>.py` (docs/development.md), so a fault names what broke; and a
plug-in's test module calls every entry point the plug-in implements (the interfaces of
`msgen.model.extension_points` it picks), so that each is tested where a reader of the
plug-in looks for its tests, not only through whole renders elsewhere."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from msgen import devices, frameworks, kinds, launchers, targets
from msgen.model import extension_points as points

TESTS = Path(__file__).parent

#: core modules whose logic is tested in a module of their own (the behaviour suites test
#: them too, through whole renders)
CORE = ("msgen.model.patch", "msgen.model.quantity", "msgen.model.names", "msgen.targets.addressing",
        "msgen.targets.fit", "msgen.kinds.shared", "msgen.hosts.compile_command",
        "msgen.hosts.helm.post_renderer", "msgen.checks.name_references")


def plugin_modules() -> list[str]:
    """The modules the registries name (a kind's package, for a kind split in modules)."""
    found = [
        *targets._REGISTRY.values(),
        *(entry.partition(":")[0] for entry in kinds._REGISTRY.values()),
        *frameworks._REGISTRY.values(),
        *(entry.module for entry in devices._REGISTRY.values()),
        *(entry.module for entry in launchers._BY_DEVICE.values()),
        *launchers._BY_FRAMEWORK.values(),
    ]
    return sorted({".".join(name.split(".")[:3]) for name in found})


def module_test_path(module: str) -> Path:
    _msgen, *parts = module.split(".")
    return TESTS / f"test_{'_'.join(parts)}.py"


def methods(interface: type) -> list[str]:
    return [name for name, value in vars(interface).items() if callable(value) and not name.startswith("_")]


#: package -> (the object of a plug-in module that implements the interfaces, its interfaces:
#: required first, then the optional ones it implements only if it has their entry points)
INTERFACES: dict[str, tuple[str, tuple[type, ...], tuple[type, ...]]] = {
    "kinds": ("KIND", (points.JobKind,), ()),
    "frameworks": ("", (points.Framework,), (points.ChecksJob, points.NeedsPodIndex, points.ExplainsPodIndex)),
    "devices": ("", (points.Device,), ()),
    "launchers": ("", (points.StartsProcesses,), (points.ChecksJob, points.LabelsWorkloads)),
    "targets": ("TARGET", (points.RendersTarget,), ()),
}


def entry_points(module: str) -> dict[str, list[str]]:
    """For each registered module of `module` (a kind's package holds several): the object
    path that reaches the implementing object (`msjob.KIND`, `caffe2`), and its entry points."""
    package = module.split(".")[1]
    attribute, required, optional = INTERFACES[package]
    registered = [m for m in _registered(package) if m == module or m.startswith(module + ".")]
    out = {}
    for name in registered:
        loaded = importlib.import_module(name)
        plugin = getattr(loaded, attribute) if attribute else loaded
        wanted = [entry for interface in required for entry in methods(interface)]
        wanted += [entry for interface in optional for entry in methods(interface) if hasattr(plugin, entry)]
        out[name.rsplit(".", 1)[1] + (f".{attribute}" if attribute else "")] = wanted
    return out


def _registered(package: str) -> list[str]:
    return [m for m in (*targets._REGISTRY.values(), *(e.partition(":")[0] for e in kinds._REGISTRY.values()),
                        *frameworks._REGISTRY.values(), *(e.module for e in devices._REGISTRY.values()),
                        *(e.module for e in launchers._BY_DEVICE.values()), *launchers._BY_FRAMEWORK.values())
            if m.split(".")[1] == package]


def calls(path: Path) -> set[str]:
    """Every `a.b.entry(...)` the test module makes, as the text of what is called."""
    return {ast.unparse(node.func) for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}


def test_the_registries_name_plugins_of_every_kind() -> None:
    packages = {module.split(".")[1] for module in plugin_modules()}
    assert packages == set(INTERFACES) == {"targets", "kinds", "frameworks", "devices", "launchers"}


@pytest.mark.parametrize("module", [*plugin_modules(), *CORE])
def test_each_plugin_and_core_module_has_a_test_module_of_its_own(module: str) -> None:
    path = module_test_path(module)
    assert path.is_file(), f"{module} has no test module of its own; add {path.name}"
    text, (parent, name) = path.read_text(), module.rsplit(".", 1)
    imported = ast.parse(text)
    names = {(node.module, alias.name) for node in ast.walk(imported)
             if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert (parent, name) in names or any(source == module or (source or "").startswith(module + ".")
                                          for source, _ in names), f"{path.name} does not import {module}"


@pytest.mark.parametrize("module", plugin_modules())
def test_a_plugins_test_module_calls_every_entry_point_it_implements(module: str) -> None:
    made = calls(module_test_path(module))
    missing = [f"{owner}.{entry}" for owner, entries in entry_points(module).items()
               for entry in entries if f"{owner}.{entry}" not in made]
    assert not missing, f"{module_test_path(module).name} calls none of {missing}: test them where the plug-in's tests are"
