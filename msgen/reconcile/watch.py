"""Following a job on the cluster: its status, its progress, and the policy actions due.

Used by `msgen apply --wait` and `msgen status --watch` (and the controller's loop). The
job's pods, workloads and Events are watched (`informer`: list, then watch from its
resourceVersion, relist on 410 Gone), so a change shows when it happens; the decisions then
run on the complete local copies. The job's objects are found by the label
`training.kubeflow.org/job-name`, its policies in the workloads' `msgen/run-policy`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from lightkube import Client

from ..model import run_policy
from ..model.run_policy import JobPolicy
from ..targets import facts_of
from ..targets.labels import JOB_NAME
from . import actions, informer, kube, ownership, published, snapshot, status, stuck_pods
from .witness import Witness

#: The workload kinds msgen renders, as (apiVersion, kind).
WORKLOADS = (
    ("batch/v1", "Job"), ("apps/v1", "StatefulSet"), ("v1", "Pod"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"), ("batch.volcano.sh/v1alpha1", "Job"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
)  # fmt: skip
#: The Jobs a JobSet made that carry no label of msgen's (`--target jobset`; those of the
#: JobSet Trainer builds for a TrainJob carry them): selected by their JobSet's name (the
#: job's name), without the job-name label, so that no Job is watched twice.
JOBSET_JOBS: dict[str, Any] = {ownership.JOBSET_NAME_LABEL: None, JOB_NAME: kube.ABSENT}
#: Exit status of --wait / --watch when --timeout passes first (1 is a failed job).
#: Event reasons that say why a pod waits: the scheduler's, the volume controllers', and the
#: kubelet's for images and containers (it records a failed pull as "Failed", the back-off
#: after it as "BackOff"; ErrImagePull and ImagePullBackOff are container waiting reasons).
_PENDING_REASONS = ("FailedScheduling", "FailedMount", "FailedAttachVolume", "FailedCreate",
                    "Failed", "BackOff", "InspectFailed", "ErrImageNeverPull")
#: Container waiting reasons that are only the normal way to Running.
_STARTING = ("ContainerCreating", "PodInitializing")


class NotFound(Exception):
    pass


def observe(
    client: Client, job: str, namespace: str
) -> tuple[JobPolicy, list[dict[str, Any]], list[dict[str, Any]]]:
    """The job's policy, workloads and pods as the cluster has them now (one list each)."""
    return select(job, namespace, snapshot.listed(client, [(job, namespace)], list(WORKLOADS))[(job, namespace)])


def select(
    job: str, namespace: str, objects: list[dict[str, Any]]
) -> tuple[JobPolicy, list[dict[str, Any]], list[dict[str, Any]]]:
    """Pure: from every object labelled with the job's name (pods and workloads of all
    kinds), its policy, its workloads (those of the kind and name msgen renders carrying
    the policy) and its pods: only those its workloads control, or its own bare Pods as
    rendered (`ownership`), whatever labels and annotations other objects carry. Raises
    NotFound without a workload, PolicyError when its workloads carry different policies or
    names of two renderings (one of them is not the job's: nothing is done)."""
    pods = [o for o in objects if o.get("kind") == "Pod" and o.get("apiVersion") == "v1"]
    carrying = [o for o in objects if run_policy.ANNOTATION in _annotations(o)]
    workloads: list[dict[str, Any]] = []
    forms: set[str] = set()
    unreadable: run_policy.PolicyError | None = None
    for obj in carrying:
        try:
            form = ownership.rendered_workload(run_policy.parse(_annotations(obj)[run_policy.ANNOTATION]), job, obj)
        except run_policy.PolicyError as exc:
            unreadable = unreadable or exc
            continue
        if form is not None:
            workloads.append(obj)
            forms.add(form)
    if not workloads:
        if unreadable is not None:
            raise unreadable
        raise NotFound(f"no workload of job {job!r} in namespace {namespace!r} carries "
                       f"{run_policy.ANNOTATION}" + (" as msgen renders it" if carrying else ""))
    texts = sorted({str(ownership.policy_text(o)) for o in workloads})
    if len(texts) != 1 or len(forms) != 1:
        what = f"{len(texts)} different {run_policy.ANNOTATION} annotations" if len(texts) != 1 \
            else "names of both one workload per role and one per pod"
        raise ownership.Disagreeing(
            f"the workloads of job {job!r} in namespace {namespace!r} carry {what}; nothing is done for it")
    policy = run_policy.parse(texts[0])
    pods = ownership.owned_pods(policy, texts[0], workloads, objects, pods)
    if facts_of(policy.target).bare_pods:
        workloads = [o for o in workloads if o in pods]
    return policy, workloads, pods


