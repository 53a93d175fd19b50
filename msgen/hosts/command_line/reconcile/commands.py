"""`msgen apply`, `diff` and `delete`: the reconciler's command line (`status` and
`controller` are in their own modules; what they share is in `command_line`).

The Kubernetes client is imported only when one of these commands runs (`msgen-k8s[apply]`),
so `msgen render` and the plug-in hosts never load it.

Exit status: as `command_line` says (apply --wait: 0 the job succeeded, 1 it failed).
`msgen diff` exits as `kubectl diff`: 0 no difference, 1 differences, 2 an error.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from ...click_options import compile_options
from .command_line import CONTEXT as _CONTEXT
from .command_line import (
    EXIT_USAGE,
    cluster_options,
    connect,
    fail,
    follow_job,
    job_namespace,
    render_paths,
    rendered,
    require_client,
)
from .command_line import duration as _duration


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
    from .controller_command import controller
    from .status_command import status

    for command in (apply, diff, status, delete, controller):
        main.add_command(command)


@click.command(context_settings=_CONTEXT)
@compile_options
@cluster_options
@click.option("--prune", is_flag=True, help="Delete the set's members that are no longer rendered.")
@click.option("--applyset", "set_name", metavar="NAME", help="ApplySet parent Secret name (default: msgen-<job>).")
@click.option("--wait", is_flag=True, help="Follow the job until it succeeds or fails.")
@click.option("--timeout", callback=_duration, metavar="DURATION",
              help="Give up waiting after DURATION (90s, 10m, 2h; exit 3).")
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
      msgen apply job.yaml -n training --wait --timeout 2h   # needs a cluster and job.yaml
      msgen apply jobs/ --applyset team-a --prune   # needs a cluster and jobs/
    """
    client = connect(kwargs)
    from ....reconcile import applyset, kube
    from ....reconcile.run import Settings, Stop, apply_all, check_parent, preflight, resume_stopped
    from ....reconcile.run import prune as prune_members

    objects, namespace = rendered(kwargs, client, ask_server=True, say=click.echo)
    name = set_name or applyset.default_name(objects)
    if name is None:
        fail("these inputs hold several jobs: name their ApplySet with --applyset NAME", EXIT_USAGE)
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
        resume_stopped(client, settings)
        if prune:
            prune_members(client, members, set_id, namespace, previous + "," + applyset.group_kinds(members), settings)
            if not settings.dry_run:
                kube.apply(client, applyset.parent(name, namespace, members))
    except Stop as exc:
        fail(str(exc), exc.exit_code)
    except kube.KubeError as exc:
        fail(str(exc), 1)
    if wait and not settings.dry_run:
        from ....reconcile.actions import job_of

        jobs = sorted({job for o in objects if (job := job_of(o))})  # objects of no job (a ConfigMap) too
        for job in jobs:
            follow_job(client, job, namespace, timeout, started)


@click.command(context_settings=_CONTEXT)
@compile_options
@cluster_options
def diff(**kwargs: Any) -> None:
    """Show what `msgen apply` would change: a server-side dry run, diffed against the live
    objects. Exits as kubectl diff: 0 no difference, 1 differences, 2 an error.

    It renders for the cluster that is there (its version, the APIs it serves) with the
    render options `apply` takes.

    \b
    Examples:
      msgen diff job.yaml -n training   # needs a cluster and job.yaml
      msgen diff jobs/ --target jobset --context lab   # needs a cluster and jobs/
    """
    require_client()
    from ....reconcile import applyset, kube
    from ....reconcile.run import Stop, served_kinds
    from ....reconcile.run import diff as unified

    try:
        client = connect(kwargs)
        objects, namespace = rendered(kwargs, client, ask_server=True)
        name = applyset.default_name(objects)
        if name is not None:
            objects = [applyset.with_membership(o, applyset.applyset_id(name, namespace)) for o in objects]
        served_kinds(client, objects)
        text = unified(client, objects)
    except Stop as exc:
        fail(str(exc), 2)
    except kube.KubeError as exc:
        fail(str(exc), 2)
    except SystemExit as exc:  # input errors and usage are errors too: >1
        raise SystemExit(2 if exc.code else 0) from None
    sys.stdout.write(text)
    raise SystemExit(1 if text else 0)


@click.command(context_settings=_CONTEXT)
@compile_options
@click.option("--applyset", "set_name", metavar="NAME", help="Delete this ApplySet's members and parent.")
@click.option("--wait", type=click.BOOL, default=True, is_flag=False, flag_value=True, show_default=True,
              metavar="[=BOOL]", help="Return once the pods are gone (--wait=false: once deletion is asked, as kubectl).")
@click.option("--no-wait", "no_wait", is_flag=True, hidden=True)
@cluster_options
def delete(paths: tuple[str, ...], set_name: str | None, wait: bool, no_wait: bool, **kwargs: Any) -> None:
    """Delete every member of an ApplySet (workloads first), then its parent.

    The set is named by --applyset, or found from PATHs (msgen-<job> of the rendered job),
    in the namespace -n names, else the one the job's file names, else the kubeconfig's.
    It takes the render options `apply` takes, so the same options serve both.

    \b
    Examples:
      msgen delete job.yaml -n training   # needs a cluster and job.yaml
      msgen delete --applyset team-a -n training --wait=false   # needs a cluster
    """
    wait = wait and not no_wait
    client = connect(kwargs)
    from ....reconcile import applyset, kube
    from ....reconcile.run import Stop, check_parent, members, wait_gone

    objects = render_paths(list(paths), kwargs) if paths else []
    namespace = job_namespace(objects, kwargs["namespace"], client)
    if set_name is None:
        if not paths:
            fail("name the set: PATH... or --applyset NAME", EXIT_USAGE)
        set_name = applyset.default_name(objects)
        if set_name is None:
            fail("these inputs hold several jobs: name their ApplySet with --applyset NAME", EXIT_USAGE)
    try:
        live = check_parent(client, set_name, namespace)
        if live is None:
            fail(f"no ApplySet {set_name!r} in namespace {namespace!r}", 1)
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
        fail(str(exc), exc.exit_code)
    except kube.KubeError as exc:
        fail(str(exc), 1)
