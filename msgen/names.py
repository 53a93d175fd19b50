"""Kubernetes name rules msgen must respect before it derives names from a job's name."""

from __future__ import annotations

import re

DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_LABEL = 63


def dns1035_problem(name: str) -> str | None:
    """Why `name` is not a DNS-1035 label (Service names, pod host names), or None."""
    if len(name) > MAX_LABEL:
        return f"is {len(name)} characters long; accepted: at most {MAX_LABEL}"
    if not DNS1035_LABEL.match(name):
        return (
            "is not a DNS-1035 label; accepted: lower-case letters, digits and '-', "
            "starting with a letter and ending with a letter or digit"
        )
    return None


def dns1123_problem(name: str) -> str | None:
    """Why `name` is not a DNS-1123 label (namespaces), or None."""
    if len(name) > MAX_LABEL:
        return f"is {len(name)} characters long; accepted: at most {MAX_LABEL}"
    if not DNS1123_LABEL.match(name):
        return (
            "is not a DNS-1123 label; accepted: lower-case letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return None


def service_env_prefix(service_name: str) -> str:
    """The prefix of the variables the kubelet injects for a Service (`<NAME>_SERVICE_HOST`)."""
    return service_name.upper().replace("-", "_")