class JobView:
    """The job's pods, workloads and Services and the namespace's Events, each kept current
    by a watch."""

    def __init__(self, client: Client, job: str, namespace: str) -> None:
        self.job = job
        self.namespace = namespace
        self.changed = threading.Event()
        labels = {JOB_NAME: job}
        self.objects = [informer.Informer(client, v, k, namespace, labels, self.changed).start()
                        for v, k in WORKLOADS]
        self.objects.append(informer.Informer(client, "batch/v1", "Job", namespace,
                                              {**JOBSET_JOBS, ownership.JOBSET_NAME_LABEL: job}, self.changed).start())
        self.events = informer.Informer(client, "v1", "Event", namespace, {}, self.changed).start()
        self.services = informer.Informer(client, "v1", "Service", namespace, labels, self.changed).start()
        late = informer.wait_synced([*self.objects, self.events, self.services], timeout=60)
        if late:
            self.stop()
            raise kube.KubeError("; ".join(f"{i.kind}: {i.problem or 'no list within 60s'}" for i in late))

    def observe(self) -> tuple[JobPolicy, list[dict[str, Any]], list[dict[str, Any]]]:
        """The job as the watches have it; KubeError when the server refuses a watch (a
        watch that is only interrupted is retried: see `problems`)."""
        refused = [i.problem for i in self.objects if i.refused and i.problem]
        if refused:
            raise kube.KubeError(refused[0])
        return select(self.job, self.namespace, [o for i in self.objects for o in i.items()])

    def problems(self) -> list[str]:
        """Watches being retried (a dropped connection, a server that does not answer)."""
        return [f"watching {i.kind}: {i.problem}" for i in [*self.objects, self.services]
                if i.problem and i.served and not i.refused]

    def stop(self) -> None:
        for each in [*self.objects, self.events, self.services]:
            each.stop()


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def progress(found: status.JobStatus) -> str:
    roles = "  ".join(
        f"{role}: {c.pending} pending, {c.running} running, {c.succeeded} succeeded, {c.failed} failed"
        for role, c in found.replicas.items()
    )
    return f"{found.job}: {found.phase}  {roles}"


def pending_reasons(events: list[dict[str, Any]], pods: list[dict[str, Any]]) -> list[str]:
    """Why pods wait, from the cluster's events (FailedScheduling, image pulls, volumes) and
    from their containers' waiting states (ErrImagePull, ImagePullBackOff,
    CreateContainerConfigError: a missing Secret or ConfigMap)."""
    waiting = {p["metadata"]["name"] for p in pods if (p.get("status") or {}).get("phase") == "Pending"}
    if not waiting:
        return []
    out = []
    for event in sorted(events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or "")):
        involved = event.get("involvedObject") or {}
        if involved.get("name") in waiting and event.get("reason") in _PENDING_REASONS:
            out.append(f"pod {involved['name']}: {event['reason']}: {event.get('message', '').strip()}")
    for pod in pods:
        if pod["metadata"]["name"] not in waiting:
            continue
        st = pod.get("status") or {}
        for container in [*(st.get("initContainerStatuses") or []), *(st.get("containerStatuses") or [])]:
            state = (container.get("state") or {}).get("waiting") or {}
            if state.get("reason") and state["reason"] not in _STARTING:
                message = f": {state['message'].strip()}" if state.get("message") else ""
                out.append(f"pod {pod['metadata']['name']} container {container.get('name')}: "
                           f"{state['reason']}{message}")
    return list(dict.fromkeys(out))


def carry_out(client: Client, namespace: str, due: list[actions.Action],
              workloads: list[dict[str, Any]], echo: Callable[[str], None],
              done: Callable[[actions.Action, bool], None] | None = None) -> None:
    """Do the due policy actions; each is idempotent, so a repeat after a restart is harmless.
    `done` is told of each action's outcome (the first that fails raises KubeError)."""
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in workloads}
    for action in due:
        obj = {"apiVersion": action.api_version, "kind": action.kind,
               "metadata": {"name": action.name, "namespace": namespace}}
        echo(f"policy: {action.describe()}")
        try:
            if action.verb == "delete":
                kube.delete(client, obj, wait_pods=False)
            elif action.verb == "suspend":
                kube.merge_patch(client, obj, actions.suspend_patch(action, datetime.now(timezone.utc)))
            elif action.verb == "complete":
                kube.create(client, actions.volcano_command(by_name[(action.kind, action.name)]))
        except kube.KubeError:
            if done is not None:
                done(action, False)
            raise
        if done is not None:
            done(action, True)


