#!/usr/bin/env python3
"""What the emitter's scalar fast paths save: `yaml_writer` with them, and without them.

The block writer asks PyYAML (one `yaml.dump_all` of a one-key mapping, some tens of
microseconds) how to write each distinct scalar, except text its `_PLAIN` pattern knows PyYAML
writes as it is (names, labels, paths, images), ints, booleans and null, and one-line ASCII
strings `scalar_styles` decides (plain, single-quoted, literal blocks). This script writes the
same objects both ways, alternating, in one process, each time with a fresh writer as a render
has (one output stream per process), and prints the medians, PyYAML's asks per write, and what
compiling the pattern costs at import. Outputs are checked byte-identical.

Cases: `typical` (the Wide&Deep sample: what a cold render writes), `jobs-N` (N copies of it
with distinct names in one stream). Run from the repository root:

    .venv/bin/python bench/emit_plain_scalars.py [--runs 200] [--jobs 1000]

Standalone: the standard library and msgen. Not a test; pytest does not collect it.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "mindspore" / "widedeep-gpu-dataparallel.yaml"
sys.path.insert(0, str(ROOT))

import msgen  # noqa: E402
from msgen.yamlio import emit, scalar_styles, yaml_dumper, yaml_writer  # noqa: E402

NEVER = re.compile(r"(?!)")  # matches nothing: every scalar and key asks PyYAML


def objects(jobs: int) -> list[dict[str, Any]]:
    text = SAMPLE.read_text()
    stream = "---\n".join(text.replace("name: ", f"name: j{n}-", 1) for n in range(jobs))
    result = msgen.compile_documents(stream)
    assert result.ok, result.diagnostics
    return [emit.canonical(obj) for obj in result.objects]


def write(items: list[dict[str, Any]], fast: bool) -> tuple[float, str, int]:
    """Seconds, text and PyYAML asks of one `to_yaml` with a fresh writer."""
    asks = 0
    dump = yaml_writer.pyyaml_dump

    def counted(*args: Any) -> str:
        nonlocal asks
        asks += 1
        return dump(*args)

    yaml_writer._PLAIN = plain if fast else NEVER
    scalar_styles.one_line = decide if fast else undecided  # type: ignore[assignment]
    yaml_writer.pyyaml_dump = counted  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        text = emit.to_yaml(items)
        return time.perf_counter() - started, text, asks
    finally:
        yaml_writer._PLAIN = plain
        scalar_styles.one_line = decide  # type: ignore[assignment]
        yaml_writer.pyyaml_dump = dump  # type: ignore[assignment]


def compile_cost(runs: int) -> float:
    """Median seconds to compile `_PLAIN`'s pattern (what the fast path adds to start-up)."""
    times = []
    for _ in range(runs):
        re.purge()
        started = time.perf_counter()
        re.compile(plain.pattern)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


plain = yaml_writer._PLAIN
decide = scalar_styles.one_line


def undecided(text: str) -> None:
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="writes per way and case")
    parser.add_argument("--jobs", type=int, default=1000, help="jobs in the stream case")
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, PyYAML with libyaml: {yaml_dumper.is_libyaml(yaml_dumper.DUMPER)}")
    for name, jobs, runs in (("typical", 1, args.runs), (f"jobs-{args.jobs}", args.jobs, max(3, args.runs // 40))):
        items = objects(jobs)
        with_fast, without = [], []
        for _ in range(runs):
            seconds, fast_text, fast_asks = write(items, True)
            with_fast.append(seconds)
            seconds, slow_text, slow_asks = write(items, False)
            without.append(seconds)
            assert fast_text == slow_text, "the two ways wrote different bytes"
        a, b = statistics.median(with_fast), statistics.median(without)
        print(f"{name:12} {len(items):6} objects  with fast path {a * 1e3:8.3f} ms "
              f"({fast_asks} PyYAML asks)  without {b * 1e3:8.3f} ms ({slow_asks} asks)  "
              f"saving {(b - a) * 1e3:7.3f} ms  ({runs} alternating runs, medians)")
    print(f"compiling the _PLAIN pattern at import: {compile_cost(args.runs) * 1e3:.3f} ms (median)")


if __name__ == "__main__":
    main()
