"""The `msgen` command's entry point: a plain `msgen render` runs without loading click.

Argo CD and kustomize start `msgen render` afresh every time; click's import and msgen's
command definitions are about a fifth of that start-up. `render_argv` reads a plain render
command line exactly as click would, and the render runs through `compile_command`, the code
click's `render` command runs too. Any other command line goes to click (`cli.run`).
"""

from __future__ import annotations

import errno
import os
import sys


def run() -> None:
    from .render_argv import parse

    params = parse(sys.argv[1:], os.environ)
    if params is None or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        from .cli import run as run_with_click  # help, other commands, shell completion, ...

        run_with_click()
        return
    from .compile_command import guarded

    output, output_format = params.pop("output"), params.pop("output_format")
    try:
        guarded(lambda: _render_as_click_does(output, output_format, params))
    except (EOFError, KeyboardInterrupt):
        import click  # click's own words for an interrupted command

        click.echo(file=sys.stderr)
        click.echo("Aborted!", file=sys.stderr)
        sys.exit(1)


def _render_as_click_does(output: str | None, output_format: str, params: dict[str, object]) -> None:
    """`compile_command.render`, with click's exit for a closed pipe (status 1, no traceback)."""
    from .compile_command import render

    try:
        render(output, output_format, params)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        devnull = os.open(os.devnull, os.O_WRONLY)  # nothing more can reach the reader
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        sys.exit(1)
