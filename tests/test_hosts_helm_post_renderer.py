"""`msgen helm-post-renderer` on streams as Helm writes them, without Helm: cut into documents
that join back to the input, jobs compiled in place, every other document byte for byte, and
options from the environment and the arguments (tests/test_helm.py runs it under the real Helm).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen.hosts.helm.post_renderer import STDIN, split

from .conftest import ROOT, msgen

BIN = str(Path(sys.executable).parent)


def post_renderer(*args: str, input: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("HELM_")}
    return subprocess.run([f"{BIN}/msgen", "helm-post-renderer", *args], capture_output=True, text=True, input=input,
                          env={**base, **(env or {})})


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def rendered(job_text: str, *args: str) -> list[dict[str, Any]]:
    done = msgen("render", "-", *args, input=job_text)
    assert done.exit_code == 0, done.stderr
    return documents(done.stdout)


# ---- the stream --------------------------------------------------------------------

STREAMS = [
    "",
    "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}",
    "--- # a comment on the marker\na: 1\n...\n---\nb: |\n  ---not a marker\n  text\n--- \r\nc: 3\r\n",
    "# Source: only a comment\n---\n---\n",
]


@pytest.mark.parametrize("text", STREAMS)
def test_the_stream_is_cut_into_documents_that_join_back(text: str) -> None:
    pieces = split(text)
    assert "".join(p.text for p in pieces) == text
    for piece in pieces:
        assert piece.text.endswith(piece.body)


def test_a_document_knows_its_template_from_helms_comment() -> None:
    pieces = split(STREAMS[1] + "---\nkind: X\n")
    assert [p.source for p in pieces] == ["c/templates/a.yaml", STDIN]
    assert pieces[0].body.startswith("apiVersion: v1")


def test_every_other_document_comes_back_byte_for_byte() -> None:
    job = (ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text()
    before = "---\n# Source: c/templates/x.yaml\n# kept\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {k: 'v'}\n"
    after = "---\n# Source: c/templates/z.yaml\napiVersion: v1\nkind: Secret\nmetadata: {name: z}\n"
    done = post_renderer(input=before + "---\n# Source: c/templates/job.yaml\n" + job + after)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(before) and done.stdout.endswith(after)
    middle = done.stdout[len(before) : -len(after)]
    assert documents(middle) == rendered(job)
    assert middle.count("# Source: c/templates/job.yaml\n") == len(rendered(job))


def test_a_document_after_an_end_marker_stays_its_own() -> None:
    job = (ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text()
    done = post_renderer(input=job + "...\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: after}\n")
    assert done.returncode == 0, done.stderr
    assert documents(done.stdout) == [*rendered(job), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}}]


def test_an_empty_stream_stays_empty() -> None:
    done = post_renderer(input="")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_text_that_is_not_utf8_is_one_error() -> None:
    done = subprocess.run([f"{BIN}/msgen", "helm-post-renderer"], input=b"kind: MSJob\n\xff\n", capture_output=True)
    assert done.returncode == 1 and done.stdout == b""
    assert b"<stdin>:2:1: error: not UTF-8 text (byte 0xff); accepted: YAML in UTF-8" in done.stderr


def test_options_from_the_environment_and_the_arguments() -> None:
    job = (ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text()
    by_env = post_renderer(input=job, env={"HELM_MSGEN_TARGET": "pod"})
    assert by_env.returncode == 0, by_env.stderr
    assert documents(by_env.stdout) == rendered(job, "--target", "pod")
    both = post_renderer("--target", "jobset", input=job, env={"HELM_MSGEN_TARGET": "pod"})
    assert documents(both.stdout) == rendered(job, "--target", "jobset")
    assert "HELM_MSGEN_TARGET='pod' is overridden by --target='jobset'" in both.stderr


def test_quiet_leaves_the_warnings_out() -> None:
    job = (ROOT / "samples" / "mindspore" / "widedeep-ps.yaml").read_text()
    loud = post_renderer(input=job)
    assert loud.returncode == 0 and "warning:" in loud.stderr
    quiet = post_renderer("--quiet", input=job)
    assert (quiet.returncode, quiet.stderr, quiet.stdout) == (0, "", loud.stdout)


def test_a_misspelt_variable_is_an_error() -> None:
    done = post_renderer(input="", env={"HELM_MSGEN_TARGT": "pod"})
    assert done.returncode == 1 and done.stdout == ""
    assert "unknown msgen variable 'HELM_MSGEN_TARGT' (did you mean HELM_MSGEN_TARGET?)" in done.stderr
