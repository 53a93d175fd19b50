"""Near misses of the kinds msgen compiles: `MsJob`, `mindspore.gitee.com/v2`, a misspelt group.

A document msgen does not compile passes through unchanged, and through kustomize or Argo CD
that raw custom resource is what gets applied. For an unrelated kind (a Deployment, a TFJob)
that is right; for a one-letter slip in the name of a kind msgen compiles, it silently applies
an uncompiled job, so such a document is an error that names the kind meant.
"""

from __future__ import annotations

from . import known_kinds

#: How alike two lower-cased names must be to count as a slip (difflib's ratio): `msjobs`,
#: `msjbo` and `mindspore.gitee.cn` are near `msjob` and `mindspore.gitee.com`; `tfjob`,
#: `mpijob` and `pytorchjob` are not.
_CUTOFF = 0.8


def _alike(given: str, known: str) -> float:
    """1.0 for names equal but for case; otherwise difflib's ratio, 0 below the cut-off."""
    given, known = given.lower(), known.lower()
    if given == known:
        return 1.0
    from difflib import SequenceMatcher  # only for a kind msgen does not compile

    ratio = SequenceMatcher(None, given, known).ratio()
    return ratio if ratio >= _CUTOFF else 0.0


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def near_miss(api_version: str, kind: str) -> tuple[str, str] | None:
    """The compiled (apiVersion, kind) that `api_version kind` nearly is, or None.

    Near means: the kind is a compiled kind's name but for case or a slip, and the group is
    that kind's group (any version) or a slip of it. Exact matches are not near misses."""
    best: tuple[float, tuple[str, str]] | None = None
    for known_api, known_kind in known_kinds():
        if (known_api, known_kind) == (api_version, kind):
            return None
        kind_score = _alike(kind, known_kind)
        group_score = _alike(_group(api_version), _group(known_api))
        if not kind_score or not group_score:
            continue
        # Prefer the exact case of the kind, then the same apiVersion, then the closest names.
        score = (
            kind_score
            + group_score
            + (kind == known_kind)
            + (api_version == known_api)
        )
        if best is None or score > best[0]:
            best = (score, (known_api, known_kind))
    return best[1] if best else None
