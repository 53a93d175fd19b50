"""Tests mirror the code: every registered plug-in module (kind, framework, device, launcher,
target) and each core module with logic of its own has a test module named after it,
`tests/test_<package>_<module>.py` (docs/development.md), so a fault names what broke."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from msgen import devices, frameworks, kinds, launchers, targets

TESTS = Path(__file__).parent

#: core modules whose logic is tested in a module of their own (the behaviour suites test
#: them too, through whole renders)
CORE = ("msgen.model.patch", "msgen.model.quantity", "msgen.targets.addressing",
        "msgen.hosts.compile_command", "msgen.hosts.helm.post_renderer", "msgen.checks.name_references")


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


def test_the_registries_name_plugins_of_every_kind() -> None:
    packages = {module.split(".")[1] for module in plugin_modules()}
    assert packages == {"targets", "kinds", "frameworks", "devices", "launchers"}


@pytest.mark.parametrize("module", [*plugin_modules(), *CORE])
def test_each_plugin_and_core_module_has_a_test_module_of_its_own(module: str) -> None:
    path = module_test_path(module)
    assert path.is_file(), f"{module} has no test module of its own; add {path.name}"
    text, (parent, name) = path.read_text(), module.rsplit(".", 1)
    imported = re.search(rf"^from {parent} import .*\b{name}\b|^from {module} import", text, re.M)
    assert imported, f"{path.name} does not import {module}"
