"""The bundled samples, as a user meets them: rendered together, listed and printed by msgen."""

from __future__ import annotations

import pytest

from msgen.targets import NAMES as TARGETS

from .conftest import REFUSED, SAMPLES, golden_for, msgen, sample_files


def test_validate_help_example_passes_on_the_samples() -> None:
    """`msgen validate samples/ && echo valid`, as `msgen validate --help` shows it."""
    done = msgen("validate", str(SAMPLES))
    assert done.exit_code == 0, done.stderr
    assert done.stderr.splitlines()[-1] == f"msgen: valid: {len(sample_files())} job(s) in {len(sample_files())} document(s)"


@pytest.mark.parametrize("target", TARGETS)
def test_the_samples_a_target_carries_render_together(target: str) -> None:
    """No two samples make an object of the same kind, namespace and name, whatever the target."""
    carried = []
    for sample in sample_files():
        golden = golden_for(sample, target, "1.37")
        assert golden is not None
        if not golden.name.endswith(REFUSED):
            carried.append(str(sample))
    done = msgen("render", "--target", target, *carried)
    assert done.exit_code == 0, done.stderr
    names = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in done.objects()]
    assert len(names) == len(set(names))
