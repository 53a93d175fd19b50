"""The `msgen` command, on click.

Exit status: 0 ok (warnings allowed), 1 the input has errors, 2 the command line is wrong.
Errors go to stderr as `file:line:column: error: ...`; stdout gets the whole output or
nothing, so a generator host never sees a partial stream. What the compiling commands do
once their options are read lives in `compile_command`, without click: the `msgen` entry
point (`entry.run`) runs a plain `msgen render` through it directly, and comes here for
everything else (help, other commands, any command line it does not read itself).
"""

from __future__ import annotations

from typing import Any

import click

from ... import __version__
from ..click_options import CONTEXT as _CONTEXT
from ..click_options import PATHS, compile_options
from ..compile_command import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    compile_paths,
    guarded,
    options_from,
    report,
)

__all__ = ["EXIT_INPUT", "EXIT_INTERNAL", "compile_paths", "main", "report", "run"]


def _output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--output: a file in a directory that exists; `-` is standard output (the default)."""
    from ...yamlio.output_name import output_problem

    problem = output_problem(value)
    if problem is not None:
        raise click.BadParameter(problem)
    return None if value == "-" else value


#: Commands written in other modules, by name: the module whose `register(main)` adds them.
#: They load when named (or listed, by --help), so a render does not build their options.
ELSEWHERE = {
    "install-kustomize-plugin": "msgen.hosts.kustomize.commands",
    "kustomize-plugin": "msgen.hosts.kustomize.commands",
    "krm-step": "msgen.hosts.argocd.commands",
    "argocd-generate": "msgen.hosts.argocd.commands",
    "argocd-discover": "msgen.hosts.argocd.commands",
    "helm-post-renderer": "msgen.hosts.helm.commands",
    "install-helm-plugin": "msgen.hosts.helm.commands",
    "apply": "msgen.hosts.command_line.reconcile.commands",
    "diff": "msgen.hosts.command_line.reconcile.commands",
    "status": "msgen.hosts.command_line.reconcile.commands",
    "delete": "msgen.hosts.command_line.reconcile.commands",
    "controller": "msgen.hosts.command_line.reconcile.commands",
    "samples": "msgen.hosts.command_line.samples_command",
    "completion": "msgen.hosts.command_line.habit_commands",
    "version": "msgen.hosts.command_line.habit_commands",
}


class _Commands(click.Group):
    """msgen's group: the plug-in hosts' and the reconciler's commands load on first use."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in ELSEWHERE:
            self._load(ELSEWHERE[cmd_name])
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        for module in dict.fromkeys(ELSEWHERE.values()):
            self._load(module)
        return super().list_commands(ctx)

    def _load(self, module: str) -> None:
        import importlib

        importlib.import_module(module).register(self)


@click.group(cls=_Commands, context_settings=_CONTEXT)
@click.version_option(__version__, "--version", prog_name="msgen")
def main() -> None:
    """Compile MindSpore training jobs into plain Kubernetes YAML.

    msgen does at render time what ms-operator did inside the cluster: it turns an MSJob
    (mindspore.gitee.com/v1) into Jobs or Pods, Services and the MindSpore cluster
    environment, so the output runs on any cluster with no operator installed.

    Examples run as shown, in any directory (the samples ship with msgen); one that needs
    something more says so in a comment.

    \b
    Examples:
      msgen samples mindspore/widedeep-gpu-dataparallel > job.yaml
      msgen render job.yaml > out.yaml
      msgen samples mindspore/lenet-cpu | msgen render
      msgen validate "$(msgen samples --path)"
      msgen schema AscendJob
    """


@main.command(context_settings=_CONTEXT)
@compile_options
@click.option(
    "--output",
    "-o",
    metavar="FILE",
    type=click.Path(dir_okay=False, allow_dash=True),
    callback=_output,
    help="Write to FILE (whole or not at all); - is standard output, the default. "
    "Not a format: that is --format.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["yaml", "json"]),
    default="yaml",
    show_default=True,
    help="yaml: a multi-document stream; json: one v1 List holding every object.",
)
def render(output: str | None, output_format: str, **kwargs: Any) -> None:
    """Compile jobs into Kubernetes objects.

    PATH is a file, a directory (every *.yaml, *.yml and *.json below it, in sorted
    order, kustomization files skipped) or - for standard input, the default. Files may hold
    many documents; documents that are not a job kind msgen knows pass through
    unchanged, in place.

    Output goes to standard output, or to --output. When any input has an error, msgen
    prints every error to standard error, writes nothing and exits with status 1.

    \b
    Examples:
      msgen samples mindspore/lenet-cpu > job.yaml
      msgen render job.yaml > out.yaml
      msgen render --target pod --namespace training job.yaml -o out.yaml
      cat job.yaml | msgen render --kube-version 1.29 --format json
      msgen render --target jobset --gang-scheduler volcano --kueue-queue team-a job.yaml
      msgen render jobs/ -o out.yaml   # needs jobs/: a directory of job files
    """
    from ..compile_command import render as render_to

    render_to(output, output_format, kwargs)


