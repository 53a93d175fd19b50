"""Which run-time policy actions are due for a job, decided from plain data.

One engine for both hosts (`msgen apply --wait` and `msgen controller`). Each action is
idempotent and says why it is due, so a host can log it and do it again after a restart
without harm. What the engine does where a target cannot:

- The job ended (by `status.aggregate`) and `cleanPodPolicy` is `Running` or `All`:
  Jobs still active are **suspended** (the Job controller then removes their pods and keeps
  the Job and its history; deleting the pods alone would make it start new ones), and
  marked `msgen/stopped-at` with the job's end, so that their TTL can be kept and a new run
  can resume them (`run.resume_stopped`). Bare
  Pods still Pending or Running are deleted. With `All`, finished pods are deleted too.
  JobSets and Volcano Jobs delete their running pods themselves; their finished pods go
  with `All`. `None` leaves everything as it is.
- Success by worker 0 where the workload cannot end on it: a Volcano Job gets a Volcano
  `Command` with action `CompleteJob` (bus.volcano.sh/v1alpha1), the way `vcctl` ends a
  job; Jobs and bare Pods are stopped by the clean-up above.
- `ttlSecondsAfterFinished` on bare Pods: once that long after the job ended, every object
  of the job is deleted (Jobs, JobSets and Volcano Jobs have their own TTL), the one that
  keeps the job's published end last, once the rest is gone (`_keeping_the_end`); the TTL
  falls due from that end when what is left no longer shows it. On
  `indexed-job` Kubernetes deletes the finished Jobs; a Job the policy suspended never
  finishes, so it is deleted here once that long after its `msgen/stopped-at`: the job's
  Jobs go together, and applying the job again runs all of it.
- Nothing a GitOps tool applied is deleted: Argo CD (self-heal) and Flux create a missing
  object again, so deleting a bare Pod, or a job's objects at its TTL, would run the training
  again. Such an object has no owner and was rendered for a GitOps tool (`gitops` in its
  policy) or carries the tool's tracking mark (Argo CD's `argocd.argoproj.io/tracking-id`,
  Flux's `kustomize.toolkit.fluxcd.io/name` or `helm.toolkit.fluxcd.io/name` label); it stays.
- A Job suspended at the end carries `msgen/stopped` (why), so that a health check tells it
  from a Job that waits to start (overlays/argocd reads it as Healthy), `msgen/stopped-at`
  (when the job ended), for its TTL, and `msgen/stopped-generation` (the generation of the run
  it stopped: the suspension makes another, and the run's Events are named by its own,
  `run_generation`).
- No retries are invented: a bare Pod that failed is not recreated (it fails the job, as
  with `backoffLimit: 0`), and `restartPolicy: ExitCode` on bare Pods runs as `Never`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..model.run_policy import JobPolicy
from ..targets import facts_of
from ..targets.labels import JOB_NAME
from . import published
from .published import ANNOTATION as PUBLISHED
from .status import JobStatus, pod_role

#: What a GitOps tool that re-creates missing objects marks them with.
TRACKING_ANNOTATIONS = ("argocd.argoproj.io/tracking-id",)
TRACKING_LABELS = ("kustomize.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/name")
#: On a Job the reconciler suspended because its training job ended: the reason.
STOPPED_ANNOTATION = "msgen/stopped"
#: ... and when the job ended.
STOPPED_AT = "msgen/stopped-at"
#: ... and the generation it had then (the suspension is a change of its spec: a new one).
STOPPED_GENERATION = "msgen/stopped-generation"
#: The policies an action carries out (`Action.policy`).
CLEAN, TTL = "cleanPodPolicy", "ttlSecondsAfterFinished"


@dataclass(frozen=True)
class Action:
    """`verb` on the object (`api_version`, `kind`, `name`): delete, suspend or complete."""

    verb: str
    api_version: str
    kind: str
    name: str
    reason: str
    #: suspend: the job's end, written to STOPPED_AT
    at: str | None = None
    #: the policy that asks for it: cleanPodPolicy, successPolicy or ttlSecondsAfterFinished
    policy: str = ""
    #: suspend: the Job's generation before it, written to STOPPED_GENERATION
    generation: str | None = None

    def describe(self) -> str:
        return f"{self.verb} {self.kind} {self.name}: {self.reason}"


def due(
    policy: JobPolicy,
    status: JobStatus,
    workloads: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    now: datetime,
    services: list[dict[str, Any]] | None = None,
    end: JobStatus | None = None,
) -> list[Action]:
    """The actions due now. Nothing is due before the job ends. `services`: the job's
    Services, which a bare-Pod job's TTL deletes with its pods (the operator's garbage
    collector deleted them with the MSJob). `end`: the job's end as published for this run
    (`published.ended`), from which the TTL falls due when what is left no longer shows it.
    No deletion leaves the job's remains without the object that keeps its end (`_keeping_the_end`)."""
    stopped = _stopped_ttl(policy, workloads, now)
    out: list[Action] = []
    facts = facts_of(policy.target)
    if status.finished and facts.completed_by_command and status.phase == "Succeeded":
        out += [
            Action("complete", o["apiVersion"], o["kind"], _name(o), "worker success ends the job",
                   policy="successPolicy")
            for o in workloads
            if _volcano_running(o)
        ]
    if status.finished and policy.clean_pod_policy in ("Running", "All"):
        out += _clean(policy, status, workloads, pods)
    over = status if status.finished else end
    ended = _parse_time(over.completion_time) if over is not None and over.finished else None
    if facts.bare_pods and policy.ttl_seconds_after_finished is not None and ended is not None:
        if now >= ended + timedelta(seconds=policy.ttl_seconds_after_finished):
            reason = f"ttlSecondsAfterFinished {policy.ttl_seconds_after_finished} passed"
            out = [Action("delete", o["apiVersion"], o["kind"], _name(o), reason, policy=TTL)
                   for o in [*workloads, *pods, *(services or [])]
                   if not _deleting(o) and not reapplied(policy, o)]
    return _keeping_the_end(policy, _unique(out + stopped), workloads, pods, services or [])


