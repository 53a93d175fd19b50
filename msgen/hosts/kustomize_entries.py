"""How kustomize reads one entry of a kustomization: a remote URL, inline YAML, or a path.

Read from kustomize's own source, for the two versions msgen supports: 4.5.4 (`api` v0.11.4)
and 5.x (`api` v0.18.0, kustomize 5.5.0); where they differ an entry counts as remote when
either would fetch it, so a check made on local files never passes over what one of them
would load from elsewhere.

- A file is remote when `url.Parse` finds the scheme `http` or `https`
  (`loader.IsRemoteFile`; 4.5.4 inlines the same test in `fileLoader.Load`); it is fetched
  with an HTTP GET.
- A directory (a base, a component, a directory of plug-in configs) is remote when
  `git.NewRepoSpecFromURL` (5.x) or `git.NewRepoSpecFromUrl` (4.5.4) parses it: it is cloned.
  `remote_repository` follows both parsers step by step.
- `resources`, `bases` and the plug-in fields try an entry as a file first and then as a
  directory (`KustTarget.accumulateResources`): a local regular file wins over a repository
  spelling; `components` are directories only.
- An entry of `generators`, `transformers` or `validators` is inline YAML when kustomize's
  resource factory reads objects from its text (`configureExternalGenerators`): text with a
  mapping in it (`inline_objects` reads that text with msgen's own loader).
"""

from __future__ import annotations

import os
import posixpath
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: `url.Parse`'s scheme: a letter, then letters, digits, `+`, `-`, `.`, then `:`.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
#: 5.x `extractUsername`.
_USERNAME = re.compile(r"^([a-zA-Z][a-zA-Z0-9-]*)@")
_V5_SCHEMES = ("ssh://", "https://", "http://", "file://")
#: 4.5.4 `parseHostSpec`, in its order.
_V4_HOST_PREFIXES = ("git::", "gh:", "ssh://", "https://", "http://", "git@", "github.com:", "github.com/")


def remote_file(entry: str) -> bool:
    """Whether kustomize fetches `entry` over HTTP instead of reading a file: Go's `url.Parse`
    succeeds and finds the scheme http or https."""
    found = _SCHEME.match(entry)
    return found is not None and found.group(1).lower() in ("http", "https") and _go_url_parses(entry, len(found.group(0)))


def _go_url_parses(text: str, after_scheme: int) -> bool:
    """Go's `url.Parse` of a URL with a scheme succeeds (net/url `parse`, `parseAuthority`,
    `parseHost`, `unescape`): no control byte, valid escapes, a numeric port, a user and a host
    of the characters it allows."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return False
    url, _, fragment = text.partition("#")
    rest = url[after_scheme:]
    if not (rest.endswith("?") and rest.count("?") == 1):
        rest = rest.split("?", 1)[0]
    if not rest.startswith("/"):
        return _escapes(fragment)  # an opaque URL: nothing more is parsed
    path = rest
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        path = slash + path
        user, at, host = authority.rpartition("@")
        if not _host(host) or (at and not (_USERINFO.fullmatch(user) and _escapes(user))):
            return False
    return _escapes(path.rstrip("?")) and _escapes(fragment)


_USERINFO = re.compile(r"[A-Za-z0-9\-._:~!$&'()*+,;=%@]*")
_HOST_CHARACTERS = re.compile(r"[A-Za-z0-9!$&'()*+,;=:\[\]<>\"\-_.~%\x80-\U0010FFFF]*")


def _escapes(text: str) -> bool:
    """Every `%` starts an escape of two hex digits."""
    return all(re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 1 : i + 3]) for i, c in enumerate(text) if c == "%")


def _host(host: str) -> bool:
    if host.startswith("["):
        close = host.rfind("]")
        return close >= 0 and re.fullmatch(r"(:[0-9]*)?", host[close + 1 :]) is not None
    colon = host.rfind(":")
    if colon >= 0 and not re.fullmatch(r":[0-9]*", host[colon:]):
        return False
    if not _HOST_CHARACTERS.fullmatch(host) or not _escapes(host):
        return False
    # in a host, % escapes only bytes of 0x80 and up (or %25)
    return all(int(host[i + 1], 16) >= 8 or host[i : i + 3] == "%25" for i, c in enumerate(host) if c == "%")


def remote_repository(entry: str) -> bool:
    """Whether kustomize 4.5.4 or 5.x clones `entry` as a Git repository."""
    return _repository_v5(entry) or _repository_v4(entry)


def local_repository(entry: str) -> bool:
    """A repository on the sidecar's own disk (`file://`): cloning it reads outside the
    application's repository."""
    return entry[:7].lower() == "file://" or entry[:12].lower() == "git::file://"


def _trim(text: str, prefix: str) -> tuple[str, bool]:
    if len(prefix) <= len(text) and text[: len(prefix)].lower() == prefix:
        return text[len(prefix) :], True
    return text, False


def _repository_v5(n: str) -> bool:
    """`git.NewRepoSpecFromURL` of kustomize 5.x (api v0.18.0) succeeds."""
    if n.startswith("/"):
        return False
    n = n.split("?", 1)[0]
    n, _forced = _trim(n, "git::")
    scheme = next((s for s in _V5_SCHEMES if _trim(n, s)[1]), "")
    n = n[len(scheme) :]
    user = _USERNAME.match(n)
    username = user.group(0) if user else ""
    n = n[len(username) :]
    github = n.lower().startswith(("github.com/", "github.com:"))
    scp = scheme == "" and (username != "" or github)
    if scheme == "" and not scp:
        return False
    if scheme == "file://":
        return _repository_path_v5(username + n, all_segments=True)
    separator = n.find("/")
    if scp:
        colon = n.find(":")
        if separator == -1 or 0 < colon < separator:
            separator = colon
    host, rest = (n[: separator + 1], n[separator + 1 :]) if separator >= 0 else (n, "")
    if github:
        host = "github.com/"
    if host == "":
        return False
    return _repository_path_v5(rest, all_segments=False)


