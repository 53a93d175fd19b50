"""The commands of kustomize's legacy exec plug-in: `install-kustomize-plugin`, and
`kustomize-plugin`, which the installed plug-in runs with the config file kustomize names.

They share `msgen render`'s options and all-or-nothing output, but read their input the way
kustomize hands it over (a temporary file holding the config, the kustomization's root).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from ..click_options import CONTEXT as _CONTEXT
from ..click_options import compile_options
from ..compile_command import EXIT_INPUT, compile_paths, options_from

if TYPE_CHECKING:
    from ...model.plan import Options


@click.command("install-kustomize-plugin", context_settings=_CONTEXT)
@click.option(
    "--plugin-home",
    type=click.Path(file_okay=False),
    help="kustomize's plugin directory. Default: the first that exists of "
    "$KUSTOMIZE_PLUGIN_HOME, $XDG_CONFIG_HOME/kustomize/plugin, ~/.config/kustomize/plugin, "
    "~/kustomize/plugin (kustomize's own search order), else the first of those it would use.",
)
def install_kustomize_plugin(plugin_home: str | None) -> None:
    """Install msgen as kustomize's legacy exec plugin for every kind it compiles.

    This is the exec route `kubectl kustomize` runs. Afterwards, list a job file under
    `generators:` in a kustomization and build with --enable-alpha-plugins.

    \b
    Example:
      msgen install-kustomize-plugin
      kustomize build --enable-alpha-plugins overlays/legacy-plugin   # needs kustomize and a kustomization
    """
    from pathlib import Path

    from .legacy_plugin import default_home, install

    home = Path(plugin_home) if plugin_home else default_home(os.environ)
    for path in install(home):
        click.echo(f"installed {path}")
    hint = "" if plugin_home is None else f"KUSTOMIZE_PLUGIN_HOME={home} "
    click.echo(
        "\nList a job file under `generators:` in kustomization.yaml, then run:\n"
        f"  {hint}kustomize build --enable-alpha-plugins DIR\n"
        f"  {hint}kubectl kustomize --enable-alpha-plugins DIR"
    )


@click.command("kustomize-plugin", hidden=True, context_settings=_CONTEXT)
@compile_options
def kustomize_plugin(**kwargs: Any) -> None:
    """What the installed kustomize plugin runs: render the config file kustomize passes."""
    from .legacy_plugin import locate_in
    from ...yamlio.spool import Spool

    root = os.environ.get("KUSTOMIZE_PLUGIN_CONFIG_ROOT") or os.getcwd()
    paths = list(kwargs.pop("paths"))
    _only_inside(root, paths[1:])
    with Spool() as spool:  # written whole or not at all, memory bounded (spool.py)
        compile_paths(paths, _with_host_options(kwargs), locate_in(root), sink=spool.add)
        spool.deliver()


def _only_inside(root: str, paths: list[str]) -> None:
    """The paths after the config kustomize wrote come from the config's `argsOneLiner`,
    which a repository writes: files outside the kustomization's root are refused unread, so
    no message shows a line of them."""
    inside = os.path.realpath(root)
    for path in paths:
        real = os.path.realpath(os.path.join(root, path))
        if real != inside and not real.startswith(inside + os.sep):
            click.echo(
                f"msgen: {path}: outside the kustomization's directory {root}, not read; "
                "accepted: files inside it (the plug-in's argsOneLiner names them)",
                err=True,
            )
            raise SystemExit(EXIT_INPUT)


def _with_host_options(kwargs: dict[str, Any]) -> Options:
    """The plugin's flags (`argsOneLiner`), between the facts and the choices of the host
    whose build runs it (the Argo CD plugin's MSGEN_HOST_OPTIONS, msgen.options.option_layers)."""
    from ...options import option_table
    from ...options import text as option_text
    from ...model import versions
    from ...options.option_layers import Layer, from_env, with_function_config

    ctx = click.get_current_context()
    try:
        handoff = from_env(os.environ)
    except option_text.OptionError as exc:
        click.echo(f"msgen: {exc}", err=True)
        raise SystemExit(EXIT_INPUT) from None
    if handoff is None:
        return options_from(kwargs)
    given = {}
    for field, value in kwargs.items():
        row = option_table.BY_FIELD.get(field)
        if row is not None and value is not None and (
            ctx.get_parameter_source(field) is click.core.ParameterSource.COMMANDLINE
        ):
            text = versions.show(value) if isinstance(value, tuple) else str(value)
            given[row.name] = (text.lower() if isinstance(value, bool) else text, f"--{row.name}")
    options, overrides = with_function_config(handoff, Layer(given, "cli"))
    for override in overrides:
        click.echo(f"msgen: warning: {override.message()}", err=True)
    return options


def register(main: click.Group) -> None:
    """Add kustomize's commands to the `msgen` group."""
    for command in (install_kustomize_plugin, kustomize_plugin):
        main.add_command(command)
