"""Which pod-template rules changed in which Kubernetes release, as data.

The API server's checks follow feature gates: a rule relaxes, or a value becomes accepted, in
the release whose gate is on by default (beta or GA), read from `pkg/features/kube_features.go`
and `pkg/apis/core/validation` of each release. msgen checks a template with the rules of the
`--kube-version` it renders for, so a job refused by an older cluster is refused before it
gets there. A rule missing here is checked as the newest release checks it.
"""

from __future__ import annotations

#: rule → the first release (minor) whose API server has it on by default.
SINCE: dict[str, tuple[int, int]] = {
    # RelaxedEnvironmentVariableValidation (alpha 1.30, beta 1.32): env names and envFrom
    # prefixes may be any printable ASCII but '='.
    "relaxed-env-names": (1, 32),
    # SidecarContainers (alpha 1.28, beta 1.29): an init container's `restartPolicy: Always`.
    # At 1.28 the field exists but the gate is off: the server drops it, and the sidecar would
    # block the pod as an ordinary init container.
    "sidecar-containers": (1, 29),
    # ContainerRestartRules (alpha 1.34, beta 1.35): a container's own restartPolicy (Always,
    # OnFailure, Never) on regular and init containers.
    "container-restart-rules": (1, 35),
    # PodHostIPs (alpha 1.28, beta 1.29): `status.hostIPs` in an env fieldRef.
    "host-ips-field": (1, 29),
    # RelaxedDNSSearchValidation (alpha 1.32, beta 1.33): `_` and a lone `.` in DNS searches.
    "relaxed-dns-search": (1, 33),
    # EnvFiles (alpha 1.34, beta 1.35): env `valueFrom.fileKeyRef`.
    "env-files": (1, 35),
}


def has(rule: str, version: tuple[int, int]) -> bool:
    """Whether the API server of `version` applies `rule` (see SINCE)."""
    return version >= SINCE[rule]


def show(rule: str) -> str:
    major, minor = SINCE[rule]
    return f"{major}.{minor}"
