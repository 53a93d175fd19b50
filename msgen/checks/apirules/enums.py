"""Closed sets of values, and label-selector requirements, anywhere in a pod template.

Kubernetes' published schema (what `checks.pod_schema` checks against) types these fields as
plain strings, but the API server accepts only the values listed here (`imagePullPolicy: ok`
is refused). The walk visits the whole template, so the fields are found wherever they sit:
in containers, init containers, probes, affinity terms, topology spread constraints.
"""

from __future__ import annotations

from ...model.diagnostics import did_you_mean
from ...model.source import Path
from ...model import names
from .findings import Findings, shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: (the field's parent, the field) → accepted values; parent "*" matches any parent.
ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("*", "imagePullPolicy"): ("Always", "IfNotPresent", "Never"),
    ("*", "terminationMessagePolicy"): ("File", "FallbackToLogsOnError"),
    ("spec", "dnsPolicy"): ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"),
    ("spec", "preemptionPolicy"): ("PreemptLowerPriority", "Never"),
    ("volumeMounts", "mountPropagation"): ("None", "HostToContainer", "Bidirectional"),
    ("volumeMounts", "recursiveReadOnly"): ("Disabled", "IfPossible", "Enabled"),
    ("topologySpreadConstraints", "whenUnsatisfiable"): ("DoNotSchedule", "ScheduleAnyway"),
    ("topologySpreadConstraints", "nodeAffinityPolicy"): ("Honor", "Ignore"),
    ("topologySpreadConstraints", "nodeTaintsPolicy"): ("Honor", "Ignore"),
    ("securityContext", "fsGroupChangePolicy"): ("OnRootMismatch", "Always"),
    ("securityContext", "procMount"): ("Default", "Unmasked"),
    ("seccompProfile", "type"): ("Unconfined", "RuntimeDefault", "Localhost"),
    ("appArmorProfile", "type"): ("Unconfined", "RuntimeDefault", "Localhost"),
    ("tolerations", "operator"): ("Exists", "Equal"),
    ("tolerations", "effect"): ("NoSchedule", "PreferNoSchedule", "NoExecute"),
    ("httpGet", "scheme"): ("HTTP", "HTTPS"),
    ("os", "name"): ("linux", "windows"),
    ("resizePolicy", "restartPolicy"): ("NotRequired", "RestartContainer"),
}
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
#: Parents whose `matchExpressions` select nodes (the others select pods, by labels).
NODE_TERMS = ("nodeSelectorTerms", "preference")


def check(found: Findings, template: Any, path: Path) -> None:
    stack: list[tuple[Any, Path, str]] = [(template, path, "")]
    while stack:
        node, where, parent = stack.pop()
        if isinstance(node, list):
            stack.extend((item, where + (i,), parent) for i, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            accepted = ENUMS.get((parent, key)) or ENUMS.get(("*", key))
            if accepted and isinstance(value, str) and value not in accepted and value != "":
                found.refuse(
                    where + (key,),
                    f"{shown(value)} is not accepted{did_you_mean(value, accepted)}; accepted:"
                    f" {', '.join(accepted)}",
                )
            elif key == "medium" and parent == "emptyDir" and isinstance(value, str):
                if value not in ("", "Memory", "HugePages") and not value.startswith("HugePages-"):
                    found.refuse(
                        where + (key,),
                        f"{shown(value)} is not accepted; accepted: Memory, HugePages,"
                        " HugePages-<size>, or empty",
                    )
            elif key == "matchExpressions" and isinstance(value, list):
                _requirements(found, value, where + (key,), node=parent in NODE_TERMS)
            elif key == "topologyKey" and isinstance(value, str):
                problems = names.qualified_name(value) if value else ["must not be empty"]
                found.check(where + (key,), "topologyKey", value, problems)
            elif isinstance(value, (dict, list)):
                stack.append((value, where + (key,), key))


def _requirements(found: Findings, requirements: list[Any], path: Path, *, node: bool) -> None:
    operators = NODE_OPERATORS if node else LABEL_OPERATORS
    for i, requirement in enumerate(requirements):
        if not isinstance(requirement, dict):
            continue
        where = path + (i,)
        key, operator = requirement.get("key"), requirement.get("operator")
        values = requirement.get("values") or []
        if isinstance(key, str):
            found.check(where + ("key",), "key", key, names.qualified_name(key))
        if operator not in operators:
            found.refuse(
                where + ("operator",),
                f"{shown(operator)} is not accepted{did_you_mean(operator, operators)}; accepted:"
                f" {', '.join(operators)}",
            )
        elif operator in ("In", "NotIn") and not values:
            found.refuse(
                where, f"operator {operator} needs values; accepted: a non-empty list of values"
            )
        elif operator in ("Exists", "DoesNotExist") and values:
            found.refuse(
                where + ("values",), f"operator {operator} takes no values; accepted: no values"
            )
        elif operator in ("Gt", "Lt") and len(values) != 1:
            found.refuse(where + ("values",), f"operator {operator} takes exactly one value")
        for j, value in enumerate(values if isinstance(values, list) else []):
            if isinstance(value, str):
                found.check(where + ("values", j), "value", value, names.label_value(value))
