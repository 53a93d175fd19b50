"""The Kubernetes releases the harness builds and runs: `up --kube-version X.Y`.

Each release is a module directory of its own under tests/live/go/ (`kube` for the default
release, `kube-X.Y` for the others), whose go.mod pins `k8s.io/kubernetes` and every staging
module `k8s.io/*` at the same release; the one binary's `main.go` follows that release's command
constructors. A release runs from a harness home of its own (`/root/.cache/msgen-harness-X.Y`
unless `MSGEN_HARNESS_HOME` names one), which remembers its release in `etc/kube-version`: etcd's
data written by one release is never served by another, and two releases' binaries never share a
`bin/`.

What differs between releases, the harness states here, not in the templates' callers: the
configuration fields a release's kubelet or kube-proxy does not know (dropped below the release
that added them), and the releases the module proxy does not serve whole (`REFUSED`, with the
modules it refuses, so `up` names them instead of failing half-way through a build).
"""

from __future__ import annotations

import re
from pathlib import Path

from .core import GO_MODULES, Harness, HarnessError

#: The release `tests/live/cluster up` runs without --kube-version (module directory `kube`).
DEFAULT = "1.37"
DEFAULT_HOME = Path("/root/.cache/msgen-harness")

#: Releases msgen claims that cannot be built here, and why (what the Go module proxy refused
#: when the release's go.mod was resolved; docs/development.md has the whole record).
REFUSED = {
    "1.25": "k8s.io/kubernetes v1.25.16 needs k8s.io/cluster-bootstrap, controller-manager, "
            "kube-controller-manager and kube-proxy at v0.25.16, which the Go module proxy refuses (403)",
    "1.26": "k8s.io/kubernetes v1.26.15 needs k8s.io/controller-manager, kube-controller-manager and "
            "kube-proxy at v0.26.15, which the Go module proxy refuses (403)",
    "1.27": "k8s.io/kubernetes v1.27.16's kubelet imports k8s.io/legacy-cloud-providers v0.27.16, whose "
            "go.mod the checksum database does not know (404 through the proxy): it cannot be verified",
    "1.29": "k8s.io/kubernetes v1.29.6 needs k8s.io/endpointslice, kube-controller-manager and "
            "legacy-cloud-providers at v0.29.6, which the Go module proxy refuses (403)",
    "1.38": "k8s.io/kubernetes v1.38.0-beta.0 needs k8s.io/apiextensions-api and k8s.io/ktesting "
            "(any version), sigs.k8s.io/iptables-wrappers v1.0.0 and sigs.k8s.io/structured-merge-diff/v7 "
            "v7.0.1, which the Go module proxy refuses (403)",
}

#: Top-level fields of a configuration template → the first release that knows them. Below it
#: the field is left out: the release has no such setting (and `failCgroupV1`'s refusal of
#: cgroup v1, which the field turns off, came with it).
FIELDS_SINCE: dict[str, dict[str, tuple[int, int]]] = {
    "kubelet.yaml": {"failCgroupV1": (1, 31), "podLogsDir": (1, 30)},
}

#: The first release whose kubelet takes `podLogsDir`: below it every kubelet writes pod logs
#: to /var/log/pods and deletes the directories there it does not know, so a second kubelet on
#: the machine (an extra node, `up --nodes`) would delete the first one's pods' logs.
EXTRA_NODES_SINCE = FIELDS_SINCE["kubelet.yaml"]["podLogsDir"]

#: The last release with cloud providers in the tree: up to it the build leaves them out
#: (`-tags providerless`, as Kubernetes' own build can), which saves compiling the cloud SDKs
#: (a sixth of 1.28's packages) that a harness with no cloud never runs.
LAST_WITH_CLOUD_PROVIDERS = (1, 30)

#: The first release whose API server finds the Service of a webhook or an aggregated API
#: through its EndpointSlices (k8s.io/kube-aggregator's `NewEndpointServiceResolver`, v0.34);
#: below it, through the Service's v1 Endpoints, which a host process's Service then needs too.
SLICES_RESOLVE_SERVICES_FROM = (1, 34)

