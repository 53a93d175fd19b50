"""Kubernetes name rules msgen must respect before it derives names from a job's name."""

from __future__ import annotations

import re

DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
MAX_LABEL = 63


def dns1035_problem(name: str) -> str | None:
    """Why `name` is not a DNS-1035 label (Service names, pod host names), or None."""
    return _label_problem(name, DNS1035_LABEL, "DNS-1035", "starting with a letter")


def dns1123_problem(name: str) -> str | None:
    """Why `name` is not a DNS-1123 label (namespaces), or None."""
    return _label_problem(name, DNS1123_LABEL, "DNS-1123", "starting with a letter or digit")


def _label_problem(name: str, pattern: re.Pattern[str], kind: str, start: str) -> str | None:
    if len(name) > MAX_LABEL:
        return f"is {len(name)} characters long; accepted: at most {MAX_LABEL}"
    if not pattern.match(name):
        return (
            f"is not a {kind} label; accepted: lower-case letters, digits and '-', "
            f"{start} and ending with a letter or digit"
        )
    return None


def service_env_prefix(service_name: str) -> str:
    """The prefix of the variables the kubelet injects for a Service (`<NAME>_SERVICE_HOST`)."""
    return service_name.upper().replace("-", "_")
