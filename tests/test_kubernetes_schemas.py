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
Volcano Job, PodGroup, TrainJob and TrainingRuntime) are checked against their upstream CRDs,
and what they embed (a JobSet's Jobs, a Volcano task's pod template, the Jobs of the JobSet a
TrainingRuntime describes) against Kubernetes' schemas, at every minor.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from msgen.model import versions
from msgen.targets import NAMES as TARGETS
from msgen.targets import lookup

from . import expected_refusals
from .conftest import SAMPLES, msgen, sample_files
from .expected_refusals import VARIANTS
from .kube_schemas import (
    OUTPUT_CRDS,
    core_parts,
    crd_errors,
    kubernetes_errors,
    kubernetes_validator,
    minors,
)

#: Spread over the Pythons CI runs: its time is jsonschema's, validating bytes the golden tests hold equal on every Python (tests/python_share.py).
pytestmark = pytest.mark.spread

MINORS = minors()
CASES = [(s, t, v) for s in sample_files() for t in TARGETS for v in VARIANTS]
IDS = [f"{s.stem}-{t}-{v}" for s, t, v in CASES]


def key(sample: Path, target: str, variant: str) -> tuple[str, str, str]:
    return (sample.relative_to(SAMPLES).with_suffix("").as_posix(), target, variant)


#: The cases with an output to check: not those refused at every minor (listed, and checked
#: to be refused, by `test_refusals_are_the_listed_ones`).
def refused_everywhere(sample: Path, target: str, variant: str) -> bool:
    listed = expected_refusals.EXPECTED.get(key(sample, target, variant))
    return listed is not None and listed.renders_from is None


RENDERED = [c for c in CASES if not refused_everywhere(*c)]


@functools.cache
def renders(sample: Path, target: str, variant: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each distinct output of `sample` on `target` → the minors it is rendered for, and each
    refused minor → msgen's error there."""
    found: dict[str, list[str]] = {}
    refused: dict[str, str] = {}
    for minor in MINORS:
        run = msgen("render", str(sample), "--target", target, "--kube-version", minor, *VARIANTS[variant])
        if run.exit_code == 1:
            # A refusal is one positioned error and no output.
            assert run.stdout == "" and run.stderr.count(": error: ") == 1, run.stderr
            refused[minor] = run.stderr
            continue
        assert run.exit_code == 0, f"--kube-version {minor}: {run.stderr}"
        found.setdefault(run.stdout, []).append(minor)
    return found, refused


def outputs(sample: Path, target: str, variant: str) -> dict[str, list[str]]:
    """Each distinct output → its minors, once the refusals are the listed ones."""
    found, refused = renders(sample, target, variant)
    problems = expected_refusals.check(key(sample, target, variant), MINORS, refused)
    assert problems == [], "\n".join(problems)
    assert found, "rendered at no minor"
    return found


@pytest.mark.parametrize("sample,target,variant", CASES, ids=IDS)
def test_refusals_are_the_listed_ones(sample: Path, target: str, variant: str) -> None:
    """msgen refuses a job exactly where tests/expected_refusals.py says, for the reason it says
    (only below the first minor that renders it: newer minors only add features)."""
    _, refused = renders(sample, target, variant)
    problems = expected_refusals.check(key(sample, target, variant), MINORS, refused)
    assert problems == [], "\n".join(problems)


def test_every_listed_refusal_is_a_case() -> None:
    """A listed refusal that names no sample, target or variant would never be checked."""
    assert sorted(set(expected_refusals.EXPECTED) - {key(*c) for c in CASES}) == []


def objects_of(text: str) -> list[dict[str, Any]]:
    objects = [d for d in yaml.safe_load_all(text) if d is not None]
    assert objects, "rendered nothing"
    return objects


@pytest.mark.parametrize("sample,target,variant", RENDERED, ids=[IDS[CASES.index(c)] for c in RENDERED])
def test_output_is_valid_kubernetes_at_every_minor(sample: Path, target: str, variant: str) -> None:
    rendered = outputs(sample, target, variant)
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


#: The cases with a custom resource: every case of a target whose workloads are one, and every
#: case whose options add a PodGroup.
WITH_CUSTOM = [c for c in RENDERED if lookup(c[1]).facts.custom_resource or c[2] != "defaults"]


@pytest.mark.parametrize("sample,target,variant", WITH_CUSTOM, ids=[IDS[CASES.index(c)] for c in WITH_CUSTOM])
def test_custom_resources_are_valid_for_their_crds_at_every_minor(
    sample: Path, target: str, variant: str
) -> None:
    rendered = outputs(sample, target, variant)
    failures = []
    for text, rendered_for in rendered.items():  # a CRD neither ../shared nor Go's cache has: skip
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
