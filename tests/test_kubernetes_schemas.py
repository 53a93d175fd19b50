"""Every rendered output is valid, strictly, against Kubernetes' own OpenAPI schemas.

Rendered at the oldest and newest supported versions, each checked against the schemas of
the version it was rendered for (kubernetes-validate, strict: unknown fields fail).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from msgen import versions
from msgen.targets import NAMES as TARGETS

from .conftest import msgen, refused, sample_files

VERSIONS = [versions.show(versions.OLDEST), versions.show(versions.NEWEST)]
CASES = [(s, t, v) for s in sample_files() for t in TARGETS for v in VERSIONS]


@pytest.mark.parametrize(
    "sample,target,version", CASES, ids=[f"{s.stem}-{t}-{v}" for s, t, v in CASES]
)
def test_output_is_valid_kubernetes(sample: Path, target: str, version: str) -> None:
    if refused(sample, target, version):
        pytest.skip("the target refuses this job; its golden .refused.txt file says how")
    run = msgen("render", str(sample), "--target", target, "--kube-version", version)
    assert run.exit_code == 0, run.stderr
    objects = run.objects()
    assert objects, "rendered nothing"
    for obj in objects:
        for part in core_parts(obj):
            try:
                kubernetes_validate.validate(part, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{part['kind']}/{part['metadata']['name']} at {version}: {exc.message}")


def core_parts(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The core Kubernetes objects in `obj`: itself, or what a JobSet or Volcano Job embeds.

    A CRD's schema usually waves embedded pod templates through unchecked, and their
    controllers hand them to the API server as they are: a JobSet's replicated Job becomes a
    `batch/v1` Job, a Volcano task's template becomes Pods. Both must be valid Kubernetes.
    """
    name = obj["metadata"]["name"]
    if obj["apiVersion"] == "jobset.x-k8s.io/v1alpha2":
        return [
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"{name}-{r['name']}-0"}, **r["template"]}
            for r in obj["spec"]["replicatedJobs"]
        ]
    if obj["apiVersion"] == "batch.volcano.sh/v1alpha1":
        return [
            {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"{name}-{t['name']}"}, "template": t["template"]}
            for t in obj["spec"]["tasks"]
        ]
    if obj["kind"] == "PodGroup":
        return []  # a CRD only: checked against its schema in test_crds
    return [obj]


def test_newest_version_is_what_kubernetes_validate_bundles() -> None:
    latest = kubernetes_validate.utils.latest_version()
    assert versions.show(versions.NEWEST) == kubernetes_validate.utils.major_minor(latest)
