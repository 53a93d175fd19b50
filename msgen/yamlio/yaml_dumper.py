"""PyYAML's dumper, writing msgen's way: the reference for every byte msgen writes.

libyaml's CSafeDumper where present (PyYAML's SafeDumper elsewhere), with two representers:
multi-line strings as literal blocks (commands stay readable in review), lists of numbers (exit
codes) on one line; and one more resolver, so that a string that Go's YAML (kubectl,
kustomize) or a YAML 1.2 reader would take for a number, a boolean or a time (`1e3`, `0o17`,
`08`, `y`, ...) is quoted like those PyYAML itself would misread (`msgen.yamlio.yaml_go`).
`yaml_writer` writes the same bytes faster, asking this dumper about each distinct scalar;
tests hold the two equal.
"""

from __future__ import annotations

import re
from typing import Any

from .pyyaml import yaml
from .yaml_go import FIRST_CHARACTERS, NotAStringSomewhere

try:
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    if "\n" in text.rstrip("\n"):
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", text)


def _represent_list(dumper: yaml.SafeDumper, items: list[Any]) -> yaml.Node:
    # Lists of numbers (exit codes) read best on one line; everything else stays in blocks.
    numbers = bool(items) and all(isinstance(i, int) and not isinstance(i, bool) for i in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=numbers or None)


def make_dumper(base: type[Any]) -> type[Any]:
    """A dumper on `base` (libyaml's CSafeDumper or PyYAML's SafeDumper) writing msgen's way."""
    dumper: type[Any] = type("Dumper", (base,), {})
    dumper.add_representer(str, _represent_str)
    dumper.add_representer(list, _represent_list)
    # Any tag but str makes the emitter quote the text; this one is never written.
    dumper.add_implicit_resolver("tag:msgen,2024:not-a-string", NotAStringSomewhere(), FIRST_CHARACTERS)
    return dumper


#: The dumper msgen writes with.
DUMPER = make_dumper(_BaseDumper)

_SETTINGS: dict[str, Any] = {
    "sort_keys": False,
    "default_flow_style": False,
    "allow_unicode": True,
    "width": 1 << 16,
}


def pyyaml_dump(objects: list[Any], dumper: type[Any] | None = None) -> str:
    """The objects as PyYAML writes them with msgen's settings: the reference for `emit.to_yaml`."""
    if not objects:
        return ""
    text: str = yaml.dump_all(objects, Dumper=dumper or DUMPER, **_SETTINGS)
    return text


def is_libyaml(dumper: type) -> bool:
    return hasattr(yaml, "CSafeDumper") and issubclass(dumper, yaml.CSafeDumper)


#: Characters libyaml escapes (PyYAML's pure emitter writes them as they are).
LIBYAML_ESCAPES = re.compile("[\x85\U00010000-\U0010ffff]")


def double_quoting(dumper: type[Any]) -> type[Any]:
    """A subclass of `dumper` writing double-quoted the strings libyaml escapes (a new class
    each call: the writer that needs one keeps it)."""

    def quoted(self: yaml.SafeDumper, text: str) -> yaml.Node:
        if LIBYAML_ESCAPES.search(text):
            return self.represent_scalar("tag:yaml.org,2002:str", text, style='"')
        return _represent_str(self, text)

    subclass: type[Any] = type("DoubleQuoting", (dumper,), {})
    subclass.add_representer(str, quoted)
    return subclass
