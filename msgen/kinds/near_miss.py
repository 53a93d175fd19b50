"""Near misses of the kinds msgen compiles: `MsJob`, `mindspore.gitee.com/v2`, a misspelt or
wrong group (`mindspore.cn/v1 MSJob`).

A document msgen does not compile passes through unchanged, and through kustomize or Argo CD
that raw custom resource is what gets applied. For an unrelated kind (a Deployment, a TFJob)
that is right; for a slip in the name of a kind msgen compiles, or a kind msgen compiles
under a group it does not, it silently applies an uncompiled job, so such a document is an
error that names the kind meant.
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


def _ratio(given: str, known: str) -> float:
    """How alike two groups are, however little (the kind's name already says which kind)."""
    from difflib import SequenceMatcher

    return SequenceMatcher(None, given.lower(), known.lower()).ratio()


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def near_miss(api_version: str, kind: str) -> tuple[str, str] | None:
    """The compiled (apiVersion, kind) that `api_version kind` nearly is, or None.

    Near means: the kind is a compiled kind's name (in any letter case) under any other
    apiVersion, the nearest group meant; or the kind is a slip of a compiled kind's name and
    the group is that kind's group (any version) or a slip of it. Exact matches are not near
    misses."""
    known = known_kinds()
    if (api_version, kind) in known:
        return None
    same_name = any(kind.lower() == known_kind.lower() for _api, known_kind in known)
    best: tuple[float, tuple[str, str]] | None = None
    for known_api, known_kind in known:
        kind_score = _alike(kind, known_kind)
        group_score = _alike(_group(api_version), _group(known_api))
        if same_name:  # only the kinds of that name, whatever the group
            if kind.lower() != known_kind.lower():
                continue
            group_score = _ratio(_group(api_version), _group(known_api))
        elif not kind_score or not group_score:
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


def compiled_or_near(api_version: object, kind: object) -> bool:
    """Whether a document is msgen's to compile: a kind msgen compiles, or a near miss of one,
    whose compile is the error naming the kind meant (a host that passed it over would apply
    the uncompiled job)."""
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False
    from . import lookup

    return lookup(api_version, kind) is not None or near_miss(api_version, kind) is not None
