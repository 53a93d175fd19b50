"""Add-on components, one module each, named by `tests/live/cluster up --with <name>`.

A component module has `NAME`, `build(h)`, `up(h) -> dict[str, str]`, `down(h)` and
`status(h) -> str` (see the package docstring of `harness`). This module finds them by name
and records which ones `up` installed, so `down` and `status` see the same set.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import Protocol, cast

from ..core import Harness, HarnessError


class Component(Protocol):
    NAME: str

    def build(self, h: Harness) -> None: ...

    def up(self, h: Harness) -> dict[str, str]: ...

    def down(self, h: Harness) -> None: ...

    def status(self, h: Harness) -> str: ...


def available() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules([str(Path(__file__).parent)]) if not info.name.startswith("_"))


def load(name: str) -> Component:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name not in available():
        raise HarnessError(f"no component {name!r}: the components are {', '.join(available()) or '(none yet)'}")
    module: ModuleType = importlib.import_module(f"{__name__}.{name}")
    for attribute in ("NAME", "build", "up", "down", "status"):
        if not hasattr(module, attribute):
            raise HarnessError(f"component {name} has no {attribute}")
    return cast(Component, module)


def _record(h: Harness) -> Path:
    return h.run / "components"


def installed(h: Harness) -> list[str]:
    """The components `up` installed, in the order it installed them."""
    path = _record(h)
    return [line for line in path.read_text().split() if line] if path.exists() else []


def remember(h: Harness, name: str) -> None:
    names = installed(h)
    if name not in names:
        _record(h).write_text("\n".join([*names, name]) + "\n")


def forget(h: Harness, name: str) -> None:
    _record(h).write_text("".join(f"{n}\n" for n in installed(h) if n != name))
