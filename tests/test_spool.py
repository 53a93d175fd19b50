"""Rendering a stream job by job through the spool keeps "the whole output or nothing".

A render writes each job's output to a temporary spool as soon as it compiles, and shows it
only when every job compiled: a failing last job of many leaves standard output empty and an
`-o FILE` untouched; errors keep their file:line:column in the stream; the pieces written one
job at a time are the bytes of writing all objects at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen.yamlio import emit, inputs
from msgen.yamlio.yaml_loader import libyaml_loads

from .conftest import SAMPLES, msgen, msgen_process

@pytest.fixture(autouse=True, params=["in memory", "streamed"])
def input_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: inputs held as text, and (above a size, here any) parsed from a file."""
    if request.param == "streamed":
        if not libyaml_loads():
            pytest.skip("PyYAML is built without libyaml here: inputs are always held as text")
        monkeypatch.setattr(inputs, "STREAM_ABOVE", 16)
    return str(request.param)


SAMPLE = (SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml").read_text()
JOBS = 40


def _stream(jobs: int, last: str | None = None) -> str:
    """`jobs` copies of the sample under distinct names; `last` replaces the last one."""
    docs = [SAMPLE.replace("name: ms-widedeep-dataparallel", f"name: job-{i}", 1) for i in range(jobs)]
    if last is not None:
        docs[-1] = last
    return "".join("---\n" + doc for doc in docs)


def _line_of(text: str, needle: str) -> int:
    return text[: text.rindex(needle)].count("\n") + 1


def test_the_stream_renders_as_its_jobs_one_by_one() -> None:
    text = _stream(JOBS)
    whole = msgen("render", "-", input=text)
    assert whole.exit_code == 0, whole.stderr
    one = msgen("render", "-", input=_stream(1))
    assert whole.stdout.count("---\n") == JOBS * one.stdout.count("---\n") + JOBS - 1


def test_nothing_on_stdout_when_the_last_of_many_jobs_fails() -> None:
    bad = SAMPLE.replace("name: ms-widedeep-dataparallel", "name: job-last", 1).replace(
        "replicas: 1", "replicas: one", 1
    )
    text = _stream(JOBS, bad)
    run = msgen_process("render", "-", input=text)
    assert run.exit_code == 1
    assert run.stdout == ""
    assert f"<stdin>:{_line_of(text, 'replicas: one')}:" in run.stderr
    assert "nothing was written" in run.stderr


def test_an_output_file_is_untouched_when_the_last_job_fails(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    target.write_text("previous\n")
    source = tmp_path / "jobs.yaml"
    source.write_text(_stream(JOBS, "apiVersion: mindspore.gitee.com/v1\nkind: MSJob\nmetadata: 3\n"))
    run = msgen_process("render", str(source), "-o", str(target))
    assert run.exit_code == 1
    assert target.read_text() == "previous\n"
    assert {p.name for p in tmp_path.iterdir()} == {"jobs.yaml", "out.yaml"}  # no temporary left


def test_an_output_file_gets_the_whole_stream(tmp_path: Path) -> None:
    target = tmp_path / "out.yaml"
    text = _stream(JOBS)
    assert msgen("render", "-", "-o", str(target), input=text).exit_code == 0
    assert target.read_text() == msgen("render", "-", input=text).stdout


def test_a_syntax_error_after_many_documents_is_the_only_finding() -> None:
    # The documents before it compiled already; their findings (the warning of the
    # bare-pod target) are dropped, as when the whole text was parsed first.
    text = _stream(JOBS) + "---\nkey: [unclosed\n"
    run = msgen("render", "-", "--target", "pod", input=text)
    assert run.exit_code == 1
    assert run.stdout == ""
    assert run.stderr.count("warning") == 0
    assert f"<stdin>:{_line_of(text, '[unclosed') + 1}:" in run.stderr


def test_a_duplicate_far_down_the_stream_names_both_documents() -> None:
    text = _stream(JOBS) + "---\n" + SAMPLE.replace("name: ms-widedeep-dataparallel", "name: job-3", 1)
    run = msgen("render", "-", input=text)
    assert run.exit_code == 1
    assert run.stdout == ""
    first = _line_of(text.split("name: job-4", 1)[0], "name: job-3")
    assert f"the document at <stdin>:{first}:" in run.stderr


def test_validate_streams_too() -> None:
    run = msgen("validate", "-", input=_stream(JOBS))
    assert run.exit_code == 0
    assert f"{JOBS} job(s) in {JOBS} document(s)" in run.stderr


OBJECTS: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {"a": "x\ny\n\n"}}
    for i in range(5)
]


@pytest.mark.parametrize("cut", [[], [5], [1, 4], [1, 1, 3], [0, 2, 0, 3]])
def test_pieces_join_to_the_whole_yaml(cut: list[int]) -> None:
    stream, start, text = emit.YamlStream(), 0, ""
    for size in cut:
        text += stream.piece(OBJECTS[start : start + size])
        start += size
    text += stream.piece(OBJECTS[start:]) + stream.end()
    assert text == emit.to_yaml(OBJECTS)
    assert text.endswith("...\n")  # the last document keeps its line breaks: libyaml ends so
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(text)] == [f"c{i}" for i in range(5)]


@pytest.mark.parametrize("objects", [[], OBJECTS[:1], OBJECTS])
def test_pieces_join_to_the_whole_json(objects: list[dict[str, Any]]) -> None:
    stream = emit.JsonStream()
    text = "".join(stream.piece([obj]) for obj in objects) + stream.end()
    assert text == emit.to_json(objects)


