"""Every registered plug-in implements its extension point's interfaces
(`msgen.model.extension_points`), under a unique name, in the declared order.

Registries load plug-ins through importlib (so a render imports only what it uses), which
mypy cannot follow: the plug-in modules declare their own types (`TARGET: Target`, `KIND:
JobKind`, a TYPE_CHECKING block for module plug-ins), and this test checks at run time what
each registry really holds: its required interface, and an optional one only whole (a
plug-in with a `check` of another shape would be asked it and fail).
"""

from __future__ import annotations

import importlib
from msgen.model.type_forms import arguments as get_args  # plan.py's Literal values at run time

import pytest

from msgen import devices, frameworks, kinds, launchers, targets
from msgen.model import extension_points as points
from msgen.options import option_table
from msgen.model import plan
from msgen.launchers import launcher


@pytest.mark.parametrize("name", targets.NAMES)
def test_targets(name: str) -> None:
    target = targets.lookup(name)
    assert isinstance(target, points.Target)
    assert isinstance(target.facts, targets.Facts)
    assert target.name == name and target.summary


def test_target_names_are_unique_and_in_the_declared_order() -> None:
    assert len(set(targets.NAMES)) == len(targets.NAMES)
    assert targets.NAMES == get_args(plan.TargetName)
    assert targets.NAMES == option_table.choices(option_table.BY_NAME["target"])
    summaries = [targets.lookup(name).summary for name in targets.NAMES]
    assert len(set(summaries)) == len(summaries)


@pytest.mark.parametrize("key", sorted(kinds._REGISTRY), ids=" ".join)
def test_kinds(key: tuple[str, str]) -> None:
    kind = kinds.lookup(*key)
    assert isinstance(kind, points.JobKind)
    assert (kind.api_version, kind.kind) == key


def test_kind_objects_are_unique() -> None:
    found = [kinds.lookup(*key) for key in kinds.known_kinds()]
    assert len({id(kind) for kind in found}) == len(found)


@pytest.mark.parametrize("name", sorted(frameworks._REGISTRY))
def test_frameworks(name: str) -> None:
    framework = frameworks.lookup(name)
    assert isinstance(framework, points.Framework)
    optional(framework, points.ChecksJob, points.NeedsPodIndex, points.ExplainsPodIndex)


def test_framework_modules_are_unique() -> None:
    assert len(set(frameworks._REGISTRY.values())) == len(frameworks._REGISTRY)


@pytest.mark.parametrize("kind", list(devices._REGISTRY))
def test_devices(kind: devices.DeviceKind) -> None:
    assert isinstance(devices.lookup(kind), points.Device)
    assert kind in get_args(devices.DeviceKind) and kind != "cpu"


def test_no_resource_names_two_devices() -> None:
    entries = list(devices._REGISTRY.values())
    for i, entry in enumerate(entries):
        for other in entries[i + 1:]:
            names = [*entry.names, *entry.prefixes]
            assert not any(n.startswith(other.prefixes) or n in other.names for n in names)
            others = [*other.names, *other.prefixes]
            assert not any(n.startswith(entry.prefixes) or n in entry.names for n in others)


@pytest.mark.parametrize(
    "module",
    [entry.module for entry in launchers._BY_DEVICE.values()] + list(launchers._BY_FRAMEWORK.values()),
)
def test_processes(module: str) -> None:
    contributor = importlib.import_module(module)
    assert isinstance(contributor, points.StartsProcesses)
    optional(contributor, points.ChecksJob, points.LabelsWorkloads)


def optional(plugin: object, *interfaces: type) -> None:
    """Each optional interface whose entry points `plugin` has, it implements whole (with the
    interface's parameters): a hook the registry would call and find of another shape fails."""
    import inspect

    for interface in interfaces:
        entries = [name for name in vars(interface) if not name.startswith("_")]
        present = [name for name in entries if hasattr(plugin, name)]
        if not present:
            continue
        assert present == entries and isinstance(plugin, interface), (plugin, interface)
        for name in entries:
            wanted = [p for p in inspect.signature(getattr(interface, name)).parameters if p != "self"]
            assert list(inspect.signature(getattr(plugin, name)).parameters) == wanted, (plugin, name)


def test_process_keys_are_known_devices_and_frameworks() -> None:
    assert set(launchers._BY_DEVICE) <= set(get_args(devices.DeviceKind))
    assert set(launchers._BY_FRAMEWORK) <= set(frameworks._REGISTRY)


def test_launchers_are_the_option_values_in_order() -> None:
    assert tuple(launcher.LAUNCHERS) == get_args(plan.LauncherName)
    assert tuple(launcher.LAUNCHERS) == option_table.choices(option_table.BY_NAME["launcher"])
    for name, chosen in launcher.LAUNCHERS.items():
        assert isinstance(chosen, points.Launcher)
        assert chosen.name == name
