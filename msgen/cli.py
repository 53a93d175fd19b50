"""The `msgen` command, on click.

Exit status: 0 ok (warnings allowed), 1 the input has errors, 2 the command line is wrong.
Errors go to stderr as `file:line:column: error: ...`; stdout gets the whole output or
nothing, so a generator host never sees a partial stream. What the compiling commands do
once their options are read lives in `compile_command`, without click: the `msgen` entry
point (`entry.run`) runs a plain `msgen render` through it directly, and comes here for
everything else (help, other commands, any command line it does not read itself).
"""

from __future__ import annotations

from typing import Any, Callable

import click

from . import __version__, versions
from .compile_command import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    compile_paths,
    guarded,
    options_from,
    report,
)
from .names import dns1123_problem
from .processes.cli import cli_options

__all__ = ["EXIT_INPUT", "EXIT_INTERNAL", "compile_paths", "main", "report", "run"]

_CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _kube_version(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, int]:
    try:
        version = versions.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    if version > versions.NEWEST:  # a cluster newer than msgen: render, but say so
        given = "KUBE_VERSION" if _from_environment(ctx, param) else "--kube-version"
        click.echo(f"msgen: warning: {given} {value}: {versions.newer_than_known(version)}", err=True)
        return versions.NEWEST
    return version


def _from_environment(ctx: click.Context, param: click.Parameter) -> bool:
    source = ctx.get_parameter_source(param.name) if param.name else None
    return source is click.core.ParameterSource.ENVIRONMENT


def _output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """--output: a file in a directory that exists; `-` is standard output (the default)."""
    from .output_name import output_problem

    problem = output_problem(value)
    if problem is not None:
        raise click.BadParameter(problem)
    return None if value == "-" else value


#: PATH arguments: files, directories or - (stdin). Typed as paths so that shell completion
#: offers file names; nothing is checked here (`inputs.expand_paths` reports a missing one).
PATHS = click.Path(readable=False, allow_dash=True)


