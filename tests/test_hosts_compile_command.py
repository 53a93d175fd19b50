"""msgen.hosts.compile_command: the error boundary every host shares (`internal_error`,
`EXIT_INTERNAL`), and the UTF-8 check every host reads bytes through (yamlio.inputs.decoded)."""

from __future__ import annotations

import io
import sys

import pytest

from msgen.hosts import compile_command
from msgen.hosts.kustomize import krm
from msgen.hosts.compile_command import EXIT_INTERNAL, guarded


def _bug() -> tuple[int, str, list[str]]:
    raise RuntimeError("boom")


def test_a_bug_under_msgen_is_one_line_and_exit_70(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MSGEN_DEBUG", raising=False)
    with pytest.raises(SystemExit) as ended:
        guarded(lambda: (_bug(), None)[1])
    assert ended.value.code == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.splitlines() == [compile_command.internal_error("msgen", RuntimeError("boom"))]
    assert err.startswith("msgen: internal error: RuntimeError: boom; this is a bug in msgen")


@pytest.mark.parametrize("host", ["msgen", "msgen-krm"])
def test_msgen_debug_shows_the_traceback_instead(
    host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MSGEN_DEBUG", "1")
    monkeypatch.setattr(krm, "run_bytes", lambda raw, cwd: _bug())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    with pytest.raises(RuntimeError, match="boom"):
        if host == "msgen":
            guarded(lambda: (_bug(), None)[1])
        else:
            krm.run_function()


def test_a_bug_under_msgen_krm_is_the_same_message_in_a_resource_list(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MSGEN_DEBUG", raising=False)
    monkeypatch.setattr(krm, "run_bytes", lambda raw, cwd: _bug())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    with pytest.raises(SystemExit) as ended:
        krm.run_function()
    assert ended.value.code == EXIT_INTERNAL
    out, err = capsys.readouterr()
    message = compile_command.internal_error("msgen-krm", RuntimeError("boom"))
    assert "kind: ResourceList" in out and "msgen-krm: internal error: RuntimeError: boom" in out
    assert message in err


@pytest.mark.parametrize(
    "raw, where",
    [(b"a: 1\nb: \xff\n", (2, 4)), (b"\xfe", (1, 1)), (b"x: \xc3\n", (1, 4))],
)
def test_bytes_that_are_not_utf8_are_placed_alike_in_a_file_and_a_resource_list(
    raw: bytes, where: tuple[int, int]
) -> None:
    from msgen.yamlio.inputs import decoded

    _, in_file = decoded("job.yaml", raw)
    status, _out, messages = krm.run_bytes(raw, ".")
    assert in_file is not None and in_file.position is not None
    assert (in_file.position.line, in_file.position.column) == where
    assert status == 1
    assert any(f"<ResourceList>:{where[0]}:{where[1]}: error: not UTF-8" in m for m in messages)
    assert in_file.message.endswith("accepted: YAML in UTF-8")
