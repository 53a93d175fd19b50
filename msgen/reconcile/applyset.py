"""ApplySets (KEP-3659) as kubectl makes them, and the order objects are applied in.

An ApplySet is a parent object (a Secret, as kubectl's default) labelled
`applyset.kubernetes.io/id`, whose members are labelled `applyset.kubernetes.io/part-of`
with the same id. The id is kubectl's own (k8s.io/kubectl pkg/cmd/apply/applyset.go,
`ApplySet.ID`): `applyset-` + unpadded URL-safe base64 of sha256 of
`<name>.<namespace>.<kind>.<group>` + `-v1`, so `kubectl get -l` and `kubectl apply
--applyset` find the same members msgen does. The parent's
`applyset.kubernetes.io/contains-group-kinds` lists the members' kinds as kubectl writes
them (`Kind` or `Kind.group`, sorted, comma-separated).

Pruning deletes only live objects that carry this set's id and are no longer rendered:
`prune_set` never returns an object without the label.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from .. import __version__

ID_LABEL = "applyset.kubernetes.io/id"
PART_OF = "applyset.kubernetes.io/part-of"
TOOLING = "applyset.kubernetes.io/tooling"
GROUP_KINDS = "applyset.kubernetes.io/contains-group-kinds"
NAMESPACES = "applyset.kubernetes.io/additional-namespaces"
TOOL = f"msgen/v{__version__}"
FIELD_MANAGER = "msgen"

#: Configuration first, then Services, then Workloads and PodGroups (Kubernetes' own, the
#: Workload first, as its PodGroup names it), then workloads: pods never start
#: before what they mount, resolve or wait to be scheduled with.
_APPLY_RANK = {
    "Namespace": 0, "ServiceAccount": 1, "ConfigMap": 1, "Secret": 1,
    "Service": 2, "Workload": 3, "PodGroup": 3,
    "TrainingRuntime": 3,  # before the TrainJob that refers to it (Trainer's webhook checks)
}  # fmt: skip


def applyset_id(name: str, namespace: str, kind: str = "Secret", group: str = "") -> str:
    unencoded = ".".join((name, namespace, kind, group))
    digest = hashlib.sha256(unencoded.encode()).digest()
    return f"applyset-{base64.urlsafe_b64encode(digest).decode().rstrip('=')}-v1"


def group_kind(obj: dict[str, Any]) -> str:
    """`Kind` for the core group, else `Kind.group`, as kubectl's GroupKind.String()."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    return f"{obj['kind']}.{group}" if group else str(obj["kind"])


def group_kinds(objects: list[dict[str, Any]]) -> str:
    return ",".join(sorted({group_kind(o) for o in objects}))


def default_name(objects: list[dict[str, Any]]) -> str | None:
    """`msgen-<job>` when every object belongs to one job; None when there are several jobs
    (the user then names the set with --applyset)."""
    from ..targets.labels import JOB_NAME

    jobs = {(o.get("metadata", {}).get("labels") or {}).get(JOB_NAME) for o in objects}
    jobs.discard(None)
    return f"msgen-{jobs.pop()}" if len(jobs) == 1 else None


def parent(
    name: str, namespace: str, objects: list[dict[str, Any]], previous_kinds: str = ""
) -> dict[str, Any]:
    """The parent Secret for `objects`. `previous_kinds` (the live parent's annotation) is
    kept in the union until a prune has run, as kubectl does, so a failed prune never
    orphans a kind from the set."""
    kinds = set(filter(None, previous_kinds.split(","))) | {group_kind(o) for o in objects}
    others = sorted(
        {o["metadata"].get("namespace") for o in objects} - {namespace, None}
    )
    annotations = {TOOLING: TOOL, GROUP_KINDS: ",".join(sorted(kinds))}
    if others:
        annotations[NAMESPACES] = ",".join(others)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {ID_LABEL: applyset_id(name, namespace)},
            "annotations": annotations,
        },
        "type": "Opaque",
    }


def with_membership(obj: dict[str, Any], set_id: str) -> dict[str, Any]:
    """A copy of `obj` labelled as a member of the set `set_id`."""
    metadata = dict(obj["metadata"])
    metadata["labels"] = {**(metadata.get("labels") or {}), PART_OF: set_id}
    return {**obj, "metadata": metadata}


def key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    """What identifies an object across apply runs: group, kind, namespace, name."""
    gk = group_kind(obj)
    kind, _, group = gk.partition(".")
    return group, kind, str(obj["metadata"].get("namespace") or ""), str(obj["metadata"]["name"])


def prune_set(
    live: list[dict[str, Any]], rendered: list[dict[str, Any]], set_id: str
) -> list[dict[str, Any]]:
    """The live members of the set that are no longer rendered, in reverse apply order
    (workloads before what they use). Objects without this set's label are never in it."""
    keep = {key(o) for o in rendered}
    gone = {
        key(o): o for o in live
        if (o.get("metadata", {}).get("labels") or {}).get(PART_OF) == set_id
        and key(o) not in keep
    }  # fmt: skip  (by key: an object listed twice is deleted, and reported, once)
    return list(reversed(apply_order(list(gone.values()))))


def apply_order(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stable: within a rank, objects keep the renderer's order (roles Scheduler, PS, Worker)."""
    return sorted(objects, key=lambda o: _APPLY_RANK.get(str(o.get("kind")), 9))
