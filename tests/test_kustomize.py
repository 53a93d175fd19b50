"""The rendered output is what the real kustomize binary accepts and passes through intact."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from msgen.model import versions
from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, kustomize_binary, msgen
from .expected_refusals import refusal_at

#: Spread over the Pythons CI runs: its time is the real kustomize's (tests/python_share.py).
pytestmark = pytest.mark.spread

NEWEST = versions.show(versions.NEWEST)


def identity(obj: dict) -> tuple[str, str]:  # type: ignore[type-arg]
    return obj["kind"], obj["metadata"]["name"]


@pytest.mark.parametrize("target", TARGETS)
def test_kustomize_builds_rendered_output(tmp_path: Path, target: str) -> None:
    binary = kustomize_binary()
    if binary is None:
        pytest.skip("kustomize not installed (.ci/fetch-kustomize installs it)")
    carried = [str(s) for s in sorted((SAMPLES / "mindspore").glob("*.yaml")) if refusal_at(s, target, NEWEST) is None]
    rendered = msgen("render", *carried, "--target", target)
    assert rendered.exit_code == 0, rendered.stderr
    (tmp_path / "out.yaml").write_text(rendered.stdout)
    (tmp_path / "kustomization.yaml").write_text("resources:\n- out.yaml\n")
    built = subprocess.run([binary, "build", str(tmp_path)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ours = sorted(rendered.objects(), key=identity)
    theirs = sorted((d for d in yaml.safe_load_all(built.stdout) if d), key=identity)
    assert theirs == ours
