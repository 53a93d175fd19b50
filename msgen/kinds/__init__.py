"""Input kinds, found by `apiVersion` + `kind` in one registry.

Each kind is a module with a `KIND` object (a `JobKind`, `msgen.model.extension_points`): its
input model and its `to_plan`, written on the skeleton every kind shares (`shared.InputKind`);
a module that serves two groups names the second object (`module:NAME`).
Modules are imported on first use, so a render pays only for the kinds it meets.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..model.extension_points import JobKind


_REGISTRY: dict[tuple[str, str], str] = {
    ("mindspore.gitee.com/v1", "MSJob"): "msgen.kinds.msjob",
    ("kubeflow.org/v1", "MXJob"): "msgen.kinds.mxjob.v1",
    ("mxnet.mlkube.io/v1beta1", "MxJob"): "msgen.kinds.mxjob.v1beta1",
    ("mlkube.io/v1beta1", "MxJob"): "msgen.kinds.mxjob.v1beta1:SEED_KIND",
    ("kubeflow.org/v1", "MSJob"): "msgen.kinds.msjob_legacy",
    ("kubeflow.org/v1alpha1", "Caffe2Job"): "msgen.kinds.caffe2job",
    ("mindxdl.gitee.com/v1", "AscendJob"): "msgen.kinds.ascendjob",
}


def known_kinds() -> list[tuple[str, str]]:
    return sorted(_REGISTRY)


def lookup(api_version: object, kind: object) -> JobKind | None:
    entry = _REGISTRY.get((str(api_version), str(kind)))
    if entry is None:
        return None
    module, _, name = entry.partition(":")
    __import__(module)  # import_module without loading importlib's package
    found: JobKind = getattr(sys.modules[module], name or "KIND")
    return found


def matching(name: str) -> list[tuple[str, str]]:
    """The kinds `name` can mean: `Kind`, `group/version/Kind` or `apiVersion Kind`.

    An exact spelling wins; otherwise case is ignored, which can match several kinds
    (`mxjob` is `kubeflow.org/v1 MXJob` and both groups' `MxJob`; `MSJob` both
    MindSpore's and the 2020 `kubeflow.org/v1` one): the caller must then ask which."""
    wanted = name.replace(" ", "/")
    for exact in (True, False):
        found = [
            (api_version, kind)
            for api_version, kind in known_kinds()
            if _same(wanted, kind, exact) or _same(wanted, f"{api_version}/{kind}", exact)
        ]
        if found:
            return found
    return []


def _same(given: str, known: str, exact: bool) -> bool:
    return given == known if exact else given.lower() == known.lower()


def find_by_name(name: str) -> JobKind | None:
    """The one kind `name` means, or None when it means none or several (see `matching`)."""
    found = matching(name)
    return lookup(*found[0]) if len(found) == 1 else None
