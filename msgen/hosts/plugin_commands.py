"""The commands plug-in hosts run: kustomize's legacy exec plugin and Argo CD's CMP plugin.

They share `msgen render`'s options and all-or-nothing output, but each reads its input the
way its host hands it over (a config file kustomize names, Argo CD's environment and
application directory), so they live apart from the commands a user types.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from .cli import compile_options
from .click_settings import CONTEXT as _CONTEXT
from .compile_command import EXIT_INPUT, compile_paths, no_documents, options_from, report

if TYPE_CHECKING:
    from ..compile.driver import Compilation, Sink
    from ..model.plan import Options


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
    from .kustomize_plugin import locate_in
    from ..yamlio.spool import Spool

    root = os.environ.get("KUSTOMIZE_PLUGIN_CONFIG_ROOT") or os.getcwd()
    paths = list(kwargs.pop("paths"))
    _only_inside(root, paths[1:])
    with Spool() as spool:  # written whole or not at all, memory bounded (spool.py)
        compile_paths(paths, _with_host_options(kwargs), locate_in(root), sink=spool.add)
        spool.deliver()


@click.command("krm-step", hidden=True, context_settings=_CONTEXT)
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
def krm_step(config: str) -> None:
    """What the Argo CD sidecar's build runs for msgen's own KRM function (msgen.hosts.krm_step)."""
    import sys

    from .krm_step import run_step

    with open(config, encoding="utf-8") as stream:
        config_text = stream.read()
    root = os.environ.get("KUSTOMIZE_PLUGIN_CONFIG_ROOT") or os.getcwd()
    status, output, messages = run_step(config_text, sys.stdin.read(), root)
    for message in messages:
        click.echo(message, err=True)
    if status != 0:
        raise SystemExit(status)
    sys.stdout.write(output)
    sys.stdout.flush()


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
    from ..options import option_table
    from ..options import text as option_text
    from ..model import versions
    from ..options.option_layers import Layer, from_env, with_function_config

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


@click.command("argocd-generate", context_settings=_CONTEXT)
@click.argument("directory", default=".", type=click.Path(exists=True, file_okay=False))
def argocd_generate(directory: str) -> None:
    """Argo CD plugin: render the application's directory.

    Options, later ones winning: ARGOCD_APP_NAMESPACE (namespace of jobs that name none) and
    KUBE_VERSION; an overlay's msgen-krm function config; the plugin's env
    ARGOCD_ENV_MSGEN_<OPTION>; the Application's parameters (ARGOCD_APP_PARAMETERS, or
    PARAM_<OPTION>), where <OPTION> is an option name upper-cased with '_' for '-'; then each
    job's msgen/<option> annotations. A value that loses to another is reported; a misspelt
    variable or parameter is an error. KUBE_API_VERSIONS: a job whose objects need an API
    the cluster does not serve is an error. A directory with a kustomization.yaml is built
    with kustomize, without exec functions: msgen's own (exec: {path: msgen-krm}) runs as
    msgen's code, any other function the repository declares is refused (the sidecar's
    MSGEN_ARGOCD_EXEC_FUNCTIONS=allow lets kustomize run them); then the jobs left in the
    build are compiled. Prints nothing unless the whole render succeeded, so Argo CD never
    prunes on a broken commit.

    \b
    Example (what the cmp-server runs, in the application's directory):
      ARGOCD_APP_NAMESPACE=training KUBE_VERSION=1.31.2 msgen argocd-generate   # needs job files here
    """
    from ..options import text as option_text
    from ..options.argocd_env import options_from_env
    from .argocd_kustomize import KustomizeError, kustomization_in
    from .argocd_kustomize import build as build_kustomization
    from ..options.option_layers import to_env

    try:
        options, overrides, handoff = options_from_env(os.environ)
    except option_text.OptionError as exc:
        click.echo(f"msgen: {exc}", err=True)
        raise SystemExit(EXIT_INPUT) from None
    for override in overrides:
        click.echo(f"msgen: warning: {override.message()}", err=True)
    from ..yamlio.spool import Spool

    # Written job by job to a spool, shown only when every job compiled: the memory of one
    # job however many the application holds, and never a partial stream (spool.py).
    with Spool() as spool:
        if kustomization_in(directory) is None:
            compile_paths([directory], options, sink=spool.add)
        else:
            try:
                built = build_kustomization(directory, os.environ, to_env(handoff))
            except KustomizeError as exc:
                click.echo(f"msgen: {exc}", err=True)
                raise SystemExit(EXIT_INPUT) from None
            kept: list[dict[str, Any]] = []

            def sink(objects: list[dict[str, Any]]) -> int:
                kept.extend(objects)  # the build's objects are in memory already
                return spool.add(objects)

            compile_built(f"kustomize build {directory}", built, options, sink)
            _names_agree(directory, kept)
        spool.deliver()


def _names_agree(directory: str, objects: list[dict[str, Any]]) -> None:
    """Exit 1 when a job msgen compiled inside the build cannot find its Scheduler any more:
    an overlay above the one that runs msgen-krm renamed its objects (namePrefix, nameSuffix)
    and the overlay does not list msgen-renamed.yaml, which would have failed the build."""
    from ..checks.name_references import problems

    found = problems(objects, config_maps=False)
    if not found:
        return
    for problem in found:
        click.echo(f"msgen: error: {problem}", err=True)
    click.echo(
        f"msgen: the objects msgen compiled in {directory} were renamed after it (namePrefix or "
        "nameSuffix in an overlay above the one that runs msgen-krm): the job would never find "
        "its Scheduler; rename the job before msgen compiles it, in that overlay (see msgen's "
        "docs/gitops.md, Renames), and list msgen-renamed.yaml under its configurations:",
        err=True,
    )
    raise SystemExit(EXIT_INPUT)


def compile_built(name: str, text: str, options: Options, sink: Sink) -> Compilation:
    """Compile a stream another tool built, into `sink`; report; exit 1 on errors or an
    empty stream."""
    from ..compile import collector
    from ..compile.driver import compile_stream
    from ..model.source import Source

    source = Source(name, text)
    compilation = compile_stream([source], options, sink, around_document=collector.paused)
    compilation.sources.setdefault(name, source)
    if compilation.ok and compilation.documents == 0:
        compilation.diagnostics.append(no_documents(name, name))
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
      msgen argocd-discover "$(msgen samples --path)/mindspore"
    """
    from .argocd import discover

    for path in discover(directory):
        click.echo(path)


def register(main: click.Group) -> None:
    """Add the plug-in hosts' commands to the `msgen` group."""
    for command in (install_kustomize_plugin, kustomize_plugin, krm_step, argocd_generate, argocd_discover):
        main.add_command(command)
