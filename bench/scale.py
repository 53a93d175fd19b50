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
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "mindspore" / "widedeep-gpu-dataparallel.yaml"


def run(cmd: list[str], stdin: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one fresh process, stdout to /dev/null.

    A wrapper process runs the command, so RUSAGE_CHILDREN holds that run alone; it times the
    run itself, so the wrapper's own start-up is not counted."""
    wrapper = [sys.executable, "-c",
               "import resource,subprocess,sys,time;"
               "t=time.perf_counter();"
               "p=subprocess.run(sys.argv[2:],stdin=open(sys.argv[1],'rb'),stdout=subprocess.DEVNULL,"
               "stderr=subprocess.PIPE);"
               "w=time.perf_counter()-t;"
               "sys.stderr.buffer.write(p.stderr[-2000:]) if p.returncode else None;"
               "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)",
               str(stdin or os.devnull), *cmd]
    done = subprocess.run(wrapper, capture_output=True, text=True, check=True)
    wall, rss, code = done.stdout.split()
    if code != "0":
        sys.exit(f"{shlex.join(cmd)} failed: {done.stderr}")
    return float(wall), int(rss)


def measured(cmds: list[list[str]], runs: int, stdin: Path | None, warm_up: bool) -> list[tuple[float, int]]:
    """Per command, the median wall time over `runs` counted runs and the largest peak RSS; the
    commands alternate run by run, so machine-load drift hits them alike."""
    if warm_up:
        for cmd in cmds:
            run(cmd, stdin)
    samples: list[list[tuple[float, int]]] = [[] for _ in cmds]
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            samples[i].append(run(cmd, stdin))
    return [(statistics.median(w for w, _ in s), max(r for _, r in s)) for s in samples]


def many_jobs(n: int, path: Path) -> Path:
    """n copies of the sample MSJob, each with its own name, as one multi-document stream."""
    import yaml

    doc = yaml.safe_load(SAMPLE.read_text())
    doc["metadata"]["name"] = "job-NAME"
    text = "---\n" + yaml.safe_dump(doc, sort_keys=False)  # as dumping each copy would write it
    with path.open("w") as out:
        for i in range(n):
            out.write(text.replace("job-NAME", f"job-{i:05d}"))
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
    ap.add_argument("--baseline", default=None,
                    help="command line of another msgen (e.g. an older checkout: "
                         "\"env PYTHONPATH=/tmp/old python -m msgen\"), run alternately with --msgen")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--stream-jobs", type=int, default=34000, help="jobs in the stream case (0 skips it)")
    ap.add_argument("--many-jobs", type=int, default=1000)
    ap.add_argument("--kubectl", default=shutil.which("kubectl"), help="kubectl for the ratio rows")
    ap.add_argument("--no-kubectl", action="store_true", help="skip the kubectl kustomize ratio rows")
    ap.add_argument("--only", default="", help="comma-separated case names to run")
    args = ap.parse_args()
    beside = Path(sys.executable).parent / "msgen"
    msgen = shlex.split(args.msgen) if args.msgen else [str(beside) if beside.is_file() else "msgen"]
    baseline = shlex.split(args.baseline) if args.baseline else None
    only = set(filter(None, args.only.split(",")))
    with tempfile.TemporaryDirectory(prefix="msgen-scale-") as tmp_name:
        tmp = Path(tmp_name)
        cases: list[tuple[str, Path, list[str], bool]] = [
            ("typical", SAMPLE, [], True),
            (f"jobs-{args.many_jobs}", tmp / "many.yaml", [], True),
            ("pod-4096", tmp / "w4096.yaml", ["--target", "pod"], False),
            ("pod-8192", tmp / "w8192.yaml", ["--target", "pod"], False),
        ]
        if args.stream_jobs:
            cases.append((f"stream-{args.stream_jobs}", tmp / "stream.yaml", [], False))
        print(f"msgen: {shlex.join(msgen)}; runs: {args.runs} counted + 1 warm-up "
              f"(stream: 1, no warm-up); machine: {os.cpu_count()} CPUs, shared")
        if baseline:
            print(f"baseline: {shlex.join(baseline)} (alternating with msgen, run by run)")
        results: dict[str, float] = {}
        for name, src, opts, ratio in cases:
            if only and name not in only:
                continue
            if name.startswith("jobs-"):
                many_jobs(args.many_jobs, src)
            elif name.startswith("pod-"):
                wide_job(int(name[4:]), src)
            elif name.startswith("stream-"):
                many_jobs(args.stream_jobs, src)
            stream = name.startswith("stream-")
            cmd = [*msgen, "render", *opts, "-"]
            cmds = [cmd] + ([[*baseline, "render", *opts, "-"]] if baseline else [])
            found = measured(cmds, 1 if stream else args.runs, src, warm_up=not stream)
            (wall, rss) = found[0]
            results[name] = wall
            line = f"{name:14} msgen median {wall * 1000:9.1f} ms  peak RSS {rss / 1024:7.1f} MiB"
            if baseline:
                (bwall, brss) = found[1]
                results["baseline " + name] = bwall
                line += (f"  | baseline {bwall * 1000:9.1f} ms  {brss / 1024:7.1f} MiB"
                         f"  | msgen/baseline time {wall / bwall:.2f}x")
            if ratio and args.kubectl and not args.no_kubectl:
                out = tmp / name
                out.mkdir()
                with (out / "out.yaml").open("wb") as f, src.open("rb") as inp:
                    subprocess.run([*msgen, "render", *opts, "-"], stdin=inp, stdout=f, check=True)
                (out / "kustomization.yaml").write_text("resources:\n- out.yaml\n")
                kcmd = [args.kubectl, "kustomize", str(out)]
                pairs = []
                kwalls = []
                for _ in range(args.runs):
                    a = run(cmd, src)[0]
                    b = run(kcmd)[0]
                    kwalls.append(b)
                    pairs.append(a / b)
                line += (f"  | kubectl kustomize median {statistics.median(kwalls) * 1000:9.1f} ms"
                         f"  ratio msgen/kubectl {statistics.median(pairs):.2f}x")
            print(line, flush=True)
        for who in ("", "baseline "):
            if who + "pod-4096" in results and who + "pod-8192" in results:
                print(f"{who}pod-8192 / pod-4096: {results[who + 'pod-8192'] / results[who + 'pod-4096']:.2f}x")


if __name__ == "__main__":
    main()
