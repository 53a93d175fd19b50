"""Every golden output is valid, strictly, against Kubernetes' own OpenAPI schemas.

Rendered at the oldest and newest supported versions, each checked against the schemas of
the version it was rendered for (kubernetes-validate, strict: unknown fields fail).
"""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest

from msgen import versions
from msgen.targets import NAMES as TARGETS

from .conftest import msgen, sample_files

VERSIONS = [versions.show(versions.OLDEST), versions.show(versions.NEWEST)]
CASES = [(s, t, v) for s in sample_files() for t in TARGETS for v in VERSIONS]


@pytest.mark.parametrize(
    "sample,target,version", CASES, ids=[f"{s.stem}-{t}-{v}" for s, t, v in CASES]
)
def test_output_is_valid_kubernetes(sample: Path, target: str, version: str) -> None:
    run = msgen("render", str(sample), "--target", target, "--kube-version", version)
    assert run.exit_code == 0, run.stderr
    objects = run.objects()
    assert objects, "rendered nothing"
    for obj in objects:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']} at {version}: {exc.message}")


def test_newest_version_is_what_kubernetes_validate_bundles() -> None:
    latest = kubernetes_validate.utils.latest_version()
    assert versions.show(versions.NEWEST) == kubernetes_validate.utils.major_minor(latest)
