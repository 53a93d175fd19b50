"""The core's Go builds: Kubernetes (one multi-call binary), etcd and CoreDNS, each from its
pinned module directory under tests/live/go/. The versions are those the go.mod files pin;
Kubernetes' is the home's release (`releases.py`: `tests/live/go/kube` or `kube-X.Y`).

Kubernetes' components report their version from variables its release build sets with
`-ldflags -X`; a plain `go build` would report v0.0.0, and `msgen apply` reads the server's
minor to render for it, so the build sets them from the pinned version.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import releases
from .core import GO_MODULES, Harness

KUBE_COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy")


def pinned(module_dir: Path, module: str) -> str:
    """The version go.mod requires of `module`."""
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", (module_dir / "go.mod").read_text(), re.M)
    if not found:
        raise ValueError(f"{module_dir}/go.mod does not require {module}")
    return found.group(1)


def kube_version(release: str = releases.DEFAULT) -> str:
    return pinned(releases.module_dir(release), "k8s.io/kubernetes")


def etcd_version() -> str:
    return pinned(GO_MODULES / "etcd", "go.etcd.io/etcd/server/v3")


def coredns_version() -> str:
    return pinned(GO_MODULES / "coredns", "github.com/coredns/coredns")


def build_kube(h: Harness) -> Path:
    """bin/kube, and a link per component name (it dispatches on the name it is called by)."""
    release = releases.recorded(h)
    version = kube_version(release)
    major, minor = version.lstrip("v").split(".")[:2]
    flags = [f"-X k8s.io/component-base/version.{key}={value}" for key, value in (
        ("gitVersion", version), ("gitMajor", major), ("gitMinor", minor), ("gitTreeState", "clean"),
        ("gitCommit", f"k8s.io/kubernetes@{version}"), ("buildDate", "1970-01-01T00:00:00Z"))]
    out = h.go_build(releases.module_dir(release), ".", h.bin / "kube", flags, releases.build_tags(release))
    for name in KUBE_COMPONENTS:
        link = h.bin / name
        if not link.is_symlink():
            link.unlink(missing_ok=True)
            link.symlink_to("kube")
    return out


def build_etcd(h: Harness) -> Path:
    return h.go_build(GO_MODULES / "etcd", "go.etcd.io/etcd/server/v3", h.bin / "etcd")


def build_coredns(h: Harness) -> Path:
    version = coredns_version()
    return h.go_build(GO_MODULES / "coredns", "github.com/coredns/coredns", h.bin / "coredns",
                      [f"-X github.com/coredns/coredns/coremain.GitCommit={version}"])


def build_all(h: Harness) -> None:
    build_etcd(h)
    build_coredns(h)
    build_kube(h)
