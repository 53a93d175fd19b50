"""The `msgen` command's entry point: a plain `msgen render` runs without loading click.

Argo CD and kustomize start `msgen render` afresh every time; click's import and msgen's
command definitions are about a fifth of that start-up. `render_argv` reads a plain render
command line exactly as click would, and the render runs through `compile_command`, the code
click's `render` command runs too. Any other command line goes to click (`cli.run`).

The console script (`main`) also ends a render without the interpreter's clean-up
(`msgen.hosts.fast_exit`).
"""

from __future__ import annotations

import errno
import os
import sys

from ..fast_exit import leave, render_modules_loaded

TYPE_CHECKING = False  # typing loads after the collector is off (msgen/__init__.py)
if TYPE_CHECKING:
    from typing import Callable


def main() -> None:
    """The `msgen` console script and `python -m msgen`: `run`, leaving fast after a render.

    The cycle collector is off while the modules load: they make no cyclic garbage, yet the
    tens of thousands of objects they create set off collections; what they made is then
    frozen (`gc.freeze`), so the collections a long render needs do not walk it again.
    """
    import gc

    gc.disable()
    try:
        run(leave_fast=True, loaded=render_modules_loaded)
    finally:
        gc.enable()


def run(leave_fast: bool = False, loaded: Callable[[], None] | None = None) -> None:
    """The `msgen` command line; `leave_fast` ends a plain render with `leave`; `loaded` is
    called before a render starts."""
    from .render_argv import parse_with_sources

    read = parse_with_sources(sys.argv[1:], os.environ)
    if read is None or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        from .cli import run as run_with_click  # help, other commands, shell completion, ...

        if loaded is not None:  # `main` paused the cycle collector for a render's imports only
            import gc

            gc.enable()
        run_with_click()
        return
    from ..compile_command import guarded

    if loaded is not None:
        loaded()

    params, sources = read
    output, output_format = params.pop("output"), params.pop("output_format")
    try:
        guarded(lambda: _render_as_click_does(output, output_format, params, sources))
    except (EOFError, KeyboardInterrupt):
        import click  # click's own words for an interrupted command

        click.echo(file=sys.stderr)
        click.echo("Aborted!", file=sys.stderr)
        sys.exit(1)
    except SystemExit as exc:
        if not leave_fast:
            raise
        leave(exc.code)
    if leave_fast:
        leave(0)


def _render_as_click_does(
    output: str | None, output_format: str, params: dict[str, object], sources: dict[str, str]
) -> None:
    """`compile_command.render`, with click's exit for a closed pipe (status 1, no traceback)."""
    from ..compile_command import render

    try:
        render(output, output_format, params, sources)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        devnull = os.open(os.devnull, os.O_WRONLY)  # nothing more can reach the reader
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        sys.exit(1)