def test_the_same_bad_template_in_two_jobs_is_reported_in_both() -> None:
    bad = SAMPLE.replace("imagePullPolicy: IfNotPresent", "imagePullPolicy: {}")
    text = "---\n" + bad.replace("name: ms-widedeep-dataparallel", "name: a", 1)
    text += "---\n" + bad.replace("name: ms-widedeep-dataparallel", "name: b", 1)
    run = msgen("render", "-", input=text)
    assert run.exit_code == 1
    # Each job's two templates report their own error, on their own line of the stream.
    lines = [n + 1 for n, line in enumerate(text.splitlines()) if "imagePullPolicy: {}" in line]
    assert len(lines) == 4
    for line in lines:
        assert f"<stdin>:{line}:32: error:" in run.stderr


def test_not_utf8_far_down_a_file(tmp_path: Path) -> None:
    source = tmp_path / "jobs.yaml"
    text = _stream(JOBS)
    source.write_bytes(text.encode() + b"---\nkey: \xff\n")
    run = msgen("render", str(source))
    assert run.exit_code == 1
    assert run.stdout == ""
    assert f"{source}:{text.count(chr(10)) + 2}:6: error: not UTF-8 text (byte 0xff)" in run.stderr


def test_a_character_yaml_refuses_far_down_a_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    source = tmp_path / "jobs.yaml"
    text = _stream(JOBS) + "---\nkey: ab\x07\n"
    source.write_bytes(b"\xef\xbb\xbf" + text.encode())
    run = msgen("render", str(source))
    assert run.exit_code == 1
    assert f"{source}:{text.count(chr(10))}:8: error: not valid YAML: the character U+0007" in run.stderr


def test_the_in_memory_api_keeps_no_objects_of_a_source_that_breaks_part_way() -> None:
    from msgen import compile_documents

    result = compile_documents(_stream(3) + "---\nkey: [unclosed\n")
    assert not result.ok
    assert result.objects == []
    assert [d.message.startswith("not valid YAML") for d in result.diagnostics] == [True]


def test_a_spool_beyond_memory_moves_to_a_file_and_keeps_the_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small output stays in memory (no tempfile import); larger output spills to a file."""
    from msgen.yamlio import spool

    text = _stream(JOBS)
    held = msgen("render", "-", input=text)
    assert held.exit_code == 0, held.stderr
    moved: list[bool] = []
    to_file = spool.Spool._to_file

    def spy(self: spool.Spool) -> None:
        moved.append(True)
        to_file(self)

    monkeypatch.setattr(spool, "_IN_MEMORY", 1000)
    monkeypatch.setattr(spool.Spool, "_to_file", spy)
    spilled = msgen("render", "-", input=text)
    assert spilled.exit_code == 0, spilled.stderr
    assert moved == [True]
    assert spilled.stdout == held.stdout


def test_a_stream_keeps_only_the_findings_it_prints(tmp_path: Path) -> None:
    """One warning per job of a long stream: 200 are kept and printed, the rest counted."""
    from msgen.model.diagnostics import MAX_REPORTED
    from msgen.compile.driver import compile_stream
    from msgen.model.plan import Options
    from msgen.model.source import Source

    assert "cleanPodPolicy: None" in SAMPLE  # which indexed-job expresses only partly: a warning
    jobs = MAX_REPORTED + 30
    text = "".join(
        "---\n" + SAMPLE.replace("name: ms-widedeep-dataparallel", f"name: job-{i}", 1)
        for i in range(jobs)
    )
    compilation = compile_stream([Source("many.yaml", text)], Options(), lambda objects: None)
    assert compilation.ok
    assert len(compilation.diagnostics) == MAX_REPORTED
    assert (compilation.unshown_findings, compilation.unshown_errors) == (jobs - MAX_REPORTED, 0)
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0, run.stderr
    assert run.stderr.count("warning:") == MAX_REPORTED
    assert f"... and {jobs - MAX_REPORTED} more finding(s) (0 error(s)) not shown" in run.stderr


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_a_streamed_source_reads_the_lines_a_report_needs_as_lines_counts_them(pad: int) -> None:
    """YAML's line breaks (\\r\\n, \\r, \\n, NEL, LS, PS), one \\r\\n straddling the 1 MiB piece."""
    import io

    from msgen.model.diagnostics import Lines
    from msgen.model.source import StreamedSource

    head = "a: 1\r\nb: 2\rc: 3\nd: \u00e9\u0085e: 5\u2028f: 6\u2029g: 7\n"
    filler = "x" * ((1 << 20) - len(head.encode()) - 1 - pad) + "\r\n"
    text = head + filler + "h: 8\r\n\r\nlast: line"
    lines = Lines(text)
    wanted = set(range(1, 20))
    picked = StreamedSource("s.yaml", io.BytesIO(text.encode())).read_lines(wanted)
    assert picked == {n: lines.line(n) for n in wanted if lines.line(n) is not None}
    assert (picked[8], picked[9], picked[10], picked[11]) == (filler[:-2], "h: 8", "", "last: line")


def test_a_texts_line_starts_are_where_yamls_line_breaks_end() -> None:
    # Lines cuts a text whose only break is \n with str.split, any other by LINE_BREAK: every
    # text of up to four pieces (each break, characters beyond ASCII) is cut as LINE_BREAK cuts it.
    import itertools
    import re

    from msgen.model import diagnostics

    pieces = ["a", "\u00e9", "\n", "\r", "\r\n", "\x85", "\u2028", "\u2029", " ", "\n\n"]
    for count in range(5):
        for chosen in itertools.product(pieces, repeat=count):
            text = "".join(chosen)
            expected = [0, *(m.end() for m in re.finditer(diagnostics.LINE_BREAK, text))]
            assert diagnostics._line_starts(text) == expected, repr(text)
