"""The Helm commands: the post-renderer Helm runs, and the Helm 4 plug-in that runs it.

Helm 3 runs an executable it looks up on PATH: `helm install --post-renderer msgen-k8s
--post-renderer-args helm-post-renderer` (`msgen-k8s`: GNU gettext has a `msgen` of its own). Helm 4 runs only plug-ins of type `postrenderer/v1`, named by
`--post-renderer msgen`; `install-helm-plugin` writes one into Helm's plugins directory. Both
end in `helm-post-renderer` (`msgen.hosts.helm.post_renderer`), whose options are `msgen render`'s,
from its arguments (`--post-renderer-args`) or the environment (`HELM_MSGEN_<OPTION>`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..click_options import render_options
from ..click_options import CONTEXT as _CONTEXT
from ..compile_command import EXIT_INPUT, report


@click.command("helm-post-renderer", context_settings=_CONTEXT)
@render_options
def helm_post_renderer(**kwargs: Any) -> None:
    """Helm post-renderer: compile the jobs among the manifests Helm writes to stdin.

    Every document holding a job kind msgen compiles is replaced, where it stood, by the
    objects msgen makes of it; every other document comes out byte for byte as Helm wrote it.
    On an error nothing is printed and the exit status is 1, so Helm applies nothing.
    Options, later ones winning: HELM_MSGEN_<OPTION> in the environment (<OPTION> an option
    name upper-cased with '_' for '-'), these arguments, then each job's msgen/<option>
    annotations.

    \b
    Examples:
      helm install train ./chart --post-renderer msgen-k8s \\
        --post-renderer-args helm-post-renderer --post-renderer-args=--target=jobset   # needs helm 3 and a chart
      helm template train ./chart | msgen helm-post-renderer --kube-version 1.31   # needs helm and a chart
      msgen install-helm-plugin && helm install train ./chart --post-renderer msgen   # needs helm 4 and a chart
    """
    from ...compile import collector
    from .post_renderer import post_render
    from ...yamlio.inputs import read_source

    options = _options(kwargs)
    source, error = read_source("-")
    if error is not None or source is None:
        report([error] if error is not None else [], {})
        raise SystemExit(EXIT_INPUT)
    rendered = post_render(source.text, options, collector.paused)
    compilation = rendered.compilation
    # --quiet (as in `msgen render`): errors only; warnings would fill Helm's own output.
    report([d for d in compilation.diagnostics if d.is_error or not options.quiet], compilation.sources)
    if not compilation.ok:
        raise SystemExit(EXIT_INPUT)
    sys.stdout.write(rendered.text)
    sys.stdout.flush()


def _options(kwargs: dict[str, Any]) -> Any:
    """The environment's options, then those given as arguments; overrides are reported."""
    from ...model import versions
    from ...options import option_table
    from ...options import text as option_text
    from ...options.helm_env import env_layer
    from ...options.option_layers import Layer, resolve

    ctx = click.get_current_context()
    given = {}
    for field, value in kwargs.items():
        row = option_table.BY_FIELD.get(field)
        source = ctx.get_parameter_source(field)
        if row is None or value is None or source not in (
            click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT
        ):
            continue
        text = versions.show(value) if isinstance(value, tuple) else str(value)
        shown = f"--{row.name}" if source is click.core.ParameterSource.COMMANDLINE else str(row.envvar)
        given[row.name] = (text.lower() if isinstance(value, bool) else text, shown)
    try:
        options, overrides = resolve([env_layer(os.environ), Layer(given, "cli")])
    except option_text.OptionError as exc:
        click.echo(f"msgen: {exc}", err=True)
        raise SystemExit(EXIT_INPUT) from None
    for override in overrides:
        click.echo(f"msgen: warning: {override.message()}", err=True)
    return options


@click.command("install-helm-plugin", context_settings=_CONTEXT)
@click.option(
    "--plugins-dir",
    type=click.Path(file_okay=False),
    help="Helm's plugins directory. Default: Helm's own, the first of $HELM_PLUGINS, "
    "$HELM_DATA_HOME/plugins, $XDG_DATA_HOME/helm/plugins, ~/.local/share/helm/plugins.",
)
def install_helm_plugin(plugins_dir: str | None) -> None:
    """Install msgen as Helm 4's post-renderer plug-in `msgen`.

    Helm 4 runs post-renderers only as plug-ins. Afterwards: helm install NAME CHART
    --post-renderer msgen (options: --post-renderer-args=--target=jobset ...). Helm 3 runs
    the command itself (see `msgen helm-post-renderer --help`) and cannot read a Helm 4
    plug-in: keep this one out of a plugins directory Helm 3 uses.

    \b
    Example:
      msgen install-helm-plugin
      helm install train ./chart --post-renderer msgen   # needs helm 4 and a chart
    """
    from pathlib import Path

    from .plugin import default_plugins_dir, helm3_reads, install

    directory = Path(plugins_dir) if plugins_dir else default_plugins_dir(os.environ)
    reads = helm3_reads(directory, os.environ)
    if reads is not None:  # refused before anything is written: Helm 3 would load no plug-in
        click.echo(
            f"msgen: error: Helm 3 reads {directory}: {reads}. Helm 3 refuses a Helm 4 plug-in "
            "there ('failed to load plugins') and then loads none of them; accepted: a plugins "
            "directory of Helm 4's own: msgen install-helm-plugin --plugins-dir DIR, then "
            "HELM_PLUGINS=DIR helm install ... --post-renderer msgen",
            err=True,
        )
        raise SystemExit(1)
    for path in install(directory):
        click.echo(f"installed {path}")
    hint = "" if plugins_dir is None else f"HELM_PLUGINS={directory} "
    click.echo(
        f"\nThen run (Helm 4):\n  {hint}helm install NAME CHART --post-renderer msgen\n"
        "Helm 3 cannot read a Helm 4 plug-in: if a Helm 3 uses this directory too, it says "
        "'failed to load plugins' and loads none; msgen found none using it (no Helm 3 plug-in "
        "there, and the helm on PATH is not a Helm 3 of it)."
    )


def register(main: click.Group) -> None:
    """Add the Helm commands to the `msgen` group."""
    for command in (helm_post_renderer, install_helm_plugin):
        main.add_command(command)
