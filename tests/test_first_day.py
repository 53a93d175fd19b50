"""A new user's first day, tried as one would after `pip install`: what the help and the README
say is what msgen does, and nothing a user asked for is overruled in silence.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from msgen.inputs import MANIFEST_SUFFIXES

from .conftest import ROOT, SAMPLES, msgen


def test_render_help_and_readme_name_every_file_a_directory_is_read_for(tmp_path: Path) -> None:
    job = json.dumps(yaml.safe_load((SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()))
    (tmp_path / "job.json").write_text(job)
    assert "kind: Job" in msgen("render", str(tmp_path)).stdout  # a directory's JSON is read
    help_text = " ".join(msgen("render", "--help").stdout.split())
    readme = next(line for line in (ROOT / "README.md").read_text().splitlines()
                  if line.startswith("msgen render jobs/"))  # fmt: skip
    for suffix in MANIFEST_SUFFIXES:
        assert f"*{suffix}" in help_text, help_text
        assert f"*{suffix}" in readme, readme
