"""The `msgen` command.

Exit status: 0 ok (warnings allowed), 1 the input has errors, 2 the command line is wrong.
Errors go to stderr as `file:line:column: error: ...`; stdout gets the whole output or
nothing, so a generator host never sees a partial stream.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, Callable

import click

from . import __version__, versions
from .diagnostics import Diagnostic, distinct, report_lines
from .names import dns1123_problem
from .plan import Options
from .processes.cli import cli_options

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .pipeline import Compilation, Sink
    from .source import Document, Source

EXIT_INPUT = 1
EXIT_INTERNAL = 70

_CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _kube_version(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, int]:
    try:
        return versions.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _namespace(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        problem = dns1123_problem(value)
        if problem is not None:
            raise click.BadParameter(f"{value!r} {problem}")
    return value


def compile_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options every compiling command shares."""
    from .targets import NAMES

    decorators = [
        click.argument("paths", nargs=-1, metavar="[PATH]..."),
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
            "DNS name <host>.<job>, for MindSpore versions that accept a host name.",
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
            "kueue.x-k8s.io/queue-name and created suspended, for Kueue to admit.",
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
        *cli_options(),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def _options(kwargs: dict[str, Any]) -> Options:
    return Options(
        target=kwargs["target"],
        kube_version=kwargs["kube_version"],
        namespace=kwargs["namespace"],
        scheduler_address=kwargs["scheduler_address"],
        allow_env_override=kwargs["allow_env_override"],
        argocd_sync_waves=kwargs["argocd_sync_waves"],
        gang_scheduler=kwargs["gang_scheduler"],
        kueue_queue=kwargs["kueue_queue"] or None,
        launcher=kwargs["launcher"],
        rank_table=kwargs["rank_table"],
        shm_size=kwargs["shm_size"],
        accelerator_type=kwargs["accelerator_type"],
        recovery_volume=kwargs["recovery_volume"],
    )


@click.group(context_settings=_CONTEXT)
@click.version_option(__version__, "--version", prog_name="msgen")
def main() -> None:
    """Compile MindSpore training jobs into plain Kubernetes YAML.

    msgen does at render time what ms-operator did inside the cluster: it turns an MSJob
    (mindspore.gitee.com/v1) into Jobs or Pods, Services and the MindSpore cluster
    environment, so the output runs on any cluster with no operator installed.

    \b
    Examples:
      msgen render samples/mindspore/widedeep-gpu-dataparallel.yaml > out.yaml
      msgen validate samples/
      msgen schema MSJob
    """


@main.command(context_settings=_CONTEXT)
@compile_options
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), help="Write to FILE (whole or not at all)."
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
    if output is not None and not os.path.isdir(os.path.dirname(os.path.realpath(output))):
        raise click.BadParameter(
            f"no such directory: {os.path.dirname(output) or '.'}; accepted: a file in a "
            "directory that exists",
            param_hint="'--output'",
        )
    from .spool import Spool

    # Written job by job to a spool, shown only when every job compiled (see spool.py).
    with Spool(output_format) as spool:
        _compile(kwargs, spool.add)
        if output is None:
            spool.deliver()
        else:
            from .atomic_file import OutputError

            try:
                spool.deliver(output)
            except OutputError as exc:
                click.echo(f"msgen: cannot write the output: {exc}", err=True)
                raise SystemExit(EXIT_INPUT) from None


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        from .atomic_file import OutputError, write_whole

        try:
            write_whole(output, text)
        except OutputError as exc:
            click.echo(f"msgen: cannot write the output: {exc}", err=True)
            raise SystemExit(EXIT_INPUT) from None


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
    compilation = _compile(kwargs, lambda objects: None)
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


def _compile(kwargs: dict[str, Any], sink: Sink) -> Compilation:
    return compile_paths(list(kwargs.pop("paths")), _options(kwargs), sink=sink)


def compile_paths(
    given: list[str],
    options: Options,
    locate: Callable[[Document], Document] | None = None,
    sink: Sink | None = None,
) -> Compilation:
    """Compile `given` paths; report diagnostics; exit 1 on errors, else the Compilation.

    With `sink`, each document's objects go to it as they compile, files are read one at a
    time, and the Compilation keeps no objects (see pipeline.compile_stream).
    """
    from .inputs import MissingPath, expand_paths, open_source, read_source
    from .pipeline import compile_sources, compile_stream

    try:
        paths = expand_paths(given)
    except MissingPath as exc:
        raise click.BadParameter(f"no such file or directory: {exc}", param_hint="PATH") from None
    read_errors: list[Diagnostic] = []

    def sources() -> Iterator[Source]:
        for path in paths:
            source, error = (read_source if sink is None else open_source)(path)
            if error is not None:
                read_errors.append(error)
            if source is not None:
                yield source

    if sink is None:
        compilation = compile_sources(list(sources()), options, locate)
    else:
        compilation = compile_stream(sources(), options, sink, locate)
    compilation.diagnostics[:0] = read_errors
    if compilation.ok and not read_errors and compilation.documents == 0:
        shown = ", ".join(p if p != "-" else "<stdin>" for p in paths) or "the given directories"
        compilation.diagnostics.append(_no_documents(shown))
    report(compilation.diagnostics, compilation.sources)
    if not compilation.ok:
        raise SystemExit(EXIT_INPUT)
    return compilation


@main.command(context_settings=_CONTEXT)
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--in-place", "-i", is_flag=True, help="Rewrite each file (atomically) instead of printing.")
def convert(paths: tuple[str, ...], in_place: bool) -> None:
    """Rewrite older job files in today's format, keeping comments and key order.

    A 2020 kubeflow.org/v1 MSJob becomes a mindspore.gitee.com/v1 MSJob, an mlkube.io/v1beta1
    MxJob a kubeflow.org/v1 MXJob; other documents stay as they are. Each change is explained
    on standard error. PATH is a file, a directory or - for standard input, the default.

    \b
    Examples:
      msgen convert old-msjob.yaml > msjob.yaml
      msgen convert --in-place jobs/
    """
    from .convert import convert_paths

    status = convert_paths(list(paths), in_place)
    if status:
        raise SystemExit(status)


def _no_documents(where: str) -> Diagnostic:
    from .diagnostics import Severity

    return Diagnostic(
        Severity.ERROR,
        f"no YAML documents found in {where}; accepted: files holding at least one object",
    )


def report(diagnostics: list[Diagnostic], sources: dict[str, Any]) -> None:
    texts = {name: source.text for name, source in sources.items()}
    for line in report_lines(diagnostics, texts):
        click.echo(line, err=True)
    errors = sum(d.is_error for d in distinct(diagnostics))
    if errors:
        click.echo(f"msgen: {errors} error(s); nothing was written", err=True)


def run() -> None:
    """Entry point: click's own handling, plus no traceback for a bug unless MSGEN_DEBUG is set."""
    try:
        main(standalone_mode=True)
    except Exception as exc:  # pragma: no cover - only a bug in msgen gets here
        if os.environ.get("MSGEN_DEBUG"):
            raise
        click.echo(
            f"msgen: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in msgen; please report it with the input (MSGEN_DEBUG=1 shows "
            "the traceback).",
            err=True,
        )
        raise SystemExit(EXIT_INTERNAL) from None


# The plug-in hosts' commands (kustomize, Argo CD) and the reconciler's live in their own
# modules; the reconciler imports the Kubernetes client only when one of its commands runs.
from .plugin_commands import register as _register_plugins  # noqa: E402
from .reconcile.commands import register as _register_reconciler  # noqa: E402

_register_plugins(main)
_register_reconciler(main)
