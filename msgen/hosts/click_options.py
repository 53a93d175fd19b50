"""What every msgen command shares: its settings (`-h` as well as `--help`, help 100 columns
wide) and the options of every compiling command.

The main group and the commands each host loads on demand (kustomize's, Argo CD's, Helm's,
the samples', the reconciler's) take them from here, so their help reads alike and a script
can pass the same options to `render`, `apply`, `status` and `helm-post-renderer`; a module
of its own, below every host, so none of them imports another's.
"""

from __future__ import annotations

from typing import Any, Callable

import click

CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


#: PATH arguments: files, directories or - (stdin). Typed as paths so that shell completion
#: offers file names; nothing is checked here (`inputs.expand_paths` reports a missing one).
PATHS = click.Path(readable=False, allow_dash=True)


def compile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options every compiling command shares, and its PATH arguments."""
    return click.argument("paths", nargs=-1, metavar="[PATH]...", type=PATHS)(render_options(func))


def render_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The render options alone: for commands that take other arguments as well as files
    (`msgen status JOB-OR-PATH...`) and must accept what `apply` accepts, so a script can
    pass the same options to `apply`, `status` and `delete`. They are generated from
    `msgen.options.option_table` (see `msgen.options.option_cli`)."""
    from ..options.option_cli import click_options

    decorators = click_options()
    for decorator in reversed(decorators):
        func = decorator(func)
    return func
