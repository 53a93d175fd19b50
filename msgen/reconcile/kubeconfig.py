"""Which cluster a reconciler command talks to: kubectl's rules for finding a kubeconfig.

kubectl reads `--kubeconfig FILE`, else `$KUBECONFIG`, a list of files (`:`-separated, `;`
on Windows) that it merges, else `~/.kube/config`, and inside a pod with none of these, the
pod's service account. Users script msgen next to kubectl, so msgen finds the same cluster:
the merge follows client-go's `clientcmd` (the first file to set `current-context` or a
cluster, context or user of a given name wins; a relative certificate or token path is
relative to the file that names it). `merged` is pure.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: Per entry kind, the fields that hold file paths (resolved against their own file).
_PATHS = {
    "clusters": ("cluster", ("certificate-authority",)),
    "users": ("user", ("client-certificate", "client-key", "tokenFile")),
}
_SECTIONS = ("clusters", "contexts", "users")


def merged(files: list[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """One kubeconfig from several, as kubectl merges a `$KUBECONFIG` list."""
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", **{s: [] for s in _SECTIONS}}
    seen: dict[str, set[str]] = {s: set() for s in _SECTIONS}
    for path, conf in files:
        if not isinstance(conf, dict):
            continue
        if conf.get("current-context") and "current-context" not in out:
            out["current-context"] = conf["current-context"]
        for section in _SECTIONS:
            for entry in conf.get(section) or []:
                name = (entry or {}).get("name")
                if not name or name in seen[section]:
                    continue
                seen[section].add(name)
                out[section].append(_absolute(section, entry, path.parent))
    return out


def _absolute(section: str, entry: dict[str, Any], base: Path) -> dict[str, Any]:
    if section not in _PATHS:
        return dict(entry)
    key, fields = _PATHS[section]
    body = dict(entry.get(key) or {})
    for name in fields:
        if isinstance(body.get(name), str) and body[name] and not Path(body[name]).is_absolute():
            body[name] = str(base / body[name])
    return {**entry, key: body}


def sources(explicit: str | None, env: dict[str, str] | None = None) -> list[Path] | None:
    """The kubeconfig files to read, in order; None: no file, use the in-cluster account."""
    env = dict(os.environ) if env is None else env
    if explicit:
        return [Path(explicit).expanduser()]
    listed = [Path(p).expanduser() for p in env.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        return listed
    default = Path("~/.kube/config").expanduser()
    return [default] if default.exists() or not _in_cluster(env) else None


def _in_cluster(env: dict[str, str]) -> bool:
    return bool(env.get("KUBERNETES_SERVICE_HOST")) and Path(
        "/var/run/secrets/kubernetes.io/serviceaccount/token").exists()


def describe(files: list[Path] | None) -> str:
    if files is None:
        return "the pod's service account"
    return os.pathsep.join(str(f) for f in files)


def load(explicit: str | None, context: str | None) -> Any:
    """lightkube's SingleConfig for the kubeconfig and context kubectl would use.
    Raises ValueError (a file named but missing, unreadable YAML, an unknown context)."""
    import yaml
    from lightkube import KubeConfig
    from lightkube.core.exceptions import ConfigError

    files = sources(explicit)
    try:
        if files is None:
            return KubeConfig.from_service_account().get(context_name=context)
        found = [f for f in files if f.exists()]
        if not found:
            raise ValueError(f"no kubeconfig file at {describe(files)}")
        loaded = []
        for path in found:
            with open(path, encoding="utf-8") as stream:
                loaded.append((path.resolve(), yaml.safe_load(stream) or {}))
        conf = merged(loaded)
        single = KubeConfig.from_dict(conf, fname=loaded[0][0]).get(context_name=context)
        if single is not None and single.user is None:  # no user: kubectl talks to it anonymously
            from lightkube.config.models import User

            single = single._replace(user=User())
        return single
    except (ConfigError, OSError, KeyError, TypeError, yaml.YAMLError) as exc:
        raise ValueError(f"{describe(files)}: {exc}") from None
