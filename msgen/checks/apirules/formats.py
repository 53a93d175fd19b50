"""The string formats the API server checks names and keys against, as apimachinery writes them.

Each function returns why a value is refused (empty when it is accepted), in Kubernetes' own
words where they are clear, so a message here reads like the one `kubectl apply` would print,
but before anything reaches a cluster. The patterns are those of
`k8s.io/apimachinery/pkg/util/validation` and `pkg/api/validate/content` (unchanged from 1.25 to
1.36, the releases msgen renders for).
"""

from __future__ import annotations

import re

from ...model.names import DNS1123_LABEL as _DNS1123_LABEL_RE
from ...model.names import DNS1123_LABEL_PATTERN as _DNS1123_LABEL
from ...model.names import LABEL_VALUE as _LABEL_VALUE_RE
from ...model.names import MAX_LABEL as LABEL_MAX

_DNS1123_SUBDOMAIN_RE = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*\Z")
_UNDERSCORE_LABEL = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_UNDERSCORE_SUBDOMAIN_RE = re.compile(rf"^{_UNDERSCORE_LABEL}(\.{_UNDERSCORE_LABEL})*\Z")
_LABEL_KEY_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_ENV_NAME_RE = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
_CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+\Z")
_PORT_NAME_CHARS_RE = re.compile(r"^[-a-z0-9]+\Z")

SUBDOMAIN_MAX = 253


def dns1123_label(value: str) -> list[str]:
    """Container, volume and port-less names; namespaces; host names."""
    out = [f"must be no more than {LABEL_MAX} characters"] if len(value) > LABEL_MAX else []
    if not _DNS1123_LABEL_RE.match(value):
        out.append(
            "must be a lowercase RFC 1123 label: lower-case letters, digits and '-', starting "
            "and ending with a letter or digit"
        )
    return out


def dns1123_subdomain(value: str, *, underscores: bool = False) -> list[str]:
    """Object names (Secrets, ConfigMaps, ServiceAccounts, PriorityClasses, nodes); DNS
    search domains (with `underscores` where Kubernetes relaxed them)."""
    out = [f"must be no more than {SUBDOMAIN_MAX} characters"] if len(value) > SUBDOMAIN_MAX else []
    pattern = _UNDERSCORE_SUBDOMAIN_RE if underscores else _DNS1123_SUBDOMAIN_RE
    if not pattern.match(value):
        allowed = "'_', '-' or '.'" if underscores else "'-' or '.'"
        out.append(
            f"must be a lowercase RFC 1123 subdomain: lower-case letters, digits, {allowed}, "
            "starting and ending with a letter or digit"
        )
    return out


def qualified_name(value: str) -> list[str]:
    """Label and annotation keys, resource names: `[prefix/]name`."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "must be a name with an optional DNS subdomain prefix and one '/' (example.com/name)"
        ]
    out = []
    if len(parts) == 2:
        if not parts[0]:
            out.append("has an empty prefix before '/'")
        else:
            out += [f"prefix {why}" for why in dns1123_subdomain(parts[0])]
    name = parts[-1]
    if not name:
        out.append("has an empty name part")
    else:
        if len(name) > LABEL_MAX:
            out.append(f"name part must be no more than {LABEL_MAX} characters")
        if not _LABEL_KEY_NAME_RE.match(name):
            out.append(
                "name part must consist of letters, digits, '-', '_' or '.', and start and end "
                "with a letter or digit"
            )
    return out


def label_value(value: str) -> list[str]:
    out = [f"must be no more than {LABEL_MAX} characters"] if len(value) > LABEL_MAX else []
    if not _LABEL_VALUE_RE.match(value):
        out.append(
            "must be empty or consist of letters, digits, '-', '_' or '.', and start and end "
            "with a letter or digit"
        )
    return out


def port_name(value: str) -> list[str]:
    """An IANA service name (RFC 6335), lower case: how Services and probes refer to a port."""
    out = ["must be no more than 15 characters"] if len(value) > 15 else []
    if not _PORT_NAME_CHARS_RE.match(value):
        out.append("must contain only lower-case letters, digits and '-'")
    if not re.search("[a-z]", value):
        out.append("must contain at least one letter (a-z)")
    if "--" in value:
        out.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def env_name(value: str, *, relaxed: bool) -> list[str]:
    """An env var name: any printable ASCII but '=' where Kubernetes relaxed the rule (1.32),
    a C-like identifier (letters, digits, '_', '-', '.', not starting with a digit) before."""
    if relaxed:
        if not value:
            return ["must not be empty"]
        if any(not " " <= c <= "~" or c == "=" for c in value):
            return ["must consist only of printable ASCII characters other than '='"]
        return []
    out = []
    if not _ENV_NAME_RE.match(value):
        out.append(
            "must consist of letters, digits, '_', '-' or '.', and must not start with a digit"
        )
    return out + _chdir_prefix(value)


def config_key(value: str) -> list[str]:
    """A ConfigMap or Secret key."""
    out = [f"must be no more than {SUBDOMAIN_MAX} characters"] if len(value) > SUBDOMAIN_MAX else []
    if not _CONFIG_KEY_RE.match(value):
        out.append("must consist of letters, digits, '-', '_' or '.'")
    return out + _chdir_prefix(value)


def _chdir_prefix(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"must not be {value!r}"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []
