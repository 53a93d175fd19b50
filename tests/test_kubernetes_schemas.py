"""Every rendered output is valid, strictly, at every Kubernetes minor msgen supports.

Each sample × target × option set (`VARIANTS`) is rendered for every minor from the oldest
to the newest (1.25 ... 1.37): a field required only in the middle of the range
(`podFailurePolicy`'s `onPodConditions[].status`, required 1.26-1.34) escapes a check of the
two ends. Renders are
cheap; validating is not, so identical outputs are validated once per minor, against
validators built once (tests/kube_schemas.py).

What an output must be valid for: every minor it is rendered for, *and every newer one* —
a user renders for the oldest cluster of a fleet (`--kube-version`) and applies the same
YAML to the newer ones. (Output for a newer minor is not expected to be valid on an older
one: it may use fields the older API server does not know.) Custom resources (JobSet,
Volcano Job, PodGroup) are checked against their upstream CRDs, and what they embed (a
JobSet's Jobs, a Volcano task's pod template) against Kubernetes' schemas, at every minor.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from msgen import versions
from msgen.targets import NAMES as TARGETS

from .conftest import msgen, needs_shared, refused, sample_files
from .kube_schemas import (
    OUTPUT_CRDS,
    core_parts,
    crd_errors,
    kubernetes_errors,
    kubernetes_validator,
    minors,
)

MINORS = minors()
#: The options that change the shape of the output, beyond the defaults the golden files use:
#: DNS addressing, both gang schedulers' PodGroups and pod fields, Kueue, a sized /dev/shm.
VARIANTS = {
    "defaults": (),
    "dns-volcano-gang": ("--scheduler-address", "dns", "--gang-scheduler", "volcano"),
    "plugins-gang-kueue-shm": (
        "--gang-scheduler", "scheduler-plugins", "--kueue-queue", "team-a", "--shm-size", "1Gi",
    ),
}  # fmt: skip
CASES = [(s, t, v) for s in sample_files() for t in TARGETS for v in VARIANTS]
IDS = [f"{s.stem}-{t}-{v}" for s, t, v in CASES]


@functools.cache
def outputs(sample: Path, target: str, variant: str) -> dict[str, list[str]]:
    """Each distinct output of `sample` on `target` → the minors it is rendered for."""
    found: dict[str, list[str]] = {}
    # The golden files record the refusals of the defaults; an option may refuse a job too
    # (a sized /dev/shm where the template mounts its own), with one positioned error.
    may_refuse = variant != "defaults" or any(refused(sample, target, m) for m in (MINORS[0], MINORS[-1]))
    for minor in MINORS:
        run = msgen("render", str(sample), "--target", target, "--kube-version", minor, *VARIANTS[variant])
        if run.exit_code == 1 and may_refuse:
            # A refusal: one positioned error, no output, and only below the first minor that
            # renders the job (newer minors only add features).
            assert run.stdout == "" and run.stderr.count(": error: ") == 1, run.stderr
            assert not found, f"rendered for {next(iter(found.values()))[0]}, refused at {minor}"
            continue
        assert run.exit_code == 0, f"--kube-version {minor}: {run.stderr}"
        found.setdefault(run.stdout, []).append(minor)
    return found


def objects_of(text: str) -> list[dict[str, Any]]:
    objects = [d for d in yaml.safe_load_all(text) if d is not None]
    assert objects, "rendered nothing"
    return objects


@pytest.mark.parametrize("sample,target,variant", CASES, ids=IDS)
def test_output_is_valid_kubernetes_at_every_minor(sample: Path, target: str, variant: str) -> None:
    rendered = outputs(sample, target, variant)
    if not rendered:
        pytest.skip(f"target {target} refuses this job with these options at every minor")
    failures = []
    for text, rendered_for in rendered.items():
        objects = objects_of(text)
        for minor in MINORS[MINORS.index(rendered_for[0]) :]:
            for obj in objects:
                for part in core_parts(obj):
                    failures += [
                        f"rendered for {rendered_for[0]}, at {minor}: {part['kind']}/"
                        f"{part['metadata']['name']}: {error}"
                        for error in kubernetes_errors(part, minor)
                    ]
    assert failures == [], "\n".join(failures[:20])


@needs_shared(*(f"crds/{name}" for name in OUTPUT_CRDS.values()))
@pytest.mark.parametrize(
    "sample,target,variant",
    [c for c in CASES if c[1] in ("jobset", "volcano") or c[2] != "defaults"],
    ids=[i for c, i in zip(CASES, IDS) if c[1] in ("jobset", "volcano") or c[2] != "defaults"],
)
def test_custom_resources_are_valid_for_their_crds_at_every_minor(
    sample: Path, target: str, variant: str
) -> None:
    rendered = outputs(sample, target, variant)
    if not rendered:
        pytest.skip(f"target {target} refuses this job with these options at every minor")
    failures = []
    for text, rendered_for in rendered.items():
        custom = [o for o in objects_of(text) if (o["apiVersion"], o["kind"]) in OUTPUT_CRDS]
        assert custom, "rendered no object with an upstream CRD"
        for obj in custom:
            failures += [
                f"rendered for {', '.join(rendered_for)}: {obj['kind']}/{obj['metadata']['name']}: {error}"
                for error in crd_errors(obj)
            ]
    assert failures == [], "\n".join(failures[:20])


def test_every_supported_minor_is_checked() -> None:
    assert MINORS[0] == versions.show(versions.OLDEST) and MINORS[-1] == versions.show(versions.NEWEST)
    assert len(MINORS) == versions.NEWEST[1] - versions.OLDEST[1] + 1


def test_newest_version_is_what_kubernetes_validate_bundles() -> None:
    latest = kubernetes_validate.utils.latest_version()
    assert versions.show(versions.NEWEST) == kubernetes_validate.utils.major_minor(latest)


POD_FAILURE_POLICY_WITHOUT_STATUS = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "j"},
    "spec": {
        "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}},
    },
}


@pytest.mark.parametrize("minor", ["1.26", "1.30", "1.34", "1.35", "1.37"])
def test_cached_validator_agrees_with_kubernetes_validate(minor: str) -> None:
    """The middle-of-the-range rule the cached validators must see as kubernetes-validate does."""
    ours = kubernetes_errors(POD_FAILURE_POLICY_WITHOUT_STATUS, minor)
    try:
        kubernetes_validate.validate(POD_FAILURE_POLICY_WITHOUT_STATUS, minor, strict=True)
        theirs: list[str] = []
    except kubernetes_validate.ValidationError as exc:
        theirs = [exc.message]
    assert bool(ours) == bool(theirs), (ours, theirs)
    assert bool(ours) == (versions.parse(minor) <= (1, 34))  # status is required up to 1.34 (contracts §8)
    unknown = {**POD_FAILURE_POLICY_WITHOUT_STATUS, "spec": {"surprise": 1}}
    assert any("surprise" in e for e in kubernetes_errors(unknown, minor)), "strict: unknown fields fail"
    assert kubernetes_validator(minor, "batch/v1", "Job") is kubernetes_validator(minor, "batch/v1", "Job")
