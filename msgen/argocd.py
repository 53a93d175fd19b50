"""msgen as an Argo CD Config Management Plugin (the cmp-server sidecar runs these commands).

`generate` renders the application's directory. Options, later ones winning:
`ARGOCD_APP_NAMESPACE` (the default namespace), `KUBE_VERSION`, the plugin's env
(`ARGOCD_ENV_MSGEN_TARGET`, ...), the Application's parameters (`PARAM_TARGET`, ...), then
per-job `msgen/<option>` annotations. Argo CD prunes what a generator stops printing, so
generate prints nothing at all unless the whole render succeeded.

`discover` prints the job files of a directory; Argo CD picks this plugin when it prints any.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from . import kinds
from . import options as option_text
from .inputs import SKIPPED_FILES, YAML_SUFFIXES
from .plan import Options


def env_name(option: str) -> str:
    return option.upper().replace("-", "_")


def options_from_env(env: Mapping[str, str]) -> Options:
    """Raises option_text.OptionError naming the variable when a value is not accepted."""
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