def _namespace(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        problem = dns1123_problem(value)
        if problem is not None:
            raise click.BadParameter(f"{value!r} {problem}")
    return value


def compile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options every compiling command shares, and its PATH arguments."""
    return click.argument("paths", nargs=-1, metavar="[PATH]...", type=PATHS)(render_options(func))


def render_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The render options alone: for commands that take other arguments as well as files
    (`msgen status JOB-OR-PATH...`) and must accept what `apply` accepts, so a script can
    pass the same options to `apply`, `status` and `delete`."""
    from .targets import NAMES

    decorators = [
        click.option(
            "--target",
            "-t",
            type=click.Choice(NAMES),
            default="indexed-job",
            show_default=True,
            help="Workload shape: indexed-job = per role an Indexed batch/v1 Job; "
            "pod = bare Pods <job>-<rt>-<i>, as ms-operator created them; "
            "statefulset = per role a StatefulSet (pods always restart, so the job never "
            "completes: for long-running roles); jobset = one JobSet (jobset.x-k8s.io); "
            "volcano = one Volcano Job (batch.volcano.sh), gang-scheduled.",
        ),
        click.option(
            "--kube-version",
            envvar="KUBE_VERSION",
            default=versions.show(versions.NEWEST),
            show_default=True,
            callback=_kube_version,
            help="Kubernetes version of the cluster (MAJOR.MINOR); decides which fields "
            "may be used. Read from KUBE_VERSION when set (Argo CD sets it).",
        ),
        click.option(
            "--namespace",
            "-n",
            callback=_namespace,
            help="Namespace for the objects of jobs whose metadata names none.",
        ),
        click.option(
            "--scheduler-address",
            type=click.Choice(["cluster-ip", "dns"]),
            default="cluster-ip",
            show_default=True,
            help="How pods reach the MindSpore scheduler. cluster-ip: through a ClusterIP "
            "Service <job>-scheduler-0 and the $(<SERVICE>_SERVICE_HOST) variable the kubelet "
            "injects, an IP address as ms-operator gave. dns: through the scheduler's stable "
            "DNS name <host>.<job>, no extra Service; MindSpore takes only an IP address, so "
            "PS and Worker commands are wrapped to resolve the name when the container starts "
            "(they must set `command`).",
        ),
        click.option(
            "--gang-scheduler",
            type=click.Choice(["none", "volcano", "scheduler-plugins"]),
            default="none",
            show_default=True,
            help="Gang-schedule the job's pods with a PodGroup <job>: volcano = "
            "scheduling.volcano.sh PodGroup, pods on schedulerName volcano; scheduler-plugins "
            "= scheduling.x-k8s.io PodGroup, pods on scheduler-plugins-scheduler unless the "
            "template names one. Sized from runPolicy.schedulingPolicy (minAvailable, else "
            "every pod; minResources, else the pods' requests). --target volcano gangs itself.",
        ),
        click.option(
            "--kueue-queue",
            metavar="NAME",
            callback=_namespace,
            help="Submit the workloads to Kueue's LocalQueue NAME: labelled "
            "kueue.x-k8s.io/queue-name, for Kueue to admit (Kueue's webhook suspends them "
            "until then).",
        ),
        click.option(
            "--argocd-sync-waves",
            is_flag=True,
            help="Annotate objects with Argo CD sync waves: ConfigMaps, ServiceAccounts, Services "
            "and PodGroups in wave -1, "
            "workloads in wave 0, so Argo CD creates the Services the pods rely on first.",
        ),
        click.option(
            "--allow-env-override",
            is_flag=True,
            help="Keep a template's own value for a variable msgen sets (MS_*, device "
            "variables) instead of reporting it as an error.",
        ),
        click.option(
            "--gitops",
            is_flag=True,
            help="The output is applied by a GitOps tool (Argo CD, Flux) that re-creates what "
            "the cluster deletes: ttlSecondsAfterFinished is not rendered (the job would run "
            "again) and msgen's controller deletes no bare Pod. The Argo CD plugin sets it.",
        ),
        click.option(
            "--run-name",
            type=click.Choice(["job", "content"]),
            default="job",
            show_default=True,
            help="Names of the job's objects: job = after the job; content = after the job "
            "and a digest of its spec and options (<job>-<8 hex>), so a changed job is a new "
            "run instead of an update the API server refuses (a Job's template is immutable).",
        ),
        *cli_options(),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


#: Commands written in other modules, by name: the module whose `register(main)` adds them.
#: They load when named (or listed, by --help), so a render does not build their options.
ELSEWHERE = {
    "install-kustomize-plugin": "msgen.plugin_commands",
    "kustomize-plugin": "msgen.plugin_commands",
    "argocd-generate": "msgen.plugin_commands",
    "argocd-discover": "msgen.plugin_commands",
    "apply": "msgen.reconcile.commands",
    "diff": "msgen.reconcile.commands",
    "status": "msgen.reconcile.commands",
    "delete": "msgen.reconcile.commands",
    "controller": "msgen.reconcile.commands",
    "samples": "msgen.samples_command",
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

    \b
    Examples:
      msgen render samples/mindspore/widedeep-gpu-dataparallel.yaml > out.yaml
      msgen samples mindspore/lenet-cpu | msgen render
      msgen validate samples/
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

    PATH is a file, a directory (every *.yaml and *.yml below it, in sorted order,
    kustomization files skipped) or - for standard input, the default. Files may hold
    many documents; documents that are not a job kind msgen knows pass through
    unchanged, in place.

    Output goes to standard output, or to --output. When any input has an error, msgen
    prints every error to standard error, writes nothing and exits with status 1.

    \b
    Examples:
      msgen render job.yaml > out.yaml
      msgen render --target pod --namespace training jobs/ -o out.yaml
      cat job.yaml | msgen render --kube-version 1.29 --format json
      msgen render --target jobset --gang-scheduler volcano --kueue-queue team-a job.yaml
    """
    from .compile_command import render as render_to

    render_to(output, output_format, kwargs)


@main.command(context_settings=_CONTEXT)
@compile_options
def validate(**kwargs: Any) -> None:
    """Run every input check and report, without writing any output.

    Takes the same PATH arguments and options as render (the target and Kubernetes
    version decide some checks). Exits 0 when every input is valid, 1 otherwise.

    \b
    Example:
      msgen validate samples/ && echo valid
    """
    compilation = compile_paths(
        list(kwargs.pop("paths")),
        options_from(kwargs),
        sink=lambda objects: None,
        summary="msgen: invalid: {errors} error(s)",
    )
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

    from . import kinds
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
      msgen convert old-msjob.yaml > msjob.yaml
      msgen convert --in-place jobs/
    """
    from .convert import convert_paths

    status = convert_paths(list(paths), in_place)
    if status:
        raise SystemExit(status)


def run() -> None:
    """click's own handling, plus no traceback for a bug unless MSGEN_DEBUG is set."""
    guarded(lambda: main(standalone_mode=True))

