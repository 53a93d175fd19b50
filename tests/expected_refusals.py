"""Every job msgen is expected to refuse in the schema tests, and why, written down.

`tests/test_kubernetes_schemas.py` renders each sample × target × option set for every minor.
Some of those renders are refusals by design: a target that cannot give a pod what its job
needs, or an option that contradicts the job. They are listed here, each with the first minor
that renders the job (None: no minor does) and a piece of the one error msgen prints, so that
a refusal nobody listed fails (a regression that makes msgen refuse a variant is not a skip)
and so does a listed refusal that stopped happening (the list would hide what it now renders).
"""

from __future__ import annotations

from dataclasses import dataclass

from pathlib import Path

from msgen.model import versions
from msgen.targets import NAMES as TARGETS


@dataclass(frozen=True)
class Refusal:
    renders_from: str | None
    """The first minor that renders the job; every older one refuses it. None: none renders it."""
    reason: str
    """A piece of the error msgen prints at each refused minor (`{minor}` stands for that minor)."""


#: The option sets of the schema tests, by name: what changes the shape of the output beyond the
#: defaults the golden cases use (DNS addressing, both gang schedulers' PodGroups and pod fields,
#: Kueue, a sized /dev/shm).
VARIANTS = {
    "defaults": (),
    "dns-volcano-gang": ("--scheduler-address", "dns", "--gang-scheduler", "volcano"),
    "plugins-gang-kueue-shm": (
        "--gang-scheduler", "scheduler-plugins", "--kueue-queue", "team-a", "--shm-size", "1Gi",
    ),
}  # fmt: skip


def _each(
    samples: tuple[str, ...], targets: tuple[str, ...], variants: tuple[str, ...], refusal: Refusal
) -> dict[tuple[str, str, str], Refusal]:
    return {(s, t, v): refusal for s in samples for t in targets for v in variants}


def _listing(*parts: dict[tuple[str, str, str], Refusal]) -> dict[tuple[str, str, str], Refusal]:
    """The parts together; a case listed twice is a mistake in the list, not an override."""
    listing: dict[tuple[str, str, str], Refusal] = {}
    for part in parts:
        twice = sorted(set(listing) & set(part))
        assert not twice, f"listed twice: {twice}"
        listing.update(part)
    return listing


#: Before 1.28 (PodIndexLabel on by default) a StatefulSet pod cannot read its own index, and
#: these jobs put each pod's index in its environment (contracts §8).
_NEEDS_POD_INDEX = (
    "caffe2/resnet50-redis",
    "mindspore/ascend-2x8-msrun",
    "mindspore/ascend-2x8",
    "mindspore/ascend-a3-node",
    "mindspore/ascend-npu-resource",
    "mindspore/gpu-2x8-msrun",
    "mindspore/gpu-2x8",
    "mxnet/mxjob-gpu-workers",
)
_NO_POD_INDEX = Refusal("1.28", "target statefulset cannot tell a pod its index at Kubernetes {minor}")

#: (sample, as `samples/<path>` without `.yaml`; target; variant) → the refusal expected.
EXPECTED: dict[tuple[str, str, str], Refusal] = _listing(
    _each(_NEEDS_POD_INDEX, ("statefulset",), tuple(VARIANTS), _NO_POD_INDEX),
    # The AscendJob needs its pod index too; with --shm-size it is refused before that, below.
    _each(("ascend/mindspore-acjob",), ("statefulset",), ("defaults", "dns-volcano-gang"), _NO_POD_INDEX),
    # The AscendJob's container mounts its own /dev/shm, which --shm-size would mount too.
    _each(
        ("ascend/mindspore-acjob",),
        TARGETS,
        ("plugins-gang-kueue-shm",),
        Refusal(None, "container 'ascend' mounts its own /dev/shm, and --shm-size 1Gi asks msgen to mount one"),
    ),
    # The legacy MSJob counts a rank across its roles: only targets that number pods across
    # roles carry it.
    _each(
        ("mindspore-legacy/msjob-mnist-dist",),
        ("statefulset", "jobset", "volcano", "trainjob"),
        tuple(VARIANTS),
        Refusal(None, "gives each pod values computed from its index (such as a rank counted across roles)"),
    ),
)


def refusal_at(sample: Path, target: str, minor: str, variant: str = "defaults") -> Refusal | None:
    """The refusal listed for `sample` (a file of samples/) on `target` at `minor`; None where
    msgen must render it. The tests that take the samples a target carries ask this list, not
    the golden files: a regression written into a golden case would otherwise drop a sample
    from them without a failure."""
    name = f"{sample.parent.name}/{sample.stem}"
    found = EXPECTED.get((name, target, variant))
    if found is None or (found.renders_from is not None and versions.parse(minor) >= versions.parse(found.renders_from)):
        return None
    return found


def check(key: tuple[str, str, str], minors: list[str], refused: dict[str, str]) -> list[str]:
    """What is wrong with `refused` (minor → stderr of the refusal) for `key`; [] when it is
    exactly the refusal EXPECTED lists, at exactly the minors it lists."""
    expected = EXPECTED.get(key)
    if expected is None:
        return [f"refused at {minor}, not listed in tests/expected_refusals.py: {err}" for minor, err in refused.items()]
    renders_from = minors.index(expected.renders_from) if expected.renders_from else len(minors)
    want = minors[:renders_from]
    problems = []
    if list(refused) != want:
        problems.append(
            f"tests/expected_refusals.py lists a refusal at {', '.join(want)} "
            f"({expected.reason!r}), but msgen refused at {', '.join(refused) or 'no minor'}"
        )
    for minor, err in refused.items():
        reason = expected.reason.format(minor=minor)
        if reason not in err:
            problems.append(f"refused at {minor} for another reason than {reason!r}: {err}")
    return problems
