"""Pieces every target needs: finishing a pod template, and saying what it cannot express."""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic, Severity
from ..plan import Plan, PodSlot
from . import labels
from .addressing import Addressing


def finish_pod(
    plan: Plan,
    slot: PodSlot,
    merged: dict[str, Any],
    addressing: Addressing,
    *,
    restart_policy: str,
    hostname: str | None,
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The pod template with msgen's labels, restart policy and DNS identity."""
    metadata, diagnostics = labels.pod_metadata(plan, slot)
    spec = dict(merged["spec"])
    spec["restartPolicy"] = restart_policy
    if addressing.distributed:
        for field, value in (("hostname", hostname), ("subdomain", addressing.subdomain)):
            if field in spec:
                diagnostics.append(
                    plan.document.diagnostic(
                        slot.role.path + ("template", "spec", field),
                        f"{field} {spec[field]!r} is not accepted in a distributed job: msgen "
                        "gives every pod its own stable host name and DNS subdomain; "
                        f"accepted: leave {field} out",
                    )
                )
            if value is not None:
                spec[field] = value
    return {"metadata": metadata, "spec": spec}, diagnostics


def warn(plan: Plan, path: tuple[str | int, ...], message: str) -> Diagnostic:
    return plan.document.diagnostic(path, message, severity=Severity.WARNING)


def unexpressed_policies(
    plan: Plan, target: str, native: set[str], exit_code_fallback: str = ""
) -> list[Diagnostic]:
    """Warnings for the run policies `target` cannot express (`native` lists those it can).

    `exit_code_fallback` says what happens instead of `restartPolicy: ExitCode`.
    """
    out = []
    run = plan.run_policy
    policy_path = ("spec", "runPolicy")
    if run.clean_pod_policy_written and run.clean_pod_policy != "None":
        out.append(
            warn(
                plan,
                policy_path + ("cleanPodPolicy",),
                f"cleanPodPolicy {run.clean_pod_policy} is not expressed by target {target}: "
                "pods stay as Kubernetes leaves them when the job ends",
            )
        )
    for field, value in (
        ("backoffLimit", run.backoff_limit),
        ("ttlSecondsAfterFinished", run.ttl_seconds_after_finished),
        ("activeDeadlineSeconds", run.active_deadline_seconds),
    ):
        if value is not None and field not in native:
            out.append(
                warn(plan, policy_path + (field,), f"{field} is not expressed by target {target}")
            )
    if run.scheduling is not None:
        out.append(
            warn(
                plan,
                policy_path + ("schedulingPolicy",),
                f"schedulingPolicy (gang scheduling) is not expressed by target {target}: "
                "pods are scheduled one by one",
            )
        )
    if plan.enable_dynamic_worker:
        out.append(
            warn(
                plan,
                ("spec", "enableDynamicWorker"),
                f"enableDynamicWorker is not expressed by target {target}: a failed Worker "
                "is handled like any failed pod",
            )
        )
    for role in plan.roles:
        if role.restart_policy == "ExitCode" and "restartPolicy: ExitCode" not in native:
            out.append(
                warn(
                    plan,
                    role.path + ("restartPolicy",),
                    f"restartPolicy ExitCode is not expressed by target {target}: "
                    + exit_code_fallback,
                )
            )
    return out
