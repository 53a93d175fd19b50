"""Packaging as users of Python tools expect: a build that works, a license, a changelog."""

from __future__ import annotations

import re
import subprocess


from .conftest import ROOT
from .pyproject_file import PYPROJECT

PROJECT = PYPROJECT


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


def _claimed() -> list[str]:
    prefix = "Programming Language :: Python :: 3."
    return [c.rsplit(" ", 1)[1] for c in PROJECT["project"]["classifiers"] if c.startswith(prefix)]


def test_the_claimed_pythons_are_one_range_from_requires_python() -> None:
    claimed = _claimed()
    assert PROJECT["project"]["requires-python"] == f">={claimed[0]}"
    minors = [int(v.split(".")[1]) for v in claimed]
    assert minors == list(range(minors[0], minors[-1] + 1))
    readme = (ROOT / "README.md").read_text()
    assert f"(Python {claimed[0]} to {claimed[-1]}" in readme


def test_ci_runs_the_readmes_test_command_on_every_claimed_python() -> None:
    """`bash .ci/run` runs the README's own test command once per claimed version."""
    run_script = (ROOT / ".ci" / "run").read_text()
    (command,) = re.findall(r'^readonly TEST_CMD="(.*)"$', run_script, re.M)
    assert f"```sh\n{command}\n```" in (ROOT / "README.md").read_text()
    plan = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--plan"], capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    assert [line.split()[0] for line in plan.stdout.splitlines()] == _claimed()


def test_every_runtime_dependency_is_imported_by_msgen() -> None:
    """A dependency nothing at run time imports is one every user installs for nothing
    (the tests' own belong to the `test` extra)."""
    import ast
    from importlib.metadata import distribution

    imported: set[str] = set()
    for path in (ROOT / "msgen").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])

    def top_level_modules(name: str) -> set[str]:
        # From the installed files (RECORD), not packages_distributions(): Python 3.10's
        # reads only top_level.txt, which wheels built by hatch or flit (click, pydantic) lack.
        files = distribution(name).files or []
        return {file.parts[0].removesuffix(".py") for file in files
                if not file.parts[0].endswith((".dist-info", ".data")) and file.parts[0] != "__pycache__"}

    declared = [re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in PROJECT["project"]["dependencies"]]
    assert [name for name in declared if not top_level_modules(name) & imported] == []

