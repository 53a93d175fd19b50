"""What `msgen apply`, `diff` and `delete` do with a cluster, around the pure decisions.

Each step reports through `echo` (one line per object, as kubectl does) and raises
`Stop` with the message and exit status when it cannot go on; nothing here prints a
credential: messages hold object names and the API server's reason only.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from lightkube import Client

from ..model.exit_status import EXIT_INPUT, EXIT_TIMEOUT, EXIT_USAGE
from . import applyset, kube
from .kube import KubeError, describe

#: What to install when the API server does not serve a kind msgen rendered.
_CRD_HINTS = {
    "jobset.x-k8s.io": "JobSet (jobset.x-k8s.io): install JobSet's CRDs and controller",
    "batch.volcano.sh": "Volcano Job (batch.volcano.sh): install Volcano",
    "scheduling.volcano.sh": "Volcano PodGroup (scheduling.volcano.sh): install Volcano",
    "scheduling.x-k8s.io": "PodGroup (scheduling.x-k8s.io): install the scheduler-plugins CRDs",
    "scheduling.k8s.io": "Workload and PodGroup (scheduling.k8s.io/v1beta1): Kubernetes 1.37 or newer "
    "with the GenericWorkload feature gate on and --runtime-config=scheduling.k8s.io/v1beta1=true",
    "trainer.kubeflow.org": "TrainJob and TrainingRuntime (trainer.kubeflow.org): install Kubeflow "
    "Trainer (its CRDs, controller manager and JobSet)",
}
#: Fields the API server owns, left out of diffs.
_SERVER_FIELDS = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp")


class Stop(Exception):
    def __init__(self, message: str, exit_code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Settings:
    namespace: str
    force_conflicts: bool = False
    dry_run: bool = False
    recreate: bool = False
    echo: Callable[[str], None] = print
    applied: list[dict[str, Any]] = field(default_factory=list)
    #: the objects this apply created (none of that name was there before)
    created: list[dict[str, Any]] = field(default_factory=list)


def place(objects: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """Objects with a namespace: their own, else the command line's or the kubeconfig's."""
    out = []
    for obj in objects:
        metadata = dict(obj["metadata"])
        metadata.setdefault("namespace", namespace)
        out.append({**obj, "metadata": metadata})
    return out


def preflight(client: Client, objects: list[dict[str, Any]]) -> None:
    """Missing namespaces and kinds the server does not serve, all named, before any write."""
    problems = []
    for name in sorted({o["metadata"]["namespace"] for o in objects}):
        if not kube.namespace_exists(client, name):
            problems.append(f"namespace {name!r} does not exist: create it (kubectl create namespace {name})")
    problems += unserved(client, objects)
    if problems:
        raise Stop("nothing was applied:\n  " + "\n  ".join(problems))


def served_kinds(client: Client, objects: list[dict[str, Any]]) -> None:
    """Stop (exit 2, as `diff` exits on errors) naming each kind the server does not serve."""
    problems = unserved(client, objects)
    if problems:
        raise Stop("\n  ".join(["the cluster does not serve what these inputs render:", *problems]), EXIT_USAGE)


def unserved(client: Client, objects: list[dict[str, Any]]) -> list[str]:
    """The rendered kinds the API server does not serve (a CRD not installed), with what to install."""
    problems = []
    for api_version, kind in dict.fromkeys((o["apiVersion"], o["kind"]) for o in objects):
        namespace = next(o["metadata"]["namespace"] for o in objects if o["kind"] == kind)
        if not kube.exists(client, api_version, kind, namespace):
            group = api_version.rpartition("/")[0]
            hint = _CRD_HINTS.get(group, f"{kind} ({api_version}): install its CRD")
            problems.append(f"the cluster does not serve {kind} {api_version}: {hint}")
    return problems


def check_parent(client: Client, name: str, namespace: str) -> dict[str, Any] | None:
    """The live parent, refused when another tool manages it (KEP-3659 asks tools to)."""
    live = kube.get(client, "v1", "Secret", name, namespace)
    if live is None:
        return None
    metadata = live.get("metadata") or {}
    tooling = (metadata.get("annotations") or {}).get(applyset.TOOLING, "")
    if not tooling.startswith("msgen/"):
        raise Stop(f"ApplySet parent Secret {namespace}/{name} is managed by {tooling or 'no tool'!r}, "
                   "not msgen: choose another --applyset name")
    if (metadata.get("labels") or {}).get(applyset.ID_LABEL) != applyset.applyset_id(name, namespace):
        raise Stop(f"Secret {namespace}/{name} has a wrong {applyset.ID_LABEL} label; not touching it")
    return live


def apply_all(client: Client, objects: list[dict[str, Any]], settings: Settings) -> int:
    """Server-side apply in order; returns how many objects changed."""
    changed = 0
    for obj in applyset.apply_order(objects):
        meta = obj["metadata"]
        before = kube.get(client, obj["apiVersion"], obj["kind"], meta["name"], meta["namespace"])
        after = _apply_one(client, obj, settings)
        settings.applied.append(after)
        if before is None:
            settings.created.append(after)
        # Content, not resourceVersion: a server dry run never bumps the version.
        same = before is not None and _shown(before) == _shown(after)
        verb = "unchanged" if same else ("created" if before is None else "configured")
        changed += not same
        suffix = " (server dry run)" if settings.dry_run else ""
        settings.echo(f"{_ref(obj)} {verb}{suffix}")
    return changed


def _apply_one(client: Client, obj: dict[str, Any], settings: Settings) -> dict[str, Any]:
    try:
        return kube.apply(client, obj, force=settings.force_conflicts, dry_run=settings.dry_run)
    except KubeError as exc:
        if exc.code == 409:
            raise Stop(f"{exc}\nanother field manager owns these fields; "
                       "--force-conflicts makes msgen take them over") from None
        if exc.code == 422 and "immutable" in str(exc):
            if settings.recreate and settings.dry_run:  # what --recreate would do; nothing done
                settings.echo(f"{_ref(obj)} would be recreated (server dry run)")
                return obj
            if settings.recreate:
                settings.echo(f"{_ref(obj)} recreating (its pods are deleted first)")
                kube.delete(client, obj)
                wait_gone(client, obj, timeout=300)
                return kube.apply(client, obj, force=settings.force_conflicts)
            raise Stop(f"{exc}\n{recreate_hint(obj)}") from None
        raise Stop(str(exc), EXIT_INPUT) from None


def recreate_hint(obj: dict[str, Any]) -> str:
    return (f"{describe(obj)} cannot change these fields in place; --recreate deletes the job's "
            "workloads (waiting until their pods are gone) and creates them again")


def wait_gone(client: Client, obj: dict[str, Any], timeout: float) -> None:
    meta = obj["metadata"]
    deadline = time.monotonic() + timeout
    while kube.get(client, obj["apiVersion"], obj["kind"], meta["name"], meta["namespace"]) is not None:
        if time.monotonic() > deadline:
            raise Stop(f"{describe(obj)} still exists after {timeout:.0f}s", EXIT_TIMEOUT)
        time.sleep(1)


def members(client: Client, set_id: str, namespace: str, kinds: str) -> list[dict[str, Any]]:
    """Live members of the set: only objects labelled with its id, of the listed kinds."""
    found: list[dict[str, Any]] = []
    for group_kind in dict.fromkeys(filter(None, (k.strip() for k in kinds.split(",")))):
        api_version = _API_VERSIONS.get(group_kind)
        if api_version is None:
            continue
        kind = group_kind.split(".")[0]
        if kube.exists(client, api_version, kind, namespace):
            found += kube.listing(client, api_version, kind, namespace, {applyset.PART_OF: set_id})
    return found


#: The served version msgen lists a group-kind with (the parent names group-kinds only).
_API_VERSIONS = {
    "ConfigMap": "v1", "Service": "v1", "Pod": "v1", "Secret": "v1", "ServiceAccount": "v1",
    "Job.batch": "batch/v1", "StatefulSet.apps": "apps/v1",
    "JobSet.jobset.x-k8s.io": "jobset.x-k8s.io/v1alpha2",
    "Job.batch.volcano.sh": "batch.volcano.sh/v1alpha1",
    "PodGroup.scheduling.volcano.sh": "scheduling.volcano.sh/v1beta1",
    "PodGroup.scheduling.x-k8s.io": "scheduling.x-k8s.io/v1alpha1",
    "Workload.scheduling.k8s.io": "scheduling.k8s.io/v1beta1",
    "PodGroup.scheduling.k8s.io": "scheduling.k8s.io/v1beta1",
    "TrainJob.trainer.kubeflow.org": "trainer.kubeflow.org/v1alpha1",
    "TrainingRuntime.trainer.kubeflow.org": "trainer.kubeflow.org/v1alpha1",
}  # fmt: skip


def prune(client: Client, rendered: list[dict[str, Any]], set_id: str, namespace: str,
          kinds: str, settings: Settings) -> None:
    for obj in applyset.prune_set(members(client, set_id, namespace, kinds), rendered, set_id):
        settings.echo(f"{_ref(obj)} pruned")
        if not settings.dry_run:
            kube.delete(client, obj)


def resume_stopped(client: Client, settings: Settings) -> None:
    """Let a job run again: when this apply created a workload of a job (its last run's
    Jobs were deleted, by `ttlSecondsAfterFinished` or by hand), the job's Jobs that
    cleanPodPolicy suspended when that run ended are resumed, or the new pods would wait
    for ever for a Scheduler that never starts."""
    from . import actions

    jobs = {actions.job_of(o) for o in settings.created} - {None}
    for obj in settings.applied:
        if actions.job_of(obj) in jobs and actions.stopped_by_policy(obj):
            settings.echo(f"{_ref(obj)} resumed (cleanPodPolicy suspended it when the job's last run ended)")
            if not settings.dry_run:
                kube.merge_patch(client, obj, actions.resume_patch())


def diff(client: Client, objects: list[dict[str, Any]]) -> str:
    """A unified diff of the live objects against a server-side dry-run apply of `objects`."""
    out: list[str] = []
    for obj in applyset.apply_order(objects):
        meta = obj["metadata"]
        live = kube.get(client, obj["apiVersion"], obj["kind"], meta["name"], meta["namespace"])
        try:
            merged = kube.apply(client, obj, dry_run=True)
        except KubeError as exc:
            hint = f"\n{recreate_hint(obj)}" if exc.code == 422 and "immutable" in str(exc) else ""
            raise Stop(f"{exc}{hint}", EXIT_USAGE) from None
        before, after = _shown(live), _shown(merged)
        name = _ref(obj)
        out += difflib.unified_diff(before, after, f"live/{name}", f"rendered/{name}")
    return "".join(out)


def _shown(obj: dict[str, Any] | None) -> list[str]:
    if obj is None:
        return []
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_FIELDS}
    shown = {**obj, "metadata": metadata}
    text = yaml.safe_dump(shown, sort_keys=True, default_flow_style=False)
    return text.splitlines(keepends=True)


def _ref(obj: dict[str, Any]) -> str:
    """`kind.group/name`, as kubectl prints it."""
    kind, _, group = applyset.group_kind(obj).partition(".")
    return f"{kind.lower()}{'.' + group if group else ''}/{obj['metadata']['name']}"
