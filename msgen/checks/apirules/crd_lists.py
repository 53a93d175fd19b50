"""Lists a custom resource's schema keys, which its API server refuses duplicates in.

A Job or Pod may list the env var `A` twice (the server warns; the last one wins), but the
JobSet and Volcano Job CRDs embed the pod template with `x-kubernetes-list-type: map`, so the
same template in a JobSet is refused ("Duplicate value"). For targets that write such a custom
resource, the template's keyed lists are checked here, each duplicate at its field. The table
equals the CRDs' own markers (a test reads them from the CRDs).
"""

from __future__ import annotations

from ...model.source import Path
from .findings import Findings, items

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: In a container: list → the fields that key its items (with their defaults).
CONTAINER_LISTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "env": (("name", None),),
    "ports": (("containerPort", None), ("protocol", "TCP")),
    "volumeDevices": (("devicePath", None),),
}
#: In a pod spec. Containers, volumes and mounts are left out: their keys (names, mount
#: paths) must be unique in every pod, and `pod` and `containers` check that for every target.
POD_LISTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "imagePullSecrets": (("name", None),),
    "hostAliases": (("ip", None),),
    "schedulingGates": (("name", None),),
    "resourceClaims": (("name", None),),
    "topologySpreadConstraints": (("topologyKey", None), ("whenUnsatisfiable", None)),
}


def check(found: Findings, spec: Any, path: Path) -> None:
    """Duplicate keys in the keyed lists of the pod spec at `path` (CRD targets only)."""
    if not found.facts.custom_resource or not isinstance(spec, dict):
        return
    for field, keys in POD_LISTS.items():
        _unique(found, spec.get(field), path + (field,), keys)
    for kind in ("containers", "initContainers"):
        for i, container in items(spec.get(kind)):
            for field, keys in CONTAINER_LISTS.items():
                _unique(found, container.get(field), path + (kind, i, field), keys)
            claims = container.get("resources")
            if isinstance(claims, dict):
                _unique(
                    found,
                    claims.get("claims"),
                    path + (kind, i, "resources", "claims"),
                    (("name", None),),
                )


def _unique(found: Findings, values: Any, path: Path, keys: tuple[tuple[str, Any], ...]) -> None:
    seen: set[tuple[Any, ...]] = set()
    for i, item in items(values):
        key = tuple(item.get(name, default) for name, default in keys)
        if key in seen:
            shown = ", ".join(f"{name} {value!r}" for (name, _), value in zip(keys, key, strict=True))
            found.refuse(
                path + (i,),
                f"{shown} is listed twice; target {found.target} writes a custom resource whose "
                f"schema keys {path[-1]} by {' and '.join(name for name, _ in keys)}, and the API "
                "server refuses duplicates there; accepted: each once",
            )
        seen.add(key)
