#!/usr/bin/env python3
"""One row per case of msgen's scale table: wall-clock time and peak RSS of cold renders.

Why: msgen's users feel two things, the cold start of one render (Argo CD and kustomize
start msgen afresh every time) and how a render grows with its input (CI renders whole
directories; one job can have thousands of Workers). Each case here runs `msgen render`
as a fresh process, `--runs` times, and reports the median wall-clock time and the largest
peak RSS (resource.getrusage of the children, ru_maxrss). Where a case has a yardstick
(kubectl kustomize passing msgen's own output through) both commands alternate in the same
run, so machine-load drift hits both alike; compare ratios, not absolute times, on a shared
machine. Standalone: needs the standard library and msgen; kubectl only for the ratio rows.
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "mindspore" / "widedeep-gpu-dataparallel.yaml"


def run(cmd: list[str], stdin: Path | None = None) -> tuple[float, int]:
    """Wall seconds of one fresh process (stdout to /dev/null), and 0 (RSS is taken in `measured`)."""
    with open(os.devnull, "wb") as null, open(stdin or os.devnull, "rb") as inp:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=inp, stdout=null, stderr=subprocess.PIPE)
        _, err = proc.communicate()
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{shlex.join(cmd)} failed: {err.decode()[-2000:]}")
    return wall, 0


def measured(cmd: list[str], runs: int, stdin: Path | None = None) -> tuple[float, int]:
    """Median wall time over `runs` counted runs (one warm-up first) and the peak RSS of one run,
    measured in a wrapper process so RUSAGE_CHILDREN holds that run alone."""
    run(cmd, stdin)
    times = [run(cmd, stdin)[0] for _ in range(runs)]
    wrapper = [sys.executable, "-c",
               "import resource,subprocess,sys;"
               "subprocess.run(sys.argv[2:],stdin=open(sys.argv[1],'rb'),stdout=subprocess.DEVNULL,check=True);"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
               str(stdin or os.devnull), *cmd]
    rss = int(subprocess.run(wrapper, capture_output=True, text=True, check=True).stdout)
    return statistics.median(times), rss


def many_jobs(n: int, path: Path) -> Path:
    """n copies of the sample MSJob, each with its own name, as one multi-document stream."""
    import yaml

    doc = yaml.safe_load(SAMPLE.read_text())
    with path.open("w") as out:
        for i in range(n):
            job = copy.deepcopy(doc)
            job["metadata"]["name"] = f"job-{i:05d}"
            out.write("---\n" + yaml.safe_dump(job, sort_keys=False))
    return path


def wide_job(workers: int, path: Path) -> Path:
    """The sample MSJob with `workers` Workers."""
    import yaml

    doc = yaml.safe_load(SAMPLE.read_text())
    doc["spec"]["msReplicaSpecs"]["Worker"]["replicas"] = workers
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--msgen", default=None, help="command line of msgen (default: the one beside sys.executable)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stream-jobs", type=int, default=34000, help="jobs in the stream case (0 skips it)")
    ap.add_argument("--many-jobs", type=int, default=1000)
    ap.add_argument("--kubectl", default=shutil.which("kubectl"), help="kubectl for the ratio rows")
    ap.add_argument("--only", default="", help="comma-separated case names to run")
    args = ap.parse_args()
    beside = Path(sys.executable).parent / "msgen"
    msgen = shlex.split(args.msgen) if args.msgen else [str(beside) if beside.is_file() else "msgen"]
    only = set(filter(None, args.only.split(",")))
    with tempfile.TemporaryDirectory(prefix="msgen-scale-") as tmp_name:
        tmp = Path(tmp_name)
        cases: list[tuple[str, Path, list[str], bool]] = [
            ("typical", SAMPLE, [], True),
            (f"jobs-{args.many_jobs}", many_jobs(args.many_jobs, tmp / "many.yaml"), [], True),
            ("pod-4096", wide_job(4096, tmp / "w4096.yaml"), ["--target", "pod"], False),
            ("pod-8192", wide_job(8192, tmp / "w8192.yaml"), ["--target", "pod"], False),
        ]
        if args.stream_jobs:
            cases.append((f"stream-{args.stream_jobs}", tmp / "stream.yaml", [], False))
        print(f"msgen: {shlex.join(msgen)}; runs: {args.runs} counted + 1 warm-up; machine: {os.cpu_count()} CPUs, shared")
        results: dict[str, float] = {}
        for name, src, opts, ratio in cases:
            if only and name not in only:
                continue
            if name.startswith("stream-"):
                many_jobs(args.stream_jobs, src)
            cmd = [*msgen, "render", *opts, "-"]
            wall, rss = measured(cmd, args.runs if not name.startswith("stream-") else 1, src)
            results[name] = wall
            line = f"{name:14} msgen median {wall * 1000:9.1f} ms  peak RSS {rss / 1024:7.1f} MiB"
            if ratio and args.kubectl:
                out = tmp / name
                out.mkdir()
                with (out / "out.yaml").open("wb") as f, src.open("rb") as inp:
                    subprocess.run([*msgen, "render", *opts, "-"], stdin=inp, stdout=f, check=True)
                (out / "kustomization.yaml").write_text("resources:\n- out.yaml\n")
                kcmd = [args.kubectl, "kustomize", str(out)]
                pairs = []
                for _ in range(args.runs):
                    a = run(cmd, src)[0]
                    b = run(kcmd)[0]
                    pairs.append(a / b)
                kwall = statistics.median(run(kcmd)[0] for _ in range(max(1, args.runs)))
                line += f"  | kubectl kustomize median {kwall * 1000:9.1f} ms  ratio msgen/kubectl {statistics.median(pairs):.2f}x"
            print(line, flush=True)
        if "pod-4096" in results and "pod-8192" in results:
            print(f"pod-8192 / pod-4096: {results['pod-8192'] / results['pod-4096']:.2f}x")


if __name__ == "__main__":
    main()
