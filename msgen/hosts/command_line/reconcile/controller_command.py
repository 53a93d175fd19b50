"""`msgen controller`: the run-time policies of every msgen job, in the cluster."""

from __future__ import annotations

from typing import Any, NoReturn

import click

from ....model.names import dns1123_problem
from .command_line import CONTEXT, EXIT_USAGE, INSTALL_APPLY, cluster_options, connect, fail


def _interrupted(signum: int, frame: object) -> NoReturn:
    """A pod is stopped with SIGTERM: stop as on Ctrl-C (the controller gives its Lease up)."""
    raise KeyboardInterrupt


def namespaces_of(given: tuple[str, ...]) -> list[str]:
    """`-n a -n b` or `-n a,b` → ["a", "b"]; none → ["*"], every namespace."""
    found = [name.strip() for each in given for name in each.split(",") if name.strip()]
    for name in found:
        problem = dns1123_problem(name)
        if problem is not None:
            raise click.BadParameter(f"{name!r} {problem}", param_hint="'--namespace'")
    return list(dict.fromkeys(found)) or ["*"]


@click.command(context_settings=CONTEXT)
@click.option("--namespace", "-n", "namespaces", multiple=True, metavar="NS[,NS...]",
              help="Watch only these namespaces (repeat, or separate with commas; default: every namespace). "
                   "Its RBAC may then be RoleBindings in these namespaces alone.")
@click.option("--interval", type=float, default=30.0, show_default=True, help="Seconds between passes when nothing changes (a pass runs on every change).")
@click.option("--once", is_flag=True, help="One pass, then exit (1 when a watch or the Lease fails).")
@click.option("--leader-elect/--no-leader-elect", default=True, show_default=True, help="Act only while holding the Lease (several replicas never act twice).")
@click.option("--lease-namespace", metavar="NS", help="The Lease's namespace (default: the pod's, or the kubeconfig's).")
@click.option("--lease-name", metavar="NAME", default="msgen-controller", show_default=True, help="The Lease's name.")
@click.option("--health-port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Serve /readyz (every watch current) and /healthz (the loop turns) on this port for "
                   "the kubelet's probes; 0: none.")
@click.option("--metrics-port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Serve /metrics (Prometheus) on this port, apart from the probes; 0: none.")
@click.option("--metrics-address", default="", metavar="ADDRESS",
              help="The address /metrics listens on (default: every address; 127.0.0.1 for a proxy "
                   "in the pod that authenticates scrapers).")
@click.option("--workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Jobs reconciled at once (their writes to the API server overlap); one job is never "
                   "reconciled by two at once.")
@cluster_options
def controller(namespaces: tuple[str, ...], interval: float, once: bool, leader_elect: bool,
               lease_namespace: str | None, lease_name: str, health_port: int, metrics_port: int,
               metrics_address: str, workers: int, **kwargs: Any) -> None:
    """Carry out the run-time policies of every job msgen rendered, however it was applied.

    Watches the workloads labelled app.kubernetes.io/managed-by=msgen and their pods, reads
    each job's policies from the workloads' msgen/run-policy annotation, and publishes each
    job's status in the annotation msgen/status (on one workload per job) and as Events.
    Of several replicas, only the one holding the Lease (coordination.k8s.io) acts. In a
    pod, it uses the pod's service account. A watch that fails is logged and keeps the
    replica not ready; nothing acts on a copy of the cluster that is not current.

    \b
    Examples:
      msgen controller --once   # needs a cluster
      msgen controller -n team-a,team-b --health-port 8080   # needs a cluster (runs until stopped)
    """
    import os
    import signal
    import socket
    import uuid

    watched = namespaces_of(namespaces)
    signal.signal(signal.SIGTERM, _interrupted)
    client = connect(kwargs)
    from ....reconcile import controller as loop
    from ....reconcile import kube, metrics
    from ....reconcile.lease import Elector

    health = loop.Health(interval)
    recorder = metrics.NOTHING
    if metrics_port:
        from .... import __version__
        from ....reconcile.probes import serve_metrics

        try:
            recorder = counted = metrics.Metrics(__version__, lease_name, workers)
        except ImportError as exc:
            fail(f"--metrics-port serves /metrics with prometheus_client, which is not installed ({exc}): "
                 f"{INSTALL_APPLY}", EXIT_USAGE)
        try:
            serve_metrics(counted.exposition, metrics_port, metrics_address)
        except OSError as exc:
            fail(f"--metrics-port {metrics_port}: {exc}", EXIT_USAGE)
        kube.recorder = recorder
    if health_port:
        from ....reconcile.probes import serve

        try:
            serve(health, health_port)
        except OSError as exc:
            fail(f"--health-port {health_port}: {exc}", EXIT_USAGE)
    elector = None
    if leader_elect:
        identity = f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        elector = Elector(client, str(lease_namespace or client.namespace), lease_name, identity)
    where = "every namespace" if watched == ["*"] else "namespaces " + ", ".join(watched)
    click.echo(f"msgen controller: watching {where} through {kube.where(client)}")
    try:
        loop.run(client, watched, resync=interval, once=once, echo=click.echo, elector=elector, health=health,
                 recorder=recorder, workers=workers)
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except kube.KubeError as exc:
        fail(str(exc), 1)
