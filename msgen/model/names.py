"""Kubernetes name and label rules, once: apimachinery's patterns (`pkg/util/validation`).

msgen respects them before it derives names from a job's name, option checks read them
(msgen.options.text), and so do the API server's rules (msgen.checks.apirules.formats).
"""

from __future__ import annotations

import re

#: one DNS-1123 label, unanchored: subdomains are labels joined by dots
DNS1123_LABEL_PATTERN = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
DNS1123_LABEL = re.compile(rf"^{DNS1123_LABEL_PATTERN}\Z")
#: a label value, empty or not (at most MAX_LABEL characters)
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
#: the longest DNS label, label value or label key name the API server accepts
MAX_LABEL = 63


def dns1035_problem(name: str) -> str | None:
    """Why `name` is not a DNS-1035 label (Service names, pod host names), or None."""
    return _label_problem(name, DNS1035_LABEL, "DNS-1035", "starting with a letter")


def dns1123_problem(name: str) -> str | None:
    """Why `name` is not a DNS-1123 label (namespaces), or None."""
    return _label_problem(name, DNS1123_LABEL, "DNS-1123", "starting with a letter or digit")


def label_value_problem(text: str) -> str | None:
    """Why `text` is not a non-empty label value (a node label an option selects), or None."""
    if text and len(text) <= MAX_LABEL and LABEL_VALUE.match(text):
        return None
    return (
        f"is not a label value; accepted: at most {MAX_LABEL} letters, digits, '-', '_' or '.', "
        "starting and ending with a letter or digit"
    )


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
