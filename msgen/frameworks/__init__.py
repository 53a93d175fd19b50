"""Framework env contracts, chosen by the key the input kind names in its plan.

A framework is a module implementing `Framework` (`msgen.model.extension_points`, where every
extension point is named; each module ends with a block that has mypy check it against the
interfaces it implements), and those of the optional interfaces it needs: `ChecksJob` (its
contract's findings), `NeedsPodIndex` (its env tells a pod its index), `ExplainsPodIndex`
(where a job asks for that). The functions below ask a framework for those only where it has
them, so no framework writes a function that does nothing.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..model.diagnostics import Diagnostic
    from ..model.extension_points import Framework
    from ..model.plan import Options, Plan
    from ..model.source import Path

#: framework key (`Plan.framework`) → module.
_REGISTRY = {
    "mindspore": "msgen.frameworks.mindspore",
    "mindspore-legacy": "msgen.frameworks.mindspore_legacy",
    "mxnet": "msgen.frameworks.mxnet",
    "mxnet-original": "msgen.frameworks.mxnet_original",
    "caffe2": "msgen.frameworks.caffe2",
}


def lookup(name: str) -> Framework:
    __import__(_REGISTRY[name])  # import_module without loading importlib's package
    framework: Framework = sys.modules[_REGISTRY[name]]
    return framework


def check(framework: Framework, plan: Plan, options: Options) -> list[Diagnostic]:
    """The framework's findings about the job (`ChecksJob`), none where it checks nothing."""
    hook = getattr(framework, "check", None)
    return [] if hook is None else list(hook(plan, options))


def needs_pod_index(framework: Framework, plan: Plan) -> bool:
    """Whether the framework tells a pod its own index (`NeedsPodIndex`); no, without it."""
    hook = getattr(framework, "needs_pod_index", None)
    return hook is not None and bool(hook(plan))


def pod_index_reason(framework: Framework, plan: Plan) -> tuple[Path, str] | None:
    """Where, and why, the job asks for pods' indexes (`ExplainsPodIndex`), where it says."""
    hook = getattr(framework, "pod_index_reason", None)
    if hook is None:
        return None
    found: tuple[Path, str] | None = hook(plan)
    return found
