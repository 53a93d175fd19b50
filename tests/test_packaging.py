"""Packaging as users of Python tools expect: a build that works, a license, a changelog."""

from __future__ import annotations

import re

import pytest

from .conftest import ROOT

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_an_spdx_license_string_needs_setuptools_77() -> None:
    assert isinstance(PROJECT["project"]["license"], str)
    (requirement,) = [r for r in PROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    found = re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", requirement)
    assert found is not None and int(found.group(1)) >= 77, requirement
    # PEP 639: a license expression and a license classifier together are an error.
    assert not [c for c in PROJECT["project"]["classifiers"] if c.startswith("License ::")]


def test_license_file_is_the_apache_license() -> None:
    assert PROJECT["project"]["license"] == "Apache-2.0"
    assert PROJECT["project"]["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_metadata_users_look_for() -> None:
    project = PROJECT["project"]
    assert all(url.startswith("https://") for url in project["urls"].values())
    assert "Programming Language :: Python :: 3.10" in project["classifiers"]
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text()
