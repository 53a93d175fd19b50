"""The commands Argo CD's Config Management Plugin runs: `argocd-discover`, `argocd-generate`,
and `krm-step`, which the sidecar's own kustomize build runs for msgen's KRM function.

They share `msgen render`'s options and all-or-nothing output, but read their input the way
Argo CD hands it over (its environment and the application's directory).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from ..click_options import CONTEXT as _CONTEXT
from ..compile_command import EXIT_INPUT, compile_paths, no_documents, report

if TYPE_CHECKING:
    from ...compile.driver import Compilation, Sink
    from ...model.plan import Options


@click.command("krm-step", hidden=True, context_settings=_CONTEXT)
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
def krm_step(config: str) -> None:
    """What the Argo CD sidecar's build runs for msgen's own KRM function (msgen.hosts.argocd.sidecar_step)."""
    import sys

    from .sidecar_step import run_step

    with open(config, encoding="utf-8") as stream:
        config_text = stream.read()
    root = _in_repository(os.environ.get("KUSTOMIZE_PLUGIN_CONFIG_ROOT") or os.getcwd())
    status, output, messages = run_step(config_text, sys.stdin.read(), root)
    for message in messages:
        click.echo(message, err=True)
    if status != 0:
        raise SystemExit(status)
    sys.stdout.write(output)
    sys.stdout.flush()


def _in_repository(directory: str) -> str:
    """The repository directory a directory of the sidecar's copy stands for, so that the
    function config's findings point into the file the user wrote (the copy's was rewritten
    into msgen's step); any other directory as it is."""
    from .kustomize_build import ROOT_VARIABLE, TREE_VARIABLE

    tree, root = os.environ.get(TREE_VARIABLE), os.environ.get(ROOT_VARIABLE)
    if not tree or not root:
        return directory
    real, tree = os.path.realpath(directory), os.path.realpath(tree)
    if real != tree and not real.startswith(tree + os.sep):
        return directory
    return os.path.join(root, os.path.relpath(real, tree))


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
    from ...options import text as option_text
    from ...options.argocd_env import options_from_env
    from .kustomize_build import KustomizeError, kustomization_in
    from .kustomize_build import build as build_kustomization
    from ...options.option_layers import to_env

    try:
        options, overrides, handoff = options_from_env(os.environ)
    except option_text.OptionError as exc:
        click.echo(f"msgen: {exc}", err=True)
        raise SystemExit(EXIT_INPUT) from None
    for override in overrides:
        click.echo(f"msgen: warning: {override.message()}", err=True)
    from ...yamlio.spool import Spool

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
    """Exit 1 when a job msgen compiled inside the build no longer agrees with itself: an
    overlay above the one that runs msgen-krm renamed, labelled or resized its objects, or a
    generator hashed a name, where kustomize could not follow (an overlay without
    msgen-kustomize.yaml, or a change no configuration can follow). Each finding is printed,
    then what caused it and what to do instead (msgen.checks.job_agreement)."""
    from ...checks.job_agreement import disagreements, explained

    found = disagreements(objects)
    if not found:
        return
    lines = explained(found)
    for line in lines[: len(found)]:
        click.echo(f"msgen: error: {line}", err=True)
    for line in lines[len(found):]:
        click.echo(f"msgen: the objects msgen compiled in {directory}: {line}", err=True)
    raise SystemExit(EXIT_INPUT)


def compile_built(name: str, text: str, options: Options, sink: Sink) -> Compilation:
    """Compile a stream another tool built, into `sink`; report; exit 1 on errors or an
    empty stream."""
    from ...compile import collector
    from ...compile.driver import compile_stream
    from ...model.source import Source

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
    from .discover import discover

    for path in discover(directory):
        click.echo(path)


def register(main: click.Group) -> None:
    """Add Argo CD's commands to the `msgen` group."""
    for command in (krm_step, argocd_generate, argocd_discover):
        main.add_command(command)
