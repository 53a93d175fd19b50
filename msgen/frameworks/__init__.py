"""Framework env contracts, chosen by the key the input kind names in its plan.

A framework is a module whose functions make up `Framework` (each module ends with a block
that has mypy check it against the protocol); a framework that can say where a job asks for
each pod's index also has `ExplainsPodIndex`'s function, an optional hook of its own.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..model.diagnostics import Diagnostic
    from ..model.patch import Patch
    from ..model.plan import Options, Plan, PodSlot
    from ..model.source import Path
    from ..targets.addressing import Addressing, Endpoint


@runtime_checkable
class Framework(Protocol):
    def endpoints(self, plan: Plan) -> list[Endpoint]: ...

    def check(self, plan: Plan, options: Options) -> list[Diagnostic]: ...

    def contribute(self, plan: Plan, slot: PodSlot, addressing: Addressing) -> Patch: ...

    def needs_pod_index(self, plan: Plan) -> bool: ...


@runtime_checkable
class ExplainsPodIndex(Protocol):
    """The optional hook of a framework whose refusal for want of pod indexes should name
    where the job asks for them, and why."""

    def pod_index_reason(self, plan: Plan) -> tuple[Path, str] | None: ...


#: framework key (`Plan.framework`) → module.
_REGISTRY = {
    "mindspore": "msgen.frameworks.mindspore",
    "mindspore-legacy": "msgen.frameworks.mindspore_legacy",
    "mxnet": "msgen.frameworks.mxnet",
    "mxnet-original": "msgen.frameworks.mxnet_original",
    "caffe2": "msgen.frameworks.caffe2",
}


def lookup(name: str) -> Framework:
    framework: Framework = importlib.import_module(_REGISTRY[name])
    return framework
