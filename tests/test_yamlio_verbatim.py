"""Documents that pass through come out as written where the output is YAML (`yamlio.verbatim`).

msgen promises that a document which is not a job passes through unchanged: its comments,
its quoting, its `yes` and `0o17`, its key order stay as written. Compiled jobs around it
are written canonically; the JSON output, a `kind: List`'s items and a document after a
directive are written from their data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from msgen.model.source import Source
from msgen.yamlio.verbatim import DocumentTexts
from msgen.yamlio.yaml_loader import load_documents

from .conftest import SAMPLES, msgen

CONFIG = """\
# flags for the training
apiVersion: v1   # the core group
kind: ConfigMap
metadata:
  name: flags
data:
  legacy: yes
  mode: 0o17
  quoted: 'single'
"""
JOB = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()


def _texts(text: str) -> list[str | None]:
    source = Source("s", text)
    found = DocumentTexts(source)
    return [found.text(document) for document in load_documents(source)]


def test_a_passed_through_document_keeps_its_text_between_compiled_jobs() -> None:
    stream = f"{JOB}---\n{CONFIG}---\n{JOB.replace('name: msjob-mnist', 'name: other', 1)}"
    run = msgen("render", "-", input=stream)
    assert run.exit_code == 0, run.stderr
    assert f"\n---\n{CONFIG}---\n" in run.stdout, run.stdout
    objects = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert [o["kind"] for o in objects].count("ConfigMap") == 1
    alone = msgen("render", "-", input=CONFIG)
    assert alone.stdout == CONFIG


def test_the_json_output_is_the_documents_data_as_kubectl_reads_it() -> None:
    run = msgen("render", "--format", "json", "-", input=CONFIG)
    assert json.loads(run.stdout)["items"][0]["data"] == {"legacy": True, "mode": 15, "quoted": "single"}


@pytest.mark.parametrize("text, expected", [
    ("a: 1\n", ["a: 1\n"]),
    ("a: 1", ["a: 1\n"]),  # the last line gets its line break
    ("# head\n---\na: 1  # c\n...\n# between\n---\nb: 2\n", ["# head\na: 1  # c\n", "# between\nb: 2\n"]),
    ("---\na: 1\r\n---\r\nb: [1, 2]\r\n", ["a: 1\r\n", "b: [1, 2]\r\n"]),
    ("--- # a comment on the marker\na: 1\n", ["a: 1\n"]),
    ("--- {a: 1}\n---\nb: |\n  x\n  ---not a marker\n", [None, "b: |\n  x\n  ---not a marker\n"]),
    ("%YAML 1.1\n---\na: 1\n---\nb: 2\n", [None, "b: 2\n"]),
    ("a: &x 1\nb: *x\n", ["a: &x 1\nb: *x\n"]),
])
def test_each_documents_text_is_cut_at_its_markers(text: str, expected: list[str | None]) -> None:
    assert _texts(text) == expected


def test_a_streamed_input_is_cut_alike(tmp_path: Path) -> None:
    """Over 4 MiB an input is parsed from its file (`inputs.open_source`): the documents come
    out as written there too, and in one pass over the file."""
    value = "é" + "x" * 3000
    filler = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}  # n{i}\ndata:\n  v: '{value}'\n"
                     for i in range(1500))
    path = tmp_path / "big.yaml"
    path.write_text(CONFIG + filler, encoding="utf-8")
    assert path.stat().st_size > 4 << 20
    done = subprocess.run([sys.executable, "-m", "msgen", "render", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == CONFIG + filler