def record_end(client: Client, policy: JobPolicy, found: status.JobStatus, due: list[actions.Action],
               workloads: list[dict[str, Any]], services: list[dict[str, Any]],
               echo: Callable[[str], None]) -> None:
    """Publish the job's end as `msgen controller` does (annotation msgen/status, an Event),
    on what the due actions keep, so `msgen status` still reads it after the policies
    removed the pods. Best effort: a user allowed to apply but not to record is told."""
    from .publisher import publish

    gone = {(a.kind, a.name) for a in due if a.verb == "delete"}
    kept = [o for o in workloads if (o["kind"], o["metadata"]["name"]) not in gone]
    try:
        publish(client, policy, found, kept, lambda line: None,
                [o for o in services if (o["kind"], o["metadata"]["name"]) not in gone])
    except kube.KubeError as exc:
        echo(f"  (the job's end is not recorded on the cluster: {exc})")


class Lines:
    """Progress redrawn in place on a terminal, one line per change otherwise; other lines
    (policy actions, pending reasons) always go on lines of their own."""

    def __init__(self, write: Callable[[str], None], terminal: bool) -> None:
        self.write = write
        self.terminal = terminal
        self.open = False

    def progress(self, line: str) -> None:
        if self.terminal:
            self.write("\r\033[K" + line)
            self.open = True
        else:
            self.write(line + "\n")

    def __call__(self, line: str) -> None:
        self.close()
        self.write(line + "\n")

    def close(self) -> None:
        if self.open:
            self.write("\n")
            self.open = False


def follow(
    client: Client,
    job: str,
    namespace: str,
    *,
    timeout: float | None,
    echo: Lines,
    act: bool = True,
    resync: float = 10.0,
    witness: Witness | None = None,
) -> status.JobStatus:
    """Follow the job until it ends (or `timeout`): progress on each change, the reasons
    pods wait, and the due policy actions. Wakes on every watched change, and at least
    every `resync` seconds (a TTL falls due with no change on the cluster). `witness`
    keeps what the cluster may not (failed containers' logs, pods deleted while running)."""
    started = time.monotonic()
    view = JobView(client, job, namespace)
    shown = ""
    reasons_shown: set[str] = set()
    try:
        while True:
            view.changed.clear()
            policy, workloads, pods = view.observe()
            found = status.aggregate(policy, workloads, pods)
            # The end published for this run, which what is left of it may no longer show.
            end = published.ended(found, published.read([*workloads, *view.services.items()], workloads))
            if witness is not None:
                witness.saw(pods)
                witness.explain(found)
            line = progress(found)
            if line != shown:
                echo.progress(line)
                shown = line
            for reason in [*pending_reasons(view.events.items(), pods), *view.problems(),
                           *stuck_pods.stuck(pods, datetime.now(timezone.utc))]:
                if reason not in reasons_shown:
                    echo(f"  waiting: {reason}; retrying" if reason.startswith("watching ") else f"  waiting: {reason}")
                    reasons_shown.add(reason)
            if act:
                due = actions.due(policy, found, workloads, pods, datetime.now(timezone.utc),
                                  view.services.items(), end)
                if end is not None:
                    record_end(client, policy, found, due, workloads, view.services.items(), echo)
                carry_out(client, namespace, due, workloads, echo)
            if end is not None:
                echo.close()
                return end
            left = None if timeout is None else timeout - (time.monotonic() - started)
            if left is not None and left <= 0:
                echo.close()
                raise TimeoutError(line)
            view.changed.wait(resync if left is None else min(resync, left))
            time.sleep(0.05)  # one wake for a burst of events
    finally:
        view.stop()


def summary(found: status.JobStatus, elapsed: float) -> list[str]:
    lines = [f"{found.job}: {found.phase} after {elapsed:.0f}s"]
    if found.conditions:
        last = found.conditions[-1]
        lines[0] += f" ({last.reason}{': ' + last.message if last.message else ''})"
    for failure in found.failures:
        where = f" container {failure.container}" if failure.container else ""
        code = f" exit code {failure.exit_code}" if failure.exit_code is not None else ""
        again = ", restarted in place" if failure.previous or failure.restarted else ""
        lines.append(f"  failed: pod {failure.pod}{where}{code} ({failure.reason}{again})")
    return lines


def last_logs(client: Client, namespace: str, failure: status.PodFailure, lines: int = 10) -> list[str]:
    """The failed container's last log lines (the failed instance's, for a container
    restarted in place), or one line saying there are none (its node is gone, or no
    kubelet serves it). Not retried: a summary must not hang on it."""
    try:
        found = kube.pod_log(client, namespace, failure.pod, failure.container, lines, failure.previous)
    except kube.KubeError as exc:
        return [f"    (no log lines: {exc})"]
    return [f"    | {line}" for line in found] or ["    (no log lines)"]
