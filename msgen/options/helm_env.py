"""msgen's options in a Helm post-renderer's environment: `HELM_MSGEN_<OPTION>`.

Helm runs a post-renderer with its own environment (Helm 3 passes it whole; Helm 4 adds its
`HELM_*` settings), so a pipeline can choose msgen's options for every release it installs
once, as `HELM_MSGEN_TARGET=jobset`; `--post-renderer-args` choose them per command and win,
and a job's `msgen/<option>` annotations win for that job. A misspelt `HELM_MSGEN_...`
variable is an error naming the one meant, as a misspelt Argo CD variable is. The prefix is
Helm's and msgen's together, so that no other variable of msgen's (`MSGEN_DEBUG`, ...) can be
taken for an option.
"""

from __future__ import annotations

from collections.abc import Mapping

from .argocd_env import env_layer as _env_layer
from .argocd_env import env_name
from .option_layers import Layer

HOST = "helm"
ENV_PREFIX = "HELM_MSGEN_"


def variable(option: str) -> str:
    """The variable that sets `option`: `HELM_MSGEN_<OPTION>`."""
    return ENV_PREFIX + env_name(option)


def env_layer(env: Mapping[str, str]) -> Layer:
    """The options the environment sets; raises OptionError for a misspelt variable."""
    return _env_layer(env, ENV_PREFIX, HOST)
