"""Kubernetes versions msgen renders for (`--kube-version`, or `KUBE_VERSION` from Argo CD)."""

from __future__ import annotations

import re

OLDEST = (1, 25)
#: The newest version whose schemas the tests validate against (kubernetes-validate 1.37).
NEWEST = (1, 37)

#: The releases `parse` accepts, as error messages say it: a newer 1.x is rendered as NEWEST
#: (Argo CD passes the cluster's own version, and a cluster upgraded before msgen must keep
#: rendering), while another major version is no Kubernetes msgen could know.
ACCEPTED = (
    f"{OLDEST[0]}.{OLDEST[1]} to {NEWEST[0]}.{NEWEST[1]} "
    f"(a newer {NEWEST[0]}.x renders as {NEWEST[0]}.{NEWEST[1]}, with a warning)"
)

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:[.+-].*)?\Z")


def parse(text: str) -> tuple[int, int]:
    """`1.29`, `v1.29.3` or `1.29+` → (1, 29); ValueError with what is accepted otherwise."""
    match = _VERSION.match(text.strip())
    if match is None:
        raise ValueError(
            f"{text!r} is not a Kubernetes version; accepted: MAJOR.MINOR from {ACCEPTED}, e.g. 1.31"
        )
    version = (int(match.group(1)), int(match.group(2)))
    if version < OLDEST:
        raise ValueError(f"Kubernetes {text} is older than msgen supports; accepted: {ACCEPTED}")
    if version[0] != NEWEST[0]:
        raise ValueError(f"Kubernetes {text} is not a release msgen knows; accepted: {ACCEPTED}")
    return version


def newer_than_known(version: tuple[int, int]) -> str:
    """What `msgen render` says of a release newer than NEWEST, which it renders as NEWEST."""
    return (
        f"Kubernetes {show(version)} is newer than msgen knows: rendering as for {show(NEWEST)}, "
        "the newest release msgen is tested against"
    )


#: Kubernetes feature gates msgen relies on: (alpha, beta = on by default, GA), contracts §8.
#: A field is used only from the version where its feature is on by default.
GATES: dict[str, tuple[tuple[int, int] | None, tuple[int, int] | None, tuple[int, int] | None]] = {
    "IndexedJob": (None, None, (1, 24)),
    "JobPodFailurePolicy": ((1, 25), (1, 26), (1, 31)),
    "JobBackoffLimitPerIndex": ((1, 28), (1, 29), (1, 33)),
    "JobPodReplacementPolicy": ((1, 28), (1, 29), (1, 34)),
    "JobSuccessPolicy": ((1, 30), (1, 31), (1, 33)),
    "JobManagedBy": ((1, 30), (1, 32), (1, 35)),
    "PodIndexLabel": (None, (1, 28), (1, 32)),
    # the Workload API (scheduling.k8s.io/v1beta1 Workload, PodGroup) and pods'
    # spec.schedulingGroup, gang-scheduled by kube-scheduler's GangScheduling plug-in, KEP-4671
    "GenericWorkload": ((1, 35), (1, 37), None),
}
#: Beta features that are not on by default: a cluster serves them only when its
#: administrator turns the gate on (and, for an API, its version with --runtime-config). msgen
#: uses them only when asked to (`--gang-scheduler kubernetes`), from their beta on.
OFF_BY_DEFAULT = frozenset({"GenericWorkload"})


def enabled(feature: str, version: tuple[int, int]) -> bool:
    """Whether `feature` is on by default at `version` (beta or GA, but a beta in
    OFF_BY_DEFAULT only once it is GA)."""
    _alpha, beta, ga = GATES[feature]
    since = ga if feature in OFF_BY_DEFAULT else beta or ga
    return since is not None and version >= since


def served(feature: str, version: tuple[int, int]) -> bool:
    """Whether a cluster of `version` can serve `feature` at all, when its gate is on: from its
    beta (an alpha API is for trying out, and changes between releases)."""
    _alpha, beta, ga = GATES[feature]
    since = beta or ga
    return since is not None and version >= since


def since(feature: str) -> str:
    _alpha, beta, ga = GATES[feature]
    first = beta or ga
    assert first is not None
    return show(first)


def show(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"
