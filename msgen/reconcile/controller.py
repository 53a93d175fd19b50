"""`msgen controller`: the run-time policies for every msgen job, however it was applied.

It watches (`informer`) the workloads labelled `app.kubernetes.io/managed-by: msgen` and the
pods labelled with a job name, in the namespaces it is given or all. On every change (and every
`resync` seconds, for TTLs that fall due with no change) it groups them by job and, for each
job carrying `msgen/run-policy`, computes its status (status.aggregate), carries out the due
policy actions (actions.due, the same engine as `msgen apply --wait`) and publishes the
status (`published`): the annotation `msgen/status` on the job's holder workload (a Service
of the job, with its Services watched too, once no workload is left), and an
Event on its workloads when the phase changes.

It keeps no state of its own: what it published is read back from the cluster, so a
restart loses nothing. With leader election (a Lease, `lease`), of several replicas only the
one holding the Lease acts; the others watch and wait. It never acts on a copy that is not
current: a watch that fails is logged, keeps the replica not ready (`Health`, read by the
Deployment's probes) and, with `--once`, makes the command fail.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from lightkube import Client

from ..model import run_policy
from ..targets.labels import JOB_NAME, MANAGED_BY
from . import actions, informer, kube, published, status, watch
from .publisher import publish
from .lease import Elector

STATUS_ANNOTATION = published.ANNOTATION


def group(objects: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Pure: (namespace, job) → the job's objects, for jobs with a workload msgen rendered."""
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for obj in objects:
        metadata = obj.get("metadata") or {}
        job = (metadata.get("labels") or {}).get(JOB_NAME)
        if job:
            found.setdefault((str(metadata.get("namespace")), str(job)), []).append(obj)
    return {key: objs for key, objs in found.items()
            if any(run_policy.ANNOTATION in ((o.get("metadata") or {}).get("annotations") or {})
                   for o in objs)}


class ClusterView:
    """Every msgen workload and every job's pods in `namespaces` (["*"]: all), kept current."""

    def __init__(self, client: Client, namespaces: list[str]) -> None:
        self.changed = threading.Event()
        kinds: list[tuple[str, str, dict[str, str | None]]] = [
            (v, k, {MANAGED_BY: "msgen"}) for v, k in [*watch.WORKLOADS, ("v1", "Service")] if k != "Pod"]
        kinds.append(("v1", "Pod", {JOB_NAME: None}))  # None: the label exists
        self.informers = [informer.Informer(client, v, k, ns, labels, self.changed).start()
                          for ns in namespaces for v, k, labels in kinds]

    def objects(self) -> list[dict[str, Any]]:
        return [o for i in self.informers for o in i.items()]

    def problems(self) -> list[str]:
        """What keeps a watch from being current, one line per watch, e.g.
        `watching Pod in every namespace: ... forbidden`."""
        return [f"watching {i.kind} in {_where(i.namespace)}: {i.problem}"
                for i in self.informers if i.problem and i.served]

    def synced(self) -> bool:
        return all(i.synced.is_set() for i in self.informers)

    def healthy(self) -> bool:
        """Every watch listed and current: what the readiness probe reports."""
        return all(i.healthy() for i in self.informers)

    def alive(self) -> bool:
        return all(i.alive() for i in self.informers)

    def stop(self) -> None:
        for each in self.informers:
            each.stop()


def _where(namespace: str) -> str:
    return "every namespace" if namespace == "*" else f"namespace {namespace}"


def reconcile_job(client: Client, namespace: str, job: str, objects: list[dict[str, Any]],
                  echo: Callable[[str], None]) -> status.JobStatus:
    """One job: status, due actions, published status and Event."""
    policy, workloads, pods = watch.select(job, namespace, objects)
    found = status.aggregate(policy, workloads, pods)
    services = [o for o in objects if o.get("kind") == "Service"]
    due = actions.due(policy, found, workloads, pods, datetime.now(timezone.utc), services)
    watch.carry_out(client, namespace, due, workloads, lambda line: echo(f"{namespace}/{job}: {line}"))
    gone = {(a.kind, a.name) for a in due if a.verb == "delete"}
    services = [o for o in services if (o["kind"], o["metadata"]["name"]) not in gone]
    if not found.finished and all(actions.stopped_by_policy(o) for o in workloads):
        return found  # what is left of a run that ended (its record went with its Worker Job)
    publish(client, policy, found, [o for o in workloads if (o["kind"], o["metadata"]["name"]) not in gone],
            echo, services)
    return found


