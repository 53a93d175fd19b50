"""A new user's first day, tried as one would after `pip install`: what the help and the README
say is what msgen does, and nothing a user asked for is overruled in silence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


UNCLOSED = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: j
spec:
  msReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
            - name: mindspore
              image: ms
              command: {opened}python, train.py
              args: ["--x"]
"""


@pytest.mark.parametrize("opened,closing", [("[", "]"), ("{", "}")])
def test_an_unclosed_bracket_names_the_line_that_opened_it(opened: str, closing: str) -> None:
    run = msgen("render", "-", input=UNCLOSED.format(opened=opened))
    assert run.exit_code == 1 and run.stdout == ""
    assert run.stderr.startswith("<stdin>:14:"), run.stderr  # where the parser noticed
    assert f"the {opened!r} opened at line 13, column 24 is not closed" in run.stderr, run.stderr


def test_an_unclosed_quote_names_where_it_starts() -> None:
    run = msgen("render", "-", input='metadata:\n  name: "j\n')
    assert run.exit_code == 1
    assert "while scanning a quoted scalar that starts at line 2, column 9" in run.stderr, run.stderr
