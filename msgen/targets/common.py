"""What every target does to a pod template: labels, restart policy, DNS identity, gang."""

from __future__ import annotations

from typing import Any

from ..diagnostics import Diagnostic
from ..plan import Options, Plan, PodSlot
from . import labels, scheduling
from .addressing import Addressing


def finish_pod(
    plan: Plan,
    slot: PodSlot,
    merged: dict[str, Any],
    addressing: Addressing,
    *,
    restart_policy: str,
    hostname: str | None,
    options: Options,
    target: str,
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The pod template with msgen's labels, restart policy, DNS identity, gang and priority."""
    metadata, diagnostics = labels.pod_metadata(plan, slot)
    spec = dict(merged["spec"])
    spec["restartPolicy"] = restart_policy
    if addressing.distributed:
        subdomain = None if addressing.naming.controller_sets_subdomain else addressing.subdomain
        for field, value in (("hostname", hostname), ("subdomain", subdomain)):
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
    template = {"metadata": metadata, "spec": spec}
    diagnostics.extend(scheduling.join_pod(plan, options, slot, template, target))
    return template, diagnostics
