"""msgen as an Argo CD Config Management Plugin (the cmp-server sidecar runs these commands).

`generate` renders the application's directory. Options, later ones winning:
`ARGOCD_APP_NAMESPACE` (the default namespace), `KUBE_VERSION`, the plugin's env
(`ARGOCD_ENV_MSGEN_TARGET`, ...), the Application's parameters (`PARAM_TARGET`, ...), then
per-job `msgen/<option>` annotations. Argo CD prunes what a generator stops printing, so
generate prints nothing at all unless the whole render succeeded.

`discover` prints the job files of a directory; Argo CD picks this plugin when it prints any.
A directory with a kustomization is built with kustomize (argocd_kustomize.py); discover
prints its kustomization file when the overlay reaches a job or runs msgen-krm.
A misspelt `ARGOCD_ENV_MSGEN_...` variable is an error, as a misspelt annotation is.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from . import kinds
from . import options as option_text
from .argocd_kustomize import files_reached, kustomization_in
from .inputs import SKIPPED_FILES, YAML_SUFFIXES
from .plan import Options


def env_name(option: str) -> str:
    return option.upper().replace("-", "_")


ENV_PREFIX = "ARGOCD_ENV_MSGEN_"


def env_variables() -> list[str]:
    """Every `ARGOCD_ENV_MSGEN_<OPTION>` variable the plugin reads, in option order."""
    return [ENV_PREFIX + env_name(option) for option in option_text.OPTION_NAMES]


def check_env_names(env: Mapping[str, str]) -> None:
    """A misspelt `ARGOCD_ENV_MSGEN_...` variable is an error, as a misspelt annotation is."""
    known = env_variables()
    for key in sorted(env):
        if key.startswith(ENV_PREFIX) and key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise option_text.OptionError(
                key,
                f"unknown msgen variable {key!r}{hint}; accepted: {', '.join(known)}",
                unknown_name=True,
            )


def options_from_env(env: Mapping[str, str]) -> Options:
    """Raises option_text.OptionError naming the variable when a value is not accepted."""
    check_env_names(env)
    layers = [{"namespace": "ARGOCD_APP_NAMESPACE", "kube-version": "KUBE_VERSION"}]
    for prefix in ("ARGOCD_ENV_MSGEN_", "PARAM_"):
        layers.append({option: prefix + env_name(option) for option in option_text.OPTION_NAMES})
    options = Options()
    for layer in layers:
        values = {o: env[v] for o, v in layer.items() if env.get(v)}
        options = option_text.apply(options, values, shown_as=layer)
    return options


def discover(directory: str) -> list[str]:
    """Relative paths of the YAML files below `directory` that hold a job kind msgen compiles."""
    patterns = [
        re.compile(
            rf"^apiVersion:\s*['\"]?{re.escape(api)}['\"]?\s*$.*?^kind:\s*['\"]?{kind}['\"]?\s*$"
            rf"|^kind:\s*['\"]?{kind}['\"]?\s*$.*?^apiVersion:\s*['\"]?{re.escape(api)}['\"]?\s*$",
            re.MULTILINE | re.DOTALL,
        )
        for api, kind in kinds.known_kinds()
    ]
    if kustomization_in(directory) is not None:
        return _discover_kustomization(directory, patterns)
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.endswith(YAML_SUFFIXES) or name in SKIPPED_FILES:
                continue
            path = os.path.join(root, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as stream:
                    text = stream.read(1 << 20)
            except OSError:
                continue
            if any(p.search(text) for p in patterns):
                found.append(os.path.relpath(path, directory))
    return found


def _discover_kustomization(directory: str, patterns: list[re.Pattern[str]]) -> list[str]:
    """A kustomization is the plugin's when what it reaches holds a job or runs msgen-krm."""
    kustomization = kustomization_in(directory)
    assert kustomization is not None
    for path in files_reached(Path(directory)):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[: 1 << 20]
        except OSError:
            continue
        if "msgen-krm" in text or any(p.search(text) for p in patterns):
            return [kustomization.name]
    return []
