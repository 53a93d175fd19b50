"""`msgen apply`, `diff`, `status` and `delete`: the reconciler's command line.

The Kubernetes client is imported only when one of these commands runs (`msgen[apply]`),
so `msgen render` and the plug-in hosts never load it.

Exit status: 0 done (apply --wait: the job succeeded); 1 the input has errors, the cluster
refused, or the job failed; 2 the command line is wrong; 3 --timeout passed first;
130 interrupted. `msgen diff` exits as `kubectl diff`: 0 no difference, 1 differences,
2 an error.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..cli import PATHS, _options, compile_options, compile_paths

if TYPE_CHECKING:
    from lightkube import Client

_CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)?$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    found = _DURATION.match(value)
    if not found:
        raise click.BadParameter(f"{value!r}; accepted: a duration such as 90s, 10m or 2h")
    return float(found.group(1)) * _UNITS[found.group(2)]


def cluster_options(func: Any) -> Any:
    for decorator in reversed([
        click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)."),
        click.option("--context", help="The kubeconfig context to use."),
    ]):  # fmt: skip
        func = decorator(func)
    return func


def _connect(kwargs: dict[str, Any]) -> Client:
    from .kube import KubeError, connect

    try:
        return connect(kwargs.pop("kubeconfig"), kwargs.pop("context"))
    except KubeError as exc:
        _fail(str(exc), 1)


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"msgen: error: {message}", err=True)
    raise SystemExit(code)


def _rendered(kwargs: dict[str, Any], client: Client) -> tuple[list[dict[str, Any]], str]:
    from .run import place

    compilation = compile_paths(list(kwargs.pop("paths")), _options(kwargs))
    own = {(o.get("metadata") or {}).get("namespace") for o in compilation.objects} - {None}
    # The job's own namespace, else -n, else the kubeconfig's; the ApplySet lives there too.
    namespace = str(kwargs["namespace"] or (own.pop() if len(own) == 1 else client.namespace))
    return place(compilation.objects, namespace), namespace


class _DryRun(click.Choice):  # type: ignore[type-arg]
    """kubectl's --dry-run choices; `client` is `msgen render`, which this error says."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "client":
            self.fail(
                "'client' is not accepted: a client-side dry run is `msgen render` (the same "
                "objects, nothing sent; `msgen diff` compares them with the cluster); "
                "accepted: none, server",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


def register(main: click.Group) -> None:
    for command in (apply, diff, status, delete, controller):
        main.add_command(command)


@click.command(context_settings=_CONTEXT)
@compile_options
@cluster_options
@click.option("--prune", is_flag=True, help="Delete the set's members that are no longer rendered.")
@click.option("--applyset", "set_name", help="ApplySet parent Secret name (default: msgen-<job>).")
@click.option("--wait", is_flag=True, help="Follow the job until it succeeds or fails.")
@click.option("--timeout", callback=_duration, help="Give up waiting after DURATION (exit 3).")
@click.option("--recreate", is_flag=True, help="Delete and recreate workloads whose immutable fields changed.")
@click.option("--dry-run", type=_DryRun(["none", "server"]), default="none", help="server: apply nothing, show what would change.")
@click.option("--force-conflicts", is_flag=True, help="Take over fields another field manager owns.")
def apply(prune: bool, set_name: str | None, wait: bool, timeout: float | None, recreate: bool,
          dry_run: str, force_conflicts: bool, **kwargs: Any) -> None:
    """Render exactly as `msgen render` does, then server-side apply (field manager msgen).

    Configuration, Services and PodGroups go before workloads. Every object joins an
    ApplySet (KEP-3659, kubectl's format), whose name is printed; --prune deletes the
    members no longer rendered and nothing else.

    \b
    Examples:
      msgen apply job.yaml -n training --wait --timeout 2h
      msgen apply jobs/ --applyset team-a --prune
    """
    from . import applyset, kube, watch
    from .run import Settings, Stop, apply_all, check_parent, preflight
    from .run import prune as prune_members

    client = _connect(kwargs)
    objects, namespace = _rendered(kwargs, client)
    name = set_name or applyset.default_name(objects)
    if name is None:
        _fail("these inputs hold several jobs: name their ApplySet with --applyset NAME", 2)
    set_id = applyset.applyset_id(name, namespace)
    members = [applyset.with_membership(o, set_id) for o in objects]
    settings = Settings(namespace, force_conflicts, dry_run == "server", recreate, click.echo)
    started = time.monotonic()
    try:
        preflight(client, members)
        live = check_parent(client, name, namespace)
        previous = ((live or {}).get("metadata", {}).get("annotations") or {}).get(applyset.GROUP_KINDS, "")
        click.echo(f"msgen: applyset {name} (Secret {namespace}/{name}, id {set_id})")
        if not settings.dry_run:  # the parent first, listing old and new kinds until pruned
            kube.apply(client, applyset.parent(name, namespace, members, previous))
        apply_all(client, members, settings)
        if prune:
            prune_members(client, members, set_id, namespace, previous + "," + applyset.group_kinds(members), settings)
            if not settings.dry_run:
                kube.apply(client, applyset.parent(name, namespace, members))
    except Stop as exc:
        _fail(str(exc), exc.exit_code)
    except kube.KubeError as exc:
        _fail(str(exc), 1)
    if wait and not settings.dry_run:
        jobs = sorted({o["metadata"]["labels"].get("training.kubeflow.org/job-name") for o in objects} - {None})
        for job in jobs:
            _follow(client, job, namespace, timeout, started)


def _follow(client: Client, job: str, namespace: str, timeout: float | None, started: float) -> None:
    from . import kube, watch

    echo = click.echo
    out = sys.stdout

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    lines = watch.Lines(write, out.isatty())
    try:
        found = watch.follow(client, job, namespace, timeout=timeout, echo=lines)
    except KeyboardInterrupt:
        lines.close()
        echo(f"\nmsgen: stopped watching; the job keeps running. Resume with:\n"
             f"  msgen status {job} -n {namespace} --watch", err=True)
        raise SystemExit(130) from None
    except TimeoutError as exc:
        _fail(f"timed out; the job keeps running: {exc}", watch.EXIT_TIMEOUT)
    except (watch.NotFound, kube.KubeError) as exc:
        _fail(str(exc), 1)
    for line in watch.summary(found, time.monotonic() - started):
        echo(line)
    if found.phase == "Failed":
        for failure in found.failures[:3]:
            echo(f"  last log lines of pod {failure.pod}:")
            for line in watch.last_logs(client, namespace, failure):
                echo(line)
        raise SystemExit(1)


@click.command(context_settings=_CONTEXT)
@compile_options
@cluster_options
def diff(**kwargs: Any) -> None:
    """Show what `msgen apply` would change: a server-side dry run, diffed against the live
    objects. Exits as kubectl diff: 0 no difference, 1 differences, 2 an error."""
    from . import applyset, kube
    from .run import Stop
    from .run import diff as unified

    try:
        client = _connect(kwargs)
        objects, namespace = _rendered(kwargs, client)
        name = applyset.default_name(objects)
        if name is not None:
            objects = [applyset.with_membership(o, applyset.applyset_id(name, namespace)) for o in objects]
        text = unified(client, objects)
    except Stop as exc:
        _fail(str(exc), 2)
    except kube.KubeError as exc:
        _fail(str(exc), 2)
    except SystemExit as exc:  # input errors and usage are errors too: >1
        raise SystemExit(2 if exc.code else 0) from None
    sys.stdout.write(text)
    raise SystemExit(1 if text else 0)


def _job_names(given: tuple[str, ...]) -> list[str]:
    """Each argument is a job name, or a file or directory of jobs (rendered to find them)."""
    import os

    from ..plan import Options
    from ..targets.labels import JOB_NAME

    out: list[str] = []
    for arg in given:
        if not os.path.exists(arg):
            out.append(arg)
            continue
        objects = compile_paths([arg], Options()).objects
        found = {str((o["metadata"].get("labels") or {}).get(JOB_NAME) or "") for o in objects}
        out += sorted(found - {""})
    return list(dict.fromkeys(out))


@click.command(context_settings=_CONTEXT)
@click.argument("jobs", nargs=-1, required=True, metavar="JOB-OR-PATH...")
@click.option("--namespace", "-n", help="The jobs' namespace (default: the kubeconfig's).")
@click.option("-o", "output", type=click.Choice(["table", "yaml", "json"]), default="table", show_default=True)
@click.option("--watch", is_flag=True, help="Follow until each job ends, carrying out its policies.")
@click.option("--timeout", callback=_duration, help="Give up watching after DURATION (exit 3).")
@cluster_options
def status(jobs: tuple[str, ...], namespace: str | None, output: str, watch: bool,
           timeout: float | None, **kwargs: Any) -> None:
    """The aggregated status of each job (as MSJob.status had it), from its live objects.

    Name a job, or give the file or directory it was applied from.

    \b
    Examples:
      msgen status ms-widedeep-ps -n training
      msgen status ms-widedeep-ps -n training -o yaml
      msgen status ms-widedeep-ps -n training --watch
    """
    import yaml

    from . import kube, published
    from . import status as aggregate
    from . import watch as watching

    client = _connect(kwargs)
    namespace = str(namespace or client.namespace)
    started = time.monotonic()
    shown: dict[str, Any] = {}
    for job in _job_names(jobs):
        if watch:
            _follow(client, job, namespace, timeout, started)
            continue
        try:
            policy, workloads, pods = watching.observe(client, job, namespace)
        except (watching.NotFound, kube.KubeError) as exc:
            ended = _published_end(client, job, namespace) if isinstance(exc, watching.NotFound) else None
            if ended is None:
                _fail(str(exc), 1)
            shown[job] = ended
            if output == "table":
                click.echo(f"{job}: {ended['phase']} (published by msgen controller; the job's workloads are gone)")
                click.echo("  conditions: " + _conditions(ended))
            continue
        found = aggregate.aggregate(policy, workloads, pods)
        # What `msgen controller` published (condition times, an end whose pods are gone)
        # merged with what the live objects say now.
        shown[job] = published.merged(published.read(workloads), found, None)
        if output == "table":
            click.echo(watching.progress(found) if shown[job]["phase"] == found.phase
                       else f"{job}: {shown[job]['phase']} (published by msgen controller)")
            click.echo("  conditions: " + _conditions(shown[job]))
            for line in watching.summary(found, 0)[1:]:
                click.echo(line)
    if output == "json":
        click.echo(json.dumps(shown, indent=2, sort_keys=True))
    elif output == "yaml":
        click.echo(yaml.safe_dump(shown, sort_keys=True), nl=False)


def _conditions(shown: dict[str, Any]) -> str:
    return ", ".join(
        f"{c['type']}" + (f" {c['lastTransitionTime']}" if c.get("lastTransitionTime") else "")
        + (f" ({c['reason']})" if c["type"] in ("Succeeded", "Failed") else "")
        for c in shown.get("conditions") or [])


def _published_end(client: Any, job: str, namespace: str) -> dict[str, Any] | None:
    """The status `msgen controller` left on a Service of a job whose workloads a policy
    deleted (bare Pods, cleanPodPolicy All); None when there is none."""
    from ..targets.labels import JOB_NAME
    from . import kube, published

    try:
        services = kube.listing(client, "v1", "Service", namespace, {JOB_NAME: job})
    except kube.KubeError:
        return None
    return published.read(services)


@click.command(context_settings=_CONTEXT)
@click.argument("paths", nargs=-1, metavar="[PATH]...", type=PATHS)
@click.option("--applyset", "set_name", help="Delete this ApplySet's members and parent.")
@click.option("--namespace", "-n", help="The set's namespace (default: the kubeconfig's).")
@click.option("--wait", type=click.BOOL, default=True, is_flag=False, flag_value=True, show_default=True,
              metavar="[=BOOL]", help="Return once the pods are gone (--wait=false: once deletion is asked, as kubectl).")
@click.option("--no-wait", "no_wait", is_flag=True, hidden=True)
@cluster_options
def delete(paths: tuple[str, ...], set_name: str | None, namespace: str | None, wait: bool,
           no_wait: bool, **kwargs: Any) -> None:
    """Delete every member of an ApplySet (workloads first), then its parent.

    The set is named by --applyset, or found from PATHs (msgen-<job> of the rendered job).
    """
    from . import applyset, kube
    from .run import Stop, check_parent, members, wait_gone

    wait = wait and not no_wait
    client = _connect(kwargs)
    namespace = str(namespace or client.namespace)
    if set_name is None:
        if not paths:
            _fail("name the set: PATH... or --applyset NAME", 2)
        compilation = compile_paths(list(paths), _options_for_delete())
        set_name = applyset.default_name(compilation.objects)
        if set_name is None:
            _fail("these inputs hold several jobs: name their ApplySet with --applyset NAME", 2)
    try:
        live = check_parent(client, set_name, namespace)
        if live is None:
            _fail(f"no ApplySet {set_name!r} in namespace {namespace!r}", 1)
        set_id = applyset.applyset_id(set_name, namespace)
        kinds = live["metadata"]["annotations"].get(applyset.GROUP_KINDS, "")
        found = members(client, set_id, namespace, kinds)
        for obj in applyset.prune_set(found, [], set_id):
            kube.delete(client, obj, wait_pods=wait)
            click.echo(f"{obj['kind'].lower()}/{obj['metadata']['name']} deleted")
        if wait:
            for obj in found:
                wait_gone(client, obj, timeout=300)
        kube.delete(client, live, wait_pods=False)
        click.echo(f"secret/{set_name} deleted (ApplySet parent)")
    except Stop as exc:
        _fail(str(exc), exc.exit_code)
    except kube.KubeError as exc:
        _fail(str(exc), 1)


def _interrupted(signum: int, frame: object) -> NoReturn:
    """A pod is stopped with SIGTERM: stop as on Ctrl-C (the controller gives its Lease up)."""
    raise KeyboardInterrupt


def _options_for_delete() -> Any:
    from ..plan import Options

    return Options()


@click.command(context_settings=_CONTEXT)
@click.option("--namespace", "-n", help="Watch one namespace (default: every namespace).")
@click.option("--interval", type=float, default=30.0, show_default=True, help="Seconds between passes when nothing changes (a pass runs on every change).")
@click.option("--once", is_flag=True, help="One pass, then exit.")
@click.option("--leader-elect/--no-leader-elect", default=True, show_default=True, help="Act only while holding the Lease (several replicas never act twice).")
@click.option("--lease-namespace", help="The Lease's namespace (default: the pod's, or the kubeconfig's).")
@click.option("--lease-name", default="msgen-controller", show_default=True, help="The Lease's name.")
@cluster_options
def controller(namespace: str | None, interval: float, once: bool, leader_elect: bool,
               lease_namespace: str | None, lease_name: str, **kwargs: Any) -> None:
    """Carry out the run-time policies of every job msgen rendered, however it was applied.

    Watches the workloads labelled app.kubernetes.io/managed-by=msgen and their pods, reads
    each job's policies from the workloads' msgen/run-policy annotation, and publishes each
    job's status in the annotation msgen/status (on one workload per job) and as Events.
    Of several replicas, only the one holding the Lease (coordination.k8s.io) acts. In a
    pod, it uses the pod's service account.
    """
    import socket
    import uuid

    from . import controller as loop
    from . import kube
    from .lease import Elector

    import os
    import signal

    signal.signal(signal.SIGTERM, _interrupted)
    client = _connect(kwargs)
    elector = None
    if leader_elect:
        identity = f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        elector = Elector(client, str(lease_namespace or client.namespace), lease_name, identity)
    try:
        loop.run(client, namespace or "*", resync=interval, once=once, echo=click.echo, elector=elector)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except kube.KubeError as exc:
        _fail(str(exc), 1)