@main.command(context_settings=_CONTEXT)
@compile_options
@click.option(
    "--strict",
    is_flag=True,
    help="Warnings fail too: exit 1 when there is any (for CI); shown even with --quiet.",
)
def validate(strict: bool, **kwargs: Any) -> None:
    """Run every input check and report, without writing any output.

    Takes the same PATH arguments and options as render (the target and Kubernetes
    version decide some checks). Exits 0 when every input is valid, 1 otherwise.

    \b
    Examples:
      msgen validate "$(msgen samples --path)" && echo valid
      msgen validate --strict "$(msgen samples --path)/mindspore/lenet-cpu.yaml"
    """
    paths = list(kwargs.pop("paths"))
    options = options_from(kwargs)
    compilation = compile_paths(
        paths,
        options,
        sink=lambda objects: None,
        summary="msgen: invalid: {errors} error(s)",
        strict=strict,
    )
    if not options.quiet:  # errors only: valid input prints nothing, as `render -q` warns of none
        click.echo(
            f"msgen: valid: {compilation.jobs} job(s) in {compilation.documents} document(s)",
            err=True,
        )


@main.command(context_settings=_CONTEXT)
@click.argument("kind", required=False, default="mindspore.gitee.com/v1/MSJob")
@click.option("--list", "list_kinds", is_flag=True, help="List the input kinds msgen compiles.")
def schema(kind: str, list_kinds: bool) -> None:
    """Print the JSON Schema of an input kind (default: mindspore.gitee.com/v1/MSJob).

    KIND is apiVersion/kind (mindspore.gitee.com/v1/MSJob) or a kind name that names one
    kind (AscendJob); a name several kinds share (MSJob, mxjob) lists them to choose from.
    The same schemas are checked in under schemas/ in msgen's source.

    \b
    Examples:
      msgen schema > msjob.schema.json
      msgen schema --list
    """
    import json

    from ... import kinds
    from .schemas import schema_for

    if list_kinds:
        for api_version, name in kinds.known_kinds():
            click.echo(f"{api_version}/{name}")
        return
    found = kinds.matching(kind)
    if len(found) > 1:
        choices = " or ".join(f"{api}/{name}" for api, name in found)
        raise click.BadParameter(f"{kind!r} names {len(found)} kinds; accepted: {choices}", param_hint="KIND")
    job_kind = kinds.find_by_name(kind)
    if job_kind is None:
        known = ", ".join(f"{api}/{name}" for api, name in kinds.known_kinds())
        raise click.BadParameter(f"unknown kind {kind!r}; accepted: {known}", param_hint="KIND")
    click.echo(json.dumps(schema_for(job_kind), indent=2, sort_keys=True))


@main.command(context_settings=_CONTEXT)
@click.argument("paths", nargs=-1, metavar="[PATH]...", type=PATHS)
@click.option("--in-place", "-i", is_flag=True, help="Rewrite each file (atomically) instead of printing.")
def convert(paths: tuple[str, ...], in_place: bool) -> None:
    """Rewrite older job files in today's format, keeping comments and key order.

    A 2020 kubeflow.org/v1 MSJob becomes a mindspore.gitee.com/v1 MSJob, an MxJob
    (mxnet.mlkube.io/v1beta1 or mlkube.io/v1beta1) a kubeflow.org/v1 MXJob; other documents
    stay as they are. Each change is explained on standard error. PATH is a file, a
    directory or - for standard input, the default.

    \b
    Examples:
      msgen samples mindspore-legacy/msjob-mnist-dist > old-msjob.yaml
      msgen convert old-msjob.yaml > msjob.yaml
      msgen convert --in-place jobs/   # needs jobs/: a directory of job files
    """
    from .convert import convert_paths

    status = convert_paths(list(paths), in_place)
    if status:
        raise SystemExit(status)


def run() -> None:
    """click's own handling, plus no traceback for a bug unless MSGEN_DEBUG is set."""
    guarded(lambda: main(standalone_mode=True))

