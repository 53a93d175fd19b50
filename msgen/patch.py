"""What plug-ins ask of a pod, and how those asks are merged into the user's template.

Frameworks and devices never edit a template: each returns a `Patch` (environment variables
per container). `apply_patches` merges them in one place, where a conflict is a diagnostic:
two plug-ins setting one variable two ways is a bug we report, and a user's own value for a
variable msgen owns is an error unless the user allowed the override.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from .diagnostics import Diagnostic
from .plan import Options, Plan, PodSlot

ALL_CONTAINERS = "*"


@dataclass(frozen=True)
class EnvValue:
    """A value for an environment variable: literal text or a downward-API field.

    `requires` lists variables that must be defined earlier in the same container, for values
    that use Kubernetes' `$(NAME)` expansion.
    """

    value: str | None = None
    field_path: str | None = None
    requires: tuple[tuple[str, EnvValue], ...] = ()

    def as_env(self, name: str) -> dict[str, Any]:
        if self.field_path is not None:
            return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": self.field_path}}}
        return {"name": name, "value": self.value if self.value is not None else ""}


def literal(value: str | int) -> EnvValue:
    return EnvValue(value=str(value))


def field_ref(path: str) -> EnvValue:
    return EnvValue(field_path=path)


@dataclass(frozen=True)
class Patch:
    """Environment a plug-in adds: `(container name or ALL_CONTAINERS, variable, value)`."""

    contributor: str
    env: tuple[tuple[str, str, EnvValue], ...] = ()


def apply_patches(
    plan: Plan, slot: PodSlot, patches: list[Patch], options: Options
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """A copy of the role's pod template with every patch merged in."""
    template = copy.deepcopy(slot.role.template)
    diagnostics: list[Diagnostic] = []
    containers: list[dict[str, Any]] = template["spec"]["containers"]
    wanted: dict[str, dict[str, tuple[dict[str, Any], str]]] = {}
    for patch in patches:
        for target, name, env_value in patch.env:
            for container in containers:
                if target not in (ALL_CONTAINERS, container["name"]):
                    continue
                own = wanted.setdefault(container["name"], {})
                for req_name, req_value in env_value.requires:
                    own.setdefault(req_name, (req_value.as_env(req_name), patch.contributor))
                entry = env_value.as_env(name)
                previous = own.get(name)
                if previous is not None and previous[0] != entry:
                    raise AssertionError(
                        f"{patch.contributor} and {previous[1]} both set {name} differently"
                    )
                own[name] = (entry, patch.contributor)
    for ci, container in enumerate(containers):
        additions = wanted.get(container["name"])
        if not additions:
            continue
        user_env: list[dict[str, Any]] = container.get("env") or []
        user_by_name = {e["name"]: (ei, e) for ei, e in enumerate(user_env)}
        merged = list(user_env)
        for name, (entry, contributor) in additions.items():
            found = user_by_name.get(name)
            if found is None:
                merged.append(entry)
                continue
            ei, user_entry = found
            if user_entry == entry or options.allow_env_override:
                continue
            path = slot.role.path + ("template", "spec", "containers", ci, "env", ei)
            diagnostics.append(
                plan.document.diagnostic(
                    path,
                    f"container {container['name']!r} sets {name}, which msgen sets for "
                    f"{contributor} ({_describe(entry)}); accepted: leave {name} out, "
                    "or pass --allow-env-override to keep your value",
                )
            )
        container["env"] = merged
    return template, diagnostics


def _describe(entry: dict[str, Any]) -> str:
    if "valueFrom" in entry:
        return "from " + str(entry["valueFrom"]["fieldRef"]["fieldPath"])
    return repr(entry["value"])
