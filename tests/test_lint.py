"""msgen's code stays clean of what ruff finds (rules in pyproject.toml, `[tool.ruff]`)."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT


def test_ruff_finds_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "msgen", "tests", "bench"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