def one_pass(client: Client, objects: list[dict[str, Any]], echo: Callable[[str], None],
             leading: Callable[[], bool]) -> None:
    """Every job once; a failing job never stops the others; nothing once leadership is lost."""
    for (ns, job), found in sorted(group(objects).items()):
        if not leading():
            return
        try:
            reconcile_job(client, ns, job, found, echo)
        except (kube.KubeError, watch.NotFound, run_policy.PolicyError) as exc:
            echo(f"{ns}/{job}: skipped: {exc}")


class Health:
    """What the probes read: ready while every watch is current; alive while the loop
    turns and its watches' threads run."""

    def __init__(self, resync: float) -> None:
        self.view: ClusterView | None = None
        self.turned = time.monotonic()
        #: a loop silent for longer than this is stuck (a pass waits at most `resync`)
        self.stuck_after = max(3 * resync, 90.0)

    def ready(self) -> bool:
        return self.view is not None and self.view.healthy()

    def alive(self) -> bool:
        if time.monotonic() - self.turned > self.stuck_after:
            return False
        return self.view is None or self.view.alive()


def run(client: Client, namespaces: list[str], *, resync: float, once: bool, echo: Callable[[str], None],
        elector: Elector | None = None, health: Health | None = None, sync_timeout: float = 60.0) -> None:
    """Until stopped: a pass on every change, and at least every `resync` seconds. No pass
    acts on watches that are not current; what keeps them so is logged when it begins and
    when it ends. With `once`, a watch or Lease that fails is an error (KubeError)."""
    health = health or Health(resync)
    if elector is not None:
        if once:
            if not elector.try_once():
                if elector.problem:
                    raise kube.KubeError(f"cannot take the Lease: {elector.problem}")
                echo(f"not leading: Lease {elector.namespace}/{elector.name} is held by another replica")
                return
    leading = elector.leading if elector is not None else (lambda: True)
    view = health.view = ClusterView(client, namespaces)
    if elector is not None and not once:
        elector.changed = view.changed
        elector.start()
    was_leading = False
    shown: set[str] = set()
    lease_problem: str | None = None
    started = time.monotonic()
    try:
        while True:
            view.changed.clear()
            health.turned = time.monotonic()
            problems = view.problems()
            if once and problems:
                raise kube.KubeError("the controller cannot watch what it acts on:\n  " + "\n  ".join(problems))
            for line in sorted(set(problems) - shown):
                echo(f"{line}; retrying")
            for line in sorted(shown - set(problems)):
                echo(f"{line.split(': ', 1)[0]}: working again")
            shown = set(problems)
            if elector is not None and elector.problem != lease_problem:
                lease_problem = elector.problem
                echo(f"Lease {elector.namespace}/{elector.name}: {lease_problem or 'working again'}")
            if once and not view.synced():
                if time.monotonic() - started > sync_timeout:
                    raise kube.KubeError(f"the controller's watches did not list within {sync_timeout:.0f}s")
                view.changed.wait(0.5)
                continue
            if once and elector is not None and not leading() and not elector.try_once():
                echo(f"not leading: Lease {elector.namespace}/{elector.name} is held by another replica")
                return
            now_leading = leading()
            if now_leading != was_leading and elector is not None:
                echo(f"{'leading' if now_leading else 'not leading'} (Lease {elector.namespace}/{elector.name}, "
                     f"identity {elector.identity})")
                was_leading = now_leading
            if now_leading and view.healthy():
                one_pass(client, view.objects(), echo, leading)
                if once:
                    return
            view.changed.wait(resync if view.synced() else min(resync, 2.0))
            time.sleep(0.2)  # one pass for a burst of events
    finally:
        view.stop()
        if elector is not None:
            elector.release()