def _keeping_the_end(policy: JobPolicy, out: list[Action], workloads: list[dict[str, Any]],
                     pods: list[dict[str, Any]], services: list[dict[str, Any]]) -> list[Action]:
    """`out` less the deletion of the object that keeps the job's end (`published.keeper`)
    while anything else of the job is left, when what these deletions leave has no keeper
    of its own to take the end (it moves there first, as it was). The TTL deletes every
    object of a bare-Pod job: deleted with the rest, the keeper went first while pods were
    still terminating (their phase still Running), or while a deletion failed (the API
    server restarting); what was left read as running again, for the same run. Kept until
    the rest is gone (not only being deleted), it goes last."""
    deleting = {(a.kind, a.name) for a in out if a.verb == "delete"}
    if not deleting:
        return out
    everything = {(str(o.get("kind")), _name(o)): o for o in [*workloads, *pods, *services]}
    staying = {key for key, o in everything.items() if key not in deleting and not _deleting(o)}
    if published.keeper(policy, [o for o in workloads if (o.get("kind"), _name(o)) in staying],
                        [o for o in services if (o.get("kind"), _name(o)) in staying]) is not None:
        return out
    last = published.keeper(policy, workloads, services)
    key = None if last is None else (str(last.get("kind")), _name(last))
    if key is None or key not in deleting or set(everything) == {key}:
        return out  # nothing keeps the end now, or nothing else is left: it goes too
    return [a for a in out if not (a.verb == "delete" and (a.kind, a.name) == key)]


def ttl_expiries(policy: JobPolicy, status: JobStatus, workloads: list[dict[str, Any]],
                 end: JobStatus | None = None) -> list[datetime]:
    """When the job's `ttlSecondsAfterFinished` falls due for msgen to act on (bare Pods: that
    long after the job ended, `status` or its published `end`; each Job cleanPodPolicy
    suspended: after its STOPPED_AT), so a host can come back then rather than at its next
    pass. `due` decides what is due then."""
    ttl = policy.ttl_seconds_after_finished
    if ttl is None:
        return []
    facts = facts_of(policy.target)
    ended = status if status.finished else end
    ends = [ended.completion_time] if facts.bare_pods and ended is not None and ended.finished else []
    if facts.suspends_jobs_at_end:
        ends += [_annotations(o).get(STOPPED_AT) for o in workloads if stopped_by_policy(o)]
    found = [_parse_time(text) for text in ends]
    return sorted({when + timedelta(seconds=ttl) for when in found if when is not None})


def reapplied(policy: JobPolicy, obj: dict[str, Any]) -> bool:
    """Whether a GitOps tool would create `obj` again if it were deleted: an object with no
    owner, of a job rendered for a GitOps tool or carrying such a tool's tracking mark."""
    metadata = obj.get("metadata") or {}
    if metadata.get("ownerReferences"):
        return False
    annotations, labels = metadata.get("annotations") or {}, metadata.get("labels") or {}
    return (
        policy.gitops
        or any(key in annotations for key in TRACKING_ANNOTATIONS)
        or any(key in labels for key in TRACKING_LABELS)
    )