def _repository_path_v5(n: str, *, all_segments: bool) -> bool:
    """`parsePathParts`: a repository path, and a path in it that does not climb out."""
    if "_git/" in n:
        index = n.index("_git/") + len("_git/")
        repo, root = n[:index] + n[index:].split("/")[0], "/".join(n[index:].split("/")[1:])
    elif "//" in n:
        repo, root = n[: n.index("//")], n[n.index("//") + 2 :]
    elif ".git" in n:
        repo, root = n[: n.index(".git") + 4], n[n.index(".git") + 4 :]
    elif all_segments:
        repo, root = n, ""
    else:
        segments = n.split("/")
        if len(segments) < 2:
            return False
        repo, root = "/".join(segments[:2]), "/".join(segments[2:])
    if not repo:
        return False
    cleaned = posixpath.normpath(root.lstrip("/")) if root.lstrip("/") else "."
    return cleaned.split("/")[0] != ".."


def _repository_v4(n: str) -> bool:
    """`git.NewRepoSpecFromUrl` of kustomize 4.5.4 (api v0.11.4) succeeds: a host and an
    organisation/repository."""
    if n.startswith("/"):
        return False
    if "_git/" in n:
        index = n.index("_git/")
        host = _normalized_host_v4(n[: index + len("_git/")])
        org_repo = n[index + len("_git/") :].split("/")[0].split("?")[0]
        return host != "" and org_repo != ""
    host, n = _host_v4(n)
    if ".git" in n:
        org_repo = n[: n.index(".git")]
    else:
        i = n.find("/")
        if i < 1:
            org_repo = ""
        else:
            j = n.find("/", i + 1)
            org_repo = n[:j] if j >= 0 else _query_path(n)
    return host != "" and org_repo != ""


def _host_v4(n: str) -> tuple[str, str]:
    """4.5.4 `parseHostSpec`."""
    host = ""
    for prefix in _V4_HOST_PREFIXES:
        if len(prefix) < len(n) and n[: len(prefix)].lower() == prefix:
            n = n[len(prefix) :]
            host += prefix
    if host == "git@":
        for separator in ("/", ":"):
            i = n.find(separator)
            if i > -1:
                return host + n[: i + 1], n[i + 1 :]
        return host, n
    for scheme in ("ssh://", "https://", "http://"):
        if host.endswith(scheme):
            i = n.find("/")
            if i > -1:
                host, n = host + n[: i + 1], n[i + 1 :]
            break
    return _normalized_host_v4(host), n


def _normalized_host_v4(host: str) -> str:
    """4.5.4 `normalizeGitHostSpec`."""
    lowered = host.lower()
    if "github.com" in lowered:
        host = "git@github.com:" if "git@" in lowered or "ssh:" in lowered else "https://github.com/"
    if lowered.startswith("git::"):
        host = lowered[len("git::") :]
    return host


def _query_path(text: str) -> str:
    """4.5.4's `peelQuery`: `url.Parse(text).Path`, or the whole text when Go cannot parse it
    (an opaque `scheme:rest`, such as `example.com:org/repo`, has no path)."""
    found = _SCHEME.match(text)
    url = text.partition("#")[0]
    rest = url[len(found.group(0)) :] if found else url
    if not (rest.endswith("?") and rest.count("?") == 1):
        rest = rest.split("?", 1)[0]
    if found and not _go_url_parses(text, len(found.group(0))):
        return text
    if not found and (":" in rest.split("/", 1)[0] or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)
                      or not _escapes(rest) or not _escapes(text.partition("#")[2])):  # fmt: skip
        return text
    if found and not rest.startswith("/"):
        return ""
    if rest.startswith("//") and (found or not rest.startswith("///")):
        rest = "/" + rest[2:].partition("/")[2] if "/" in rest[2:] else ""
    return rest.rstrip("?") if rest.endswith("?") and rest.count("?") == 1 else rest


def inline_objects(entry: str) -> list[Any] | None:
    """The objects of an entry kustomize reads as inline YAML; None for a path.

    kustomize takes an entry as inline when its resource factory reads objects from the text
    (objects need a `kind` and a `metadata.name`: a line without a line break, `{`, `[` or
    `:` holds none, and is a path). msgen takes it as inline whenever the text is YAML holding
    more than one plain scalar, and raises InlineUnreadable when its loader refuses the text:
    either way the objects are checked before kustomize reads them."""
    from ..model.diagnostics import InputError
    from ..model.source import Source
    from ..yamlio.yaml_loader import load_documents

    if "\n" not in entry and not any(c in entry for c in "{[:"):
        return None
    try:
        documents = load_documents(Source("<inline>", entry))
    except InputError:
        raise InlineUnreadable(entry) from None
    data = [d.data for d in documents]
    if len(data) == 1 and not isinstance(data[0], (dict, list)):
        return None
    return data


class InlineUnreadable(Exception):
    """An entry that may be inline YAML and that msgen's loader cannot read."""


def local_path(directory: str, entry: str) -> str:
    """Where kustomize looks for `entry` of a kustomization in `directory` on disk
    (`ConfirmedDir.Join`, `filepath.Join`: the lexical join, `..` resolved as text)."""
    return os.path.normpath(os.path.join(directory, entry))
