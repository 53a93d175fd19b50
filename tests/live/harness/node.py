"""The single node: etcd, the control plane, containerd, the kubelet, kube-proxy and CoreDNS."""

from __future__ import annotations

from . import binaries
from .core import Harness, HarnessError


def build(h: Harness) -> None:
    binaries.build_all(h)


def up(h: Harness) -> dict[str, str]:
    raise HarnessError("the node does not start yet")


def down(h: Harness) -> None:
    pass


def status(h: Harness) -> str:
    return "node: not started"
