"""pyproject.toml as data, for the tests that hold the packaging to it.

Python 3.11 reads TOML itself (`tomllib`); on 3.10 the same parser is the `tomli`
distribution, which the test extra installs there. The branch is on the version, not on an
ImportError, so mypy checks the reader each Python actually uses.
"""

from __future__ import annotations

import sys
from typing import Any

from .conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

#: The whole of pyproject.toml: `[project]`, `[build-system]`, `[tool.*]`.
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