def suspend_patch(action: Action, now: datetime | None = None) -> dict[str, Any]:
    """The merge patch that carries out a `suspend` action, saying why on the Job, when
    the job ended (`action.at`, else `now`), for its TTL, and the generation of the run it
    stops, which names that run's Events after the suspension too (`run_generation`)."""
    when = action.at or (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    annotations = {STOPPED_ANNOTATION: action.reason, STOPPED_AT: when}
    if action.generation is not None:
        annotations[STOPPED_GENERATION] = action.generation
    return {"metadata": {"annotations": annotations}, "spec": {"suspend": True}}


def _clean(
    policy: JobPolicy, status: JobStatus, workloads: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> list[Action]:
    why = f"job {status.phase.lower()}; cleanPodPolicy {policy.clean_pod_policy}"
    out = []
    facts = facts_of(policy.target)
    if facts.suspends_jobs_at_end:
        out += [
            Action("suspend", o["apiVersion"], o["kind"], _name(o), why, status.completion_time, CLEAN,
                   _generation((o.get("metadata") or {}).get("generation")))
            for o in workloads
            if _suspended_at_end(o)
        ]
    for pod in pods:
        if _deleting(pod) or pod_role(pod, policy) is None:
            continue
        phase = (pod.get("status") or {}).get("phase") or "Pending"
        active = phase in ("Pending", "Running", "Unknown")
        if active and (facts.suspends_jobs_at_end or facts.cleans_running_pods):
            continue  # their controllers remove them (suspended Job, ended JobSet/Volcano Job)
        if (active or policy.clean_pod_policy == "All") and not reapplied(policy, pod):
            out.append(Action("delete", "v1", "Pod", _name(pod), why, policy=CLEAN))
    return out


def _stopped_ttl(policy: JobPolicy, workloads: list[dict[str, Any]], now: datetime) -> list[Action]:
    """The suspended Jobs whose TTL after the job's end passed (see the module's notes)."""
    ttl = policy.ttl_seconds_after_finished
    if ttl is None or not facts_of(policy.target).suspends_jobs_at_end:
        return []
    out = []
    for obj in workloads:
        ended = _parse_time(_annotations(obj).get(STOPPED_AT)) if stopped_by_policy(obj) else None
        if ended is not None and now >= ended + timedelta(seconds=ttl) and not _deleting(obj) \
                and not reapplied(policy, obj):
            out.append(Action("delete", obj["apiVersion"], obj["kind"], _name(obj),
                              f"ttlSecondsAfterFinished {ttl} passed (suspended by cleanPodPolicy)", policy=TTL))
    return out


def stopped_by_policy(obj: dict[str, Any]) -> bool:
    """A Job cleanPodPolicy suspended when its job ended (not one Kueue holds)."""
    marks = _annotations(obj)
    return bool((obj.get("spec") or {}).get("suspend")) and (STOPPED_AT in marks or STOPPED_ANNOTATION in marks)


def _suspended_at_end(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "Job" and obj.get("apiVersion") == "batch/v1" and _job_active(obj)


def resume_patch() -> dict[str, Any]:
    """A stopped Job resumed for the job's next run: the last run's marks and its published
    end go (the end is published on a stopped Job too: publisher.publish)."""
    return {"metadata": {"annotations": {STOPPED_ANNOTATION: None, STOPPED_AT: None, STOPPED_GENERATION: None,
                                         PUBLISHED: None}},
            "spec": {"suspend": False}}


def run_generation(obj: dict[str, Any]) -> str | None:
    """The generation of the run `obj` is in, the same before and after cleanPodPolicy
    suspended it at the run's end: the suspension changes the spec, so Kubernetes gives the
    Job another generation, but no new run begins (resuming it for one does). Read from
    STOPPED_GENERATION on a Job the policy stopped; anything there but a generation (an
    annotation anyone who may edit the Job may write) is taken as missing."""
    metadata = obj.get("metadata") or {}
    if stopped_by_policy(obj):
        kept = _generation(_annotations(obj).get(STOPPED_GENERATION))
        if kept is not None:
            return kept
    return _generation(metadata.get("generation"))


def _generation(value: Any) -> str | None:
    """A generation as Kubernetes writes one (a positive int64), as text; else None."""
    text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    return text if text.isascii() and text.isdigit() and len(text) <= 19 and int(text) > 0 else None


def job_of(obj: dict[str, Any]) -> str | None:
    found = ((obj.get("metadata") or {}).get("labels") or {}).get(JOB_NAME)
    return str(found) if found else None


def _annotations(obj: dict[str, Any]) -> dict[str, Any]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def _job_active(job: dict[str, Any]) -> bool:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    if spec.get("suspend"):
        return False
    ended = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
    return not ended & {"Complete", "Failed", "SuccessCriteriaMet", "FailureTarget"}


def _volcano_running(obj: dict[str, Any]) -> bool:
    if not str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/"):
        return False
    phase = ((obj.get("status") or {}).get("state") or {}).get("phase")
    return phase not in ("Completed", "Completing", "Failed", "Aborted", "Terminated")


def _deleting(obj: dict[str, Any]) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def _name(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])


def _parse_time(text: Any) -> datetime | None:
    """A time the cluster holds; None for one that is not (an annotation anyone who owns the
    object may have written: it must not stop the controller)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)


def _unique(actions: list[Action]) -> list[Action]:
    return list(dict.fromkeys(actions))


def volcano_command(job: dict[str, Any], action: str = "CompleteJob") -> dict[str, Any]:
    """The Volcano bus Command that asks the Volcano controller to end `job`."""
    metadata = job["metadata"]
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {
            "generateName": f"{metadata['name']}-",
            "namespace": metadata.get("namespace"),
            "ownerReferences": [
                {"apiVersion": job["apiVersion"], "kind": job["kind"], "name": metadata["name"],
                 "uid": metadata.get("uid"), "controller": True}
            ],
        },
        "action": action,
        # An OwnerReference in Volcano's Command CRD: the uid is required.
        "target": {"apiVersion": job["apiVersion"], "kind": job["kind"], "name": metadata["name"],
                   "uid": metadata.get("uid")},
    }
