"""The library API changes nothing of its caller's process; the console commands own theirs.

`msgen.compile_documents` and `msgen.render` run inside someone else's program: they leave
the cycle collector as they found it, and keep nothing after the call (what a compile session
remembers is its own, `memo.CompileMemos`). The console commands, whose process ends after a
render, pause the collector per document (`collector.paused`).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import msgen
from msgen.compile import driver, pipeline
from msgen.hosts.compile_command import compile_paths
from msgen.model.plan import Options

from .conftest import SAMPLES

JOB = (SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml").read_text()


@pytest.fixture
def collector_seen(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Whether the collector was on while each document compiled."""
    seen: list[bool] = []
    compile_document = pipeline.compile_document

    def watched(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return compile_document(*args)

    monkeypatch.setattr(driver, "compile_document", watched)
    was = gc.isenabled()
    yield seen
    gc.enable() if was else gc.disable()


@pytest.mark.parametrize("collecting", [True, False], ids=["collector on", "collector off"])
def test_the_library_call_leaves_the_collector_as_it_found_it(
    collector_seen: list[bool], collecting: bool
) -> None:
    gc.enable() if collecting else gc.disable()
    result = msgen.compile_documents(JOB + "---\n" + JOB.replace("name: ", "name: b", 1))
    assert result.objects and collector_seen == [collecting, collecting]
    assert gc.isenabled() is collecting
    msgen.render(JOB)
    assert gc.isenabled() is collecting


def test_the_console_commands_pause_the_collector_per_document(collector_seen: list[bool]) -> None:
    gc.enable()
    path = str(SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml")
    compile_paths([path], Options(), sink=lambda objects: None)
    assert collector_seen == [False]
    assert gc.isenabled()


def _held() -> dict[str, int]:
    """The size of every container msgen's modules hold at module level (and of the
    containers directly inside them, as caches keyed by dumper class were)."""
    sizes = {}
    for name, module in list(sys.modules.items()):
        if name != "msgen" and not name.startswith("msgen."):
            continue
        for attribute, value in vars(module).items():
            if isinstance(value, (dict, set, list)):
                inner = value.values() if isinstance(value, dict) else ()
                nested = sum(len(v) for v in inner if isinstance(v, (dict, set, list)))
                sizes[f"{name}.{attribute}"] = len(value) + nested
    return sizes


def test_the_library_keeps_nothing_of_what_it_compiled() -> None:
    msgen.render(JOB)  # loads the modules, and what they build once per model class
    before = _held()
    for n in range(3):
        msgen.render(JOB.replace("name: ", f"name: other{n}-", 1).replace("image: ", f"image: r{n}/"))
    after = _held()
    grown = {name: (before.get(name, 0), size) for name, size in after.items() if size > before.get(name, 0)}
    assert grown == {}
