"""msgen: compile MindSpore training jobs into plain Kubernetes YAML.

The public API is small: `render()` for text in, text out, and `compile_documents()` for
objects and diagnostics. Both are pure: no cluster, no network, no clock.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: `typing.TYPE_CHECKING` without importing `typing`: every msgen module is a submodule of this
#: package, and the console scripts turn the cycle collector off only once this package and their
#: entry module are loaded (msgen.hosts.fast_exit), so what loads first should be little.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .compile.driver import Compilation
    from .model.plan import Options


def compile_documents(text: str, name: str = "<input>", options: Options | None = None) -> Compilation:
    """Compile every document of `text`; returns objects and diagnostics, never raises for input."""
    from .compile.driver import compile_sources
    from .model.plan import Options
    from .model.source import Source

    return compile_sources([Source(name, text)], options or Options())


def render(text: str, options: Options | None = None, **option_values: Any) -> str:
    """YAML in, YAML out; raises `InputError` when the input has errors."""
    from .model.diagnostics import InputError
    from .yamlio.emit import to_yaml
    from .model.plan import Options

    result = compile_documents(text, options=options or Options(**option_values))
    if not result.ok:
        raise InputError([d for d in result.diagnostics if d.is_error])
    return to_yaml(result.objects)


__all__ = ["__version__", "compile_documents", "render"]
