"""Kubernetes versions msgen renders for (`--kube-version`, or `KUBE_VERSION` from Argo CD)."""

from __future__ import annotations

import re

OLDEST = (1, 25)
#: The newest version whose schemas the tests validate against (kubernetes-validate 1.37).
NEWEST = (1, 37)

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:[.+-].*)?$")


def parse(text: str) -> tuple[int, int]:
    """`1.29`, `v1.29.3` or `1.29+` → (1, 29); ValueError with what is accepted otherwise."""
    match = _VERSION.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a Kubernetes version; accepted: MAJOR.MINOR, e.g. 1.31")
    version = (int(match.group(1)), int(match.group(2)))
    if version < OLDEST:
        raise ValueError(
            f"Kubernetes {text} is older than msgen supports; accepted: {show(OLDEST)} or newer"
        )
    return version


def show(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"
