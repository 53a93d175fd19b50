"""Tests that need the reference material skip, naming it, when a clone has none."""

from __future__ import annotations

import pytest

from .conftest import SHARED, shared, shared_glob


def test_missing_reference_material_skips_with_its_name() -> None:
    with pytest.raises(pytest.skip.Exception, match=r"crds/no-such-crd\.yaml is missing"):
        shared("crds/no-such-crd.yaml")


def test_missing_reference_file_pattern_skips_with_its_name() -> None:
    if not SHARED.exists():
        pytest.skip(f"{SHARED} is missing")
    with pytest.raises(pytest.skip.Exception, match=r"no 999_\* in"):
        shared_glob("seeds", "999_*")
