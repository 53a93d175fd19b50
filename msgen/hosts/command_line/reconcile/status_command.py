"""`msgen status`: a job's aggregated status (as MSJob.status had it), from its live objects
and what `msgen controller` published."""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import click

from ....model.exit_status import EXIT_INPUT
from ...click_options import render_options
from .command_line import (
    CONTEXT,
    cluster_options,
    connect,
    duration,
    fail,
    follow_job,
    job_namespace,
    render_paths,
)

if TYPE_CHECKING:
    from lightkube import Client


def jobs_named(given: tuple[str, ...], kwargs: dict[str, Any], client: Any) -> list[tuple[str, str]]:
    """(job, namespace) for each argument: a job name (in -n, else the kubeconfig's
    namespace), or a file or directory of jobs, rendered with the render options given to
    find them (in -n, else the namespace the file names, else the kubeconfig's)."""
    from ....targets.labels import JOB_NAME

    out: list[tuple[str, str]] = []
    for arg in given:
        if not os.path.exists(arg):
            out.append((arg, job_namespace([], kwargs["namespace"], client)))
            continue
        objects = render_paths([arg], kwargs)
        by_job: dict[str, list[dict[str, Any]]] = {}
        for obj in objects:
            name = str((obj["metadata"].get("labels") or {}).get(JOB_NAME) or "")
            if name:
                by_job.setdefault(name, []).append(obj)
        out += [(name, job_namespace(found, kwargs["namespace"], client)) for name, found in sorted(by_job.items())]
    return list(dict.fromkeys(out))


@click.command(context_settings=CONTEXT)
@click.argument("jobs", nargs=-1, required=True, metavar="JOB-OR-PATH...")
@click.option("-o", "output", type=click.Choice(["table", "yaml", "json"]), default="table", show_default=True)
@click.option("--watch", is_flag=True, help="Follow until each job ends, carrying out its policies.")
@click.option("--timeout", callback=duration, metavar="DURATION",
              help="Give up watching after DURATION (90s, 10m, 2h; exit 3).")
@render_options
@cluster_options
def status(jobs: tuple[str, ...], output: str, watch: bool, timeout: float | None, **kwargs: Any) -> None:
    """The aggregated status of each job (as MSJob.status had it), from its live objects.

    Name a job, or give the file or directory it was applied from (with the render options
    it was applied with: `apply` and `status` accept the same).

    \b
    Examples:
      msgen status ms-widedeep-ps -n training   # needs a cluster
      msgen status ms-widedeep-ps -n training -o yaml   # needs a cluster
      msgen status job.yaml --watch   # needs a cluster and job.yaml
    """
    import yaml

    client = connect(kwargs)
    from ....model import run_policy
    from ....reconcile import kube, published, snapshot
    from ....reconcile import status as aggregate
    from ....reconcile import watch as watching

    started = time.monotonic()
    shown: dict[str, Any] = {}
    named = jobs_named(jobs, kwargs, client)
    if watch:
        for job, namespace in named:
            follow_job(client, job, namespace, timeout, started)
        return
    try:  # a few lists per namespace for every job named, not a few per job
        objects = snapshot.listed(client, named, list(watching.WORKLOADS))
    except kube.KubeError as exc:
        fail(str(exc), EXIT_INPUT)
    services = _services(client, named)
    ends = {key: end for key in named if not _has_workload(objects[key])
            if (end := published.read(services[key])) is not None}
    for job, namespace in named:
        try:
            policy, workloads, pods = watching.select(job, namespace, objects[(job, namespace)])
        except (watching.NotFound, run_policy.PolicyError) as exc:
            ended = ends.get((job, namespace))
            if ended is None:
                fail(str(exc), EXIT_INPUT)
            shown[job] = ended
            if output == "table":
                click.echo(f"{job}: {ended['phase']} (published by msgen controller; the job's workloads are gone)")
                click.echo("  conditions: " + _conditions(ended))
            continue
        found = aggregate.aggregate(policy, workloads, pods)
        # What `msgen controller` published (condition times, an end whose pods are gone,
        # on a workload or, once none is left to hold it, on a Service) for this run,
        # merged with what the live objects say now.
        record = published.read([*workloads, *services[(job, namespace)]], workloads)
        shown[job] = published.merged(record, found, None)
        if output == "table":
            _table(client, namespace, found, shown[job], pods)
    if output == "json":
        click.echo(json.dumps(shown, indent=2, sort_keys=True))
    elif output == "yaml":
        click.echo(yaml.safe_dump(shown, sort_keys=True), nl=False)


def _table(client: Client, namespace: str, found: Any, shown: dict[str, Any], pods: list[dict[str, Any]]) -> None:
    """Progress, conditions, why it ended, each failed pod and its last log lines, the pods a
    lost node holds."""
    from datetime import datetime, timezone

    from ....reconcile import stuck_pods
    from ....reconcile import watch as watching

    click.echo(watching.progress(found) if shown["phase"] == found.phase
               else f"{found.job}: {shown['phase']} (published by msgen controller)")
    click.echo("  conditions: " + _conditions(shown))
    last = (shown.get("conditions") or [{}])[-1]
    if last.get("type") in ("Succeeded", "Failed") and last.get("message"):
        click.echo(f"  {last['type'].lower()}: {last.get('reason')}: {last['message']}")
    for line in watching.summary(found, 0)[1:]:
        click.echo(line)
    for line in stuck_pods.stuck(pods, datetime.now(timezone.utc)):
        click.echo(f"  stuck: {line}")
    if shown["phase"] == "Failed":
        for failure in found.failures[:3]:
            click.echo(f"  last log lines of pod {failure.pod}:")
            for line in watching.last_logs(client, namespace, failure):
                click.echo(line)


def _conditions(shown: dict[str, Any]) -> str:
    return ", ".join(
        f"{c['type']}" + (f" {c['lastTransitionTime']}" if c.get("lastTransitionTime") else "")
        + (f" ({c['reason']})" if c["type"] in ("Succeeded", "Failed") else "")
        for c in shown.get("conditions") or [])


def _has_workload(objects: list[dict[str, Any]]) -> bool:
    from ....model import run_policy

    return any(run_policy.ANNOTATION in ((o.get("metadata") or {}).get("annotations") or {}) for o in objects)


def _services(client: Any, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The Services of each job, where `msgen controller` leaves a job's published status
    once no workload holds it (bare Pods, cleanPodPolicy All; a TTL that deleted the Jobs);
    none where they cannot be listed (a user allowed to read the workloads only)."""
    from ....reconcile import kube, snapshot

    if not keys:
        return {}
    try:
        return snapshot.listed(client, keys, [("v1", "Service")])
    except kube.KubeError:
        return {key: [] for key in keys}
