"""Framework env contracts, chosen by the key the input kind names in its plan."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic
    from ..patch import Patch
    from ..plan import Options, Plan, PodSlot
    from ..targets.addressing import Addressing, Endpoint


class Framework(Protocol):
    def endpoints(self, plan: Plan) -> list[Endpoint]: ...

    def check(self, plan: Plan, options: Options) -> list[Diagnostic]: ...

    def contribute(self, plan: Plan, slot: PodSlot, addressing: Addressing) -> Patch: ...

    def needs_pod_index(self, plan: Plan) -> bool: ...


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
