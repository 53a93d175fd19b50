"""The run-time policies of a job, written onto its workloads as one annotation.

Some MSJob policies (success by worker 0 on bare Pods, `cleanPodPolicy`, a bare Pod's TTL,
...) need someone to act when the job ends. `msgen apply --wait` and `msgen controller`
do, and they must decide from the cluster alone: the controller has no input files. So
every workload msgen renders carries the job's policies in `msgen/run-policy`, a compact
JSON object with sorted keys (deterministic output), and the reconciler reads them back
with `parse()`. This module is the only place that knows the annotation's shape.
"""

from __future__ import annotations

from .plan import ALL_WORKERS, ONE_ROLE_DECIDES, WORKER0, Options, Plan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from .type_forms import NamedTuple

ANNOTATION = "msgen/run-policy"


class RoleRule(NamedTuple):
    replicas: int
    restart_policy: str


class JobPolicy(NamedTuple):
    """What the reconciler needs to judge and finish a job, read back from the cluster.

    Not `plan.RunPolicy` (the input's `runPolicy`, one part of a Plan): this is the whole
    annotation, the job's roles and success policy with it, as the cluster holds it."""

    job: str
    target: str
    roles: dict[str, RoleRule]
    success_policy: str = WORKER0
    clean_pod_policy: str = "Running"
    backoff_limit: int | None = None
    active_deadline_seconds: int | None = None
    ttl_seconds_after_finished: int | None = None
    enable_dynamic_worker: bool = False
    #: rendered for a GitOps tool, which re-creates what is deleted (msgen.compile.lifecycle)
    gitops: bool = False
    extra: dict[str, Any] = {}  # never mutated

    def worker_type(self) -> str | None:
        """The Worker role (`Worker`, however the kind spells it)."""
        for name in self.roles:
            if name.lower() == "worker":
                return name
        return None

    def deciding_type(self) -> str | None:
        """The role whose success is the job's: the Scheduler's, the Tuner's or the Workers'."""
        if self.success_policy in ONE_ROLE_DECIDES and self.success_policy in self.roles:
            return self.success_policy
        return self.worker_type()


def value(plan: Plan, options: Options) -> str:
    """The annotation's text for `plan` rendered with `options`."""
    run = plan.run_policy
    data: dict[str, Any] = {
        "job": plan.name,
        "target": options.target,
        "roles": {
            role.replica_type: {"replicas": role.replicas, "restartPolicy": role.restart_policy}
            for role in plan.roles
        },
        "successPolicy": (
            plan.success_policy
            if plan.success_policy in (ALL_WORKERS, *ONE_ROLE_DECIDES)
            else WORKER0
        ),
        "cleanPodPolicy": run.clean_pod_policy,
    }
    for key, found in (
        ("backoffLimit", run.backoff_limit),
        ("activeDeadlineSeconds", run.active_deadline_seconds),
        ("ttlSecondsAfterFinished", run.ttl_seconds_after_finished),
    ):
        if found is not None:
            data[key] = found
    if plan.enable_dynamic_worker:
        data["enableDynamicWorker"] = True
    if options.gitops:
        data["gitops"] = True
    return compact_json(data)


def compact_json(value: Any) -> str:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"))`, written here for what the
    annotation holds (mappings with text keys, lists, text, integers, flags) so that a render
    loads no `json`; anything else (a float, an escape) is json's to write."""
    kind = type(value)
    if kind is dict and all(type(key) is str for key in value):
        return "{" + ",".join(f"{_text(key)}:{compact_json(value[key])}" for key in sorted(value)) + "}"
    if kind is list:
        return "[" + ",".join(compact_json(item) for item in value) + "]"
    if kind is str:
        return _text(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _text(text: str) -> str:
    """A JSON string as json writes it (printable ASCII as it is, the rest escaped)."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    import json

    return json.dumps(text)


class PolicyError(ValueError):
    """The annotation is not one msgen wrote (edited by hand, or from a newer msgen)."""


def parse(text: str) -> JobPolicy:
    """The policy in an annotation's text; PolicyError names what is wrong."""
    import json  # the reconciler's reading: a render writes the annotation without json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PolicyError(f"{ANNOTATION} is not JSON: {exc}") from None
    except RecursionError:  # anyone who may create an object may nest 100,000 arrays in it
        raise PolicyError(f"{ANNOTATION} is nested too deeply") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{ANNOTATION} is not a JSON object")
    try:
        roles = {
            str(name): RoleRule(int(rule["replicas"]), str(rule["restartPolicy"]))
            for name, rule in dict(data["roles"]).items()
        }
        return JobPolicy(
            job=str(data["job"]),
            target=str(data["target"]),
            roles=roles,
            success_policy=str(data.get("successPolicy", WORKER0)),
            clean_pod_policy=str(data.get("cleanPodPolicy", "Running")),
            backoff_limit=_int(data.get("backoffLimit")),
            active_deadline_seconds=_int(data.get("activeDeadlineSeconds")),
            ttl_seconds_after_finished=_int(data.get("ttlSecondsAfterFinished")),
            enable_dynamic_worker=bool(data.get("enableDynamicWorker", False)),
            gitops=bool(data.get("gitops", False)),
        )
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:  # Overflow: Infinity
        raise PolicyError(f"{ANNOTATION} lacks or mistypes a field: {exc}") from None


def _int(found: Any) -> int | None:
    return None if found is None else int(found)