_MINOR = re.compile(r"^1\.(\d+)\Z")


def module_dir(release: str) -> Path:
    return GO_MODULES / ("kube" if release == DEFAULT else f"kube-{release}")


def available() -> list[str]:
    """The releases with a module directory, oldest first."""
    found = {DEFAULT} | {p.name.removeprefix("kube-") for p in GO_MODULES.glob("kube-1.*") if (p / "go.mod").is_file()}
    return sorted(found, key=minor)


def minor(release: str) -> tuple[int, int]:
    match = _MINOR.match(release)
    if match is None:
        raise HarnessError(f"--kube-version {release!r}: accepted: MAJOR.MINOR, one of {', '.join(available())}")
    return (1, int(match.group(1)))


def check(release: str) -> str:
    """`release` when the harness can build it; HarnessError naming what is accepted (and why
    a release msgen claims is not) otherwise."""
    version = release.strip().removeprefix("v")
    version = ".".join(version.split(".")[:2])
    minor(version)
    if version in available():
        return version
    why = f" ({REFUSED[version]})" if version in REFUSED else ""
    raise HarnessError(f"--kube-version {release}: not buildable here{why}; accepted: {', '.join(available())}")


def check_nodes(release: str, count: int) -> None:
    """HarnessError for extra nodes (`count` > 1) on a release whose kubelets cannot keep
    their pod logs apart (EXTRA_NODES_SINCE)."""
    if count > 1 and minor(release) < EXTRA_NODES_SINCE:
        raise HarnessError(f"--nodes {count} on Kubernetes {release}: extra nodes need the kubelet's podLogsDir, "
                           f"from {'.'.join(map(str, EXTRA_NODES_SINCE))} (each node's kubelet would delete the "
                           "others' pod logs); --nodes 1 runs the one node")


def build_tags(release: str) -> tuple[str, ...]:
    return ("providerless",) if minor(release) <= LAST_WITH_CLOUD_PROVIDERS else ()


def home(release: str) -> Path:
    """The harness home a release runs from when MSGEN_HARNESS_HOME names none."""
    return DEFAULT_HOME if release == DEFAULT else DEFAULT_HOME.with_name(f"{DEFAULT_HOME.name}-{release}")


def fields(template: str, text: str, release: str) -> str:
    """`text` (a filled template) without the top-level fields `release` does not know."""
    since = FIELDS_SINCE.get(template, {})
    unknown = {name for name, first in since.items() if minor(release) < first}
    if not unknown:
        return text
    return "".join(line for line in text.splitlines(keepends=True) if line.split(":", 1)[0] not in unknown)


def recorded(h: Harness) -> str:
    """The release the home `h` runs (DEFAULT for a home that has not said)."""
    path = h.etc / "kube-version"
    return path.read_text().strip() if path.exists() else DEFAULT


def choose(h: Harness, requested: str | None) -> str:
    """Record `requested` as the home's release, unless the home already runs another: etcd's
    data would be served by a release that did not write it (a newer one migrates it, an older
    one may not read it), so a home keeps its release."""
    if requested is None:
        return recorded(h)
    release = check(requested)
    path = h.etc / "kube-version"
    if path.exists() and recorded(h) != release:
        raise HarnessError(f"{h.home} runs Kubernetes {recorded(h)}: run {release} from a home of its own "
                           f"(MSGEN_HARNESS_HOME unset: {home(release)})")
    if not path.exists() and release != DEFAULT and (h.data / "etcd").exists():
        raise HarnessError(f"{h.home} holds etcd data of Kubernetes {DEFAULT}: run {release} from a home of its own")
    path.write_text(release + "\n")
    return release


def resolves_services_by_endpoints(release: str) -> bool:
    """Whether `release`'s API server reaches a webhook's Service through v1 Endpoints."""
    return minor(release) < SLICES_RESOLVE_SERVICES_FROM
