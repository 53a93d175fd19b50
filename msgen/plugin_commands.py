"""The commands plug-in hosts run: kustomize's legacy exec plugin and Argo CD's CMP plugin.

They share `msgen render`'s options and all-or-nothing output, but each reads its input the
way its host hands it over (a config file kustomize names, Argo CD's environment and
application directory), so they live apart from the commands a user types.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from .cli import (
    _CONTEXT,
    EXIT_INPUT,
    _no_documents,
    _options,
    _write,
    compile_options,
    compile_paths,
    report,
)

if TYPE_CHECKING:
    from .driver import Compilation
    from .plan import Options


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
      kustomize build --enable-alpha-plugins overlays/legacy-plugin
    """
    from pathlib import Path

    from .kustomize_plugin import default_home, install

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
    from .emit import to_yaml
    from .kustomize_plugin import locate_in

    root = os.environ.get("KUSTOMIZE_PLUGIN_CONFIG_ROOT") or os.getcwd()
    compilation = compile_paths(list(kwargs.pop("paths")), _options(kwargs), locate_in(root))
    _write(to_yaml(compilation.objects), None)


@click.command("argocd-generate", context_settings=_CONTEXT)
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
def argocd_generate(directory: str) -> None:
    """Argo CD plugin: render the application's directory.

    Options come from Argo CD's environment: ARGOCD_APP_NAMESPACE (namespace of jobs that
    name none), KUBE_VERSION, then the plugin's env ARGOCD_ENV_MSGEN_<OPTION> and the
    Application's parameters PARAM_<OPTION>, where <OPTION> is an option name upper-cased
    with '_' for '-' (TARGET, SCHEDULER_ADDRESS, GANG_SCHEDULER, ...); a misspelt
    ARGOCD_ENV_MSGEN_ variable is an error. A directory with a kustomization.yaml is built
    with `kustomize build --enable-alpha-plugins --enable-exec` (msgen-krm on PATH), then
    the jobs left in the build are compiled. Prints nothing unless the whole render
    succeeded, so Argo CD never prunes on a broken commit.

    \b
    Example (what the cmp-server runs, in the application's directory):
      ARGOCD_APP_NAMESPACE=training msgen argocd-generate
    """
    from . import options as option_text
    from .argocd import options_from_env
    from .argocd_kustomize import KustomizeError, kustomization_in
    from .argocd_kustomize import build as build_kustomization
    from .emit import to_yaml

    try:
        options = options_from_env(os.environ)
    except option_text.OptionError as exc:
        click.echo(f"msgen: {exc}", err=True)
        raise SystemExit(EXIT_INPUT) from None
    if kustomization_in(directory) is None:
        compilation = compile_paths([directory], options)
    else:
        try:
            built = build_kustomization(directory, os.environ)
        except KustomizeError as exc:
            click.echo(f"msgen: {exc}", err=True)
            raise SystemExit(EXIT_INPUT) from None
        compilation = compile_built(f"kustomize build {directory}", built, options)
    _write(to_yaml(compilation.objects), None)


def compile_built(name: str, text: str, options: Options) -> Compilation:
    """Compile a stream another tool built; report; exit 1 on errors or an empty stream."""
    from .driver import compile_sources
    from .source import Source

    compilation = compile_sources([Source(name, text)], options)
    if compilation.ok and compilation.documents == 0:
        compilation.diagnostics.append(_no_documents(name, name))
    report(compilation.diagnostics, compilation.sources)
    if not compilation.ok:
        raise SystemExit(EXIT_INPUT)
    return compilation


@click.command("argocd-discover", context_settings=_CONTEXT)
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
def argocd_discover(directory: str) -> None:
    """Argo CD plugin: print the job files below DIRECTORY (nothing when there are none).

    \b
    Example:
      msgen argocd-discover overlays/base
    """
    from .argocd import discover

    for path in discover(directory):
        click.echo(path)


def register(main: click.Group) -> None:
    """Add the plug-in hosts' commands to the `msgen` group."""
    for command in (install_kustomize_plugin, kustomize_plugin, argocd_generate, argocd_discover):
        main.add_command(command)
