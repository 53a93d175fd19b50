"""msgen's code and its tests stay `mypy --strict` clean (configured in pyproject.toml: `packages`)."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT


def test_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
