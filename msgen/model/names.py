"""Kubernetes' name, key and label rules, once: apimachinery's patterns and words.

Every rule takes a value and returns why it is refused, as a list of Kubernetes' own clauses
(`must be no more than 63 characters`), empty when the value is accepted; `refused` says them
after the value, the one way msgen states a broken name rule, so a message here reads like
the one `kubectl apply` would print, before anything reaches a cluster. msgen holds a job's
name to them before it derives names from it (msgen.kinds.shared), so do the options that
take a name (msgen.options.text), the names a target derives (msgen.targets.addressing) and
the API server's rules (msgen.checks.apirules). The patterns are those of
`k8s.io/apimachinery/pkg/util/validation` and `pkg/api/validate/content` (unchanged from 1.25
to 1.37, the releases msgen renders for). They are kept as text and given to `re.match`,
which compiles a pattern when it is first asked and keeps it (`re`'s own cache): a render
compiles only the rules it uses, and a typical job never asks several of them (environment
variable names, ConfigMap keys, underscore subdomains).
"""

from __future__ import annotations

import re

#: one DNS-1123 label, unanchored: subdomains are labels joined by dots
_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z"
_DNS1123_LABEL_PATTERN = rf"^{_DNS1123_LABEL}\Z"
_DNS1123_SUBDOMAIN_PATTERN = rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*\Z"
_UNDERSCORE_LABEL = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_UNDERSCORE_SUBDOMAIN_PATTERN = rf"^{_UNDERSCORE_LABEL}(\.{_UNDERSCORE_LABEL})*\Z"
#: a label value, empty or not (at most MAX_LABEL characters)
_LABEL_VALUE_PATTERN = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z"
_LABEL_KEY_NAME_PATTERN = r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z"
_ENV_NAME_PATTERN = r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z"
_CONFIG_KEY_PATTERN = r"^[-._a-zA-Z0-9]+\Z"
_PORT_NAME_CHARS_PATTERN = r"^[-a-z0-9]+\Z"

#: the longest DNS label, label value or label key name the API server accepts
MAX_LABEL = 63
#: the longest DNS subdomain (object names) and ConfigMap key
MAX_SUBDOMAIN = 253


def refused(problems: list[str]) -> str:
    """What follows a refused value in a message: `is not accepted: <each problem>`."""
    return "is not accepted: " + "; ".join(problems)


def dns1035_label(value: str) -> list[str]:
    """Service names and the pod host names a target derives from them."""
    out = _longer_than(value, MAX_LABEL)
    if not re.match(_DNS1035_LABEL_PATTERN, value):
        out.append(
            "must be a DNS-1035 label: lower-case letters, digits and '-', starting with a "
            "letter and ending with a letter or digit"
        )
    return out


def dns1123_label(value: str) -> list[str]:
    """Container, volume and port-less names; namespaces; host names."""
    out = _longer_than(value, MAX_LABEL)
    if not re.match(_DNS1123_LABEL_PATTERN, value):
        out.append(
            "must be a lowercase RFC 1123 label: lower-case letters, digits and '-', starting "
            "and ending with a letter or digit"
        )
    return out


def dns1123_subdomain(value: str, *, underscores: bool = False) -> list[str]:
    """Object names (Secrets, ConfigMaps, ServiceAccounts, PriorityClasses, nodes); DNS
    search domains (with `underscores` where Kubernetes relaxed them)."""
    out = _longer_than(value, MAX_SUBDOMAIN)
    pattern = _UNDERSCORE_SUBDOMAIN_PATTERN if underscores else _DNS1123_SUBDOMAIN_PATTERN
    if not re.match(pattern, value):
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
        out += [f"name part {why}" for why in _longer_than(name, MAX_LABEL)]
        if not re.match(_LABEL_KEY_NAME_PATTERN, name):
            out.append(
                "name part must consist of letters, digits, '-', '_' or '.', and start and end "
                "with a letter or digit"
            )
    return out


def label_value(value: str, *, empty: bool = True) -> list[str]:
    """A label's value; `empty`: the empty value is accepted (as on an object, not where an
    option selects a node label)."""
    out = _longer_than(value, MAX_LABEL)
    if not re.match(_LABEL_VALUE_PATTERN, value) or not (value or empty):
        out.append(
            ("must be empty or consist" if empty else "must consist")
            + " of letters, digits, '-', '_' or '.', and start and end with a letter or digit"
        )
    return out


def port_name(value: str) -> list[str]:
    """An IANA service name (RFC 6335), lower case: how Services and probes refer to a port."""
    out = _longer_than(value, 15)
    if not re.match(_PORT_NAME_CHARS_PATTERN, value):
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
    if not re.match(_ENV_NAME_PATTERN, value):
        out.append(
            "must consist of letters, digits, '_', '-' or '.', and must not start with a digit"
        )
    return out + _chdir_prefix(value)


def config_key(value: str) -> list[str]:
    """A ConfigMap or Secret key."""
    out = _longer_than(value, MAX_SUBDOMAIN)
    if not re.match(_CONFIG_KEY_PATTERN, value):
        out.append("must consist of letters, digits, '-', '_' or '.'")
    return out + _chdir_prefix(value)


def service_env_prefix(service_name: str) -> str:
    """The prefix of the variables the kubelet injects for a Service (`<NAME>_SERVICE_HOST`)."""
    return service_name.upper().replace("-", "_")


def _longer_than(value: str, limit: int) -> list[str]:
    return [f"must be no more than {limit} characters"] if len(value) > limit else []


def _chdir_prefix(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"must not be {value!r}"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []
