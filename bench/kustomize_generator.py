#!/usr/bin/env python3
"""What msgen adds to a `kustomize build` when it runs as the build's KRM generator.

Why: kustomize and Argo CD run the generator on every build and refresh, so its cost is paid
again and again. Two builds of the same objects are compared: `overlays/generator` (msgen
compiles the job inside the build) against a directory holding msgen's pre-rendered output
(kustomize only passes it through). The difference is what using msgen as a generator costs
per build: kustomize's exec-function overhead plus one cold msgen process.

A third build separates kustomize's share from msgen's: the same generator config with a
stand-in function that only prints msgen's pre-computed reply (no msgen process). kustomize
4.5.4 handles a function config of a kind it has no schema for (an MSJob) slowly on its own,
so that difference is noisy; the fourth row times msgen-krm alone, fed the very ResourceList
kustomize sends it (captured once through a `tee` function): msgen's own share, directly.

Method as in render_vs_kustomize.py: alternating runs, one uncounted warm-up each, medians.
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
import time
from pathlib import Path

from render_vs_kustomize import ROOT, default_kustomize, kustomize_version, timed

GENERATOR = ROOT / "overlays" / "generator"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="counted runs per build (plus 1 warm-up)")
    parser.add_argument("--kustomize", help="kustomize binary (default: as render_vs_kustomize.py)")
    parser.add_argument("--krm-only", action="store_true",
                        help="time msgen-krm alone (and --before-krm, kubectl kustomize), not the builds")
    parser.add_argument("--before-krm", help="another msgen-krm (an older venv's) to time in the same run")
    args = parser.parse_args()
    kustomize = [args.kustomize] if args.kustomize else default_kustomize()
    bin_dir = str(Path(sys.executable).parent)
    with tempfile.TemporaryDirectory(prefix="msgen-bench-") as temp:
        env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
               "PYTHONPYCACHEPREFIX": os.path.join(temp, "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        rendered = Path(temp) / "rendered"
        rendered.mkdir()
        out = subprocess.run([sys.executable, "-m", "msgen", "render", str(GENERATOR / "msjob.yaml")],
                             capture_output=True, text=True, check=True, env=env).stdout
        (rendered / "out.yaml").write_text(out)
        (rendered / "kustomization.yaml").write_text("resources:\n- out.yaml\n")
        request = captured_request(Path(temp), kustomize, env)
        stand_in = stand_in_generator(Path(temp), request, env)
        krm = [str(Path(sys.executable).parent / "msgen-krm")]
        commands = {
            "generator": [*kustomize, "build", "--enable-alpha-plugins", "--enable-exec", str(GENERATOR)],
            "stand-in": [*kustomize, "build", "--enable-alpha-plugins", "--enable-exec", str(stand_in)],
            "pre-rendered": [*kustomize, "build", str(rendered)],
        }
        if args.krm_only:  # the yardstick: kubectl kustomize passing the same objects through
            kubectl = shutil.which("kubectl")
            commands = {"kubectl kustomize": [kubectl, "kustomize", str(rendered)]} if kubectl else {}
        alone = {"msgen-krm alone": krm}
        if args.before_krm:
            alone["before-krm alone"] = shlex.split(args.before_krm)
        times: dict[str, list[float]] = {name: [] for name in [*commands, *alone]}
        for run in range(args.runs + 1):
            for name, cmd in commands.items():
                elapsed = timed(cmd, env)
                if run:
                    times[name].append(elapsed)
            for name, cmd in alone.items():
                elapsed = timed_with_input(cmd, request, env)
                if run:
                    times[name].append(elapsed)
    print(f"kustomize: {kustomize_version(kustomize)}")
    print(f"runs:      {args.runs} per build, alternating; 1 warm-up each not counted")
    for name, cmd in commands.items():
        print(f"{name:13} median {1000 * statistics.median(times[name]):7.1f} ms   {' '.join(cmd)}")
    if args.before_krm:
        ratio = statistics.median(a / b for a, b in zip(times["msgen-krm alone"], times["before-krm alone"], strict=True))
        print(f"before-krm alone: median {1000 * statistics.median(times['before-krm alone']):.1f} ms   "
              f"{args.before_krm} < request.yaml; msgen-krm/before (per pair) {ratio:.2f}x")
    if "kubectl kustomize" in times:
        ratio = statistics.median(a / b for a, b in zip(times["msgen-krm alone"], times["kubectl kustomize"], strict=True))
        print(f"msgen-krm alone / kubectl kustomize (per pair): {ratio:.2f}x")
    if args.krm_only:
        print(f"msgen-krm alone on kustomize's ResourceList: median "
              f"{1000 * statistics.median(times['msgen-krm alone']):.1f} ms   {shlex.join(krm)} < request.yaml")
        return
    added = [g - p for g, p in zip(times["generator"], times["pre-rendered"], strict=True)]
    own = [g - s for g, s in zip(times["generator"], times["stand-in"], strict=True)]
    print(f"msgen as a generator adds (median per pair): {1000 * statistics.median(added):.1f} ms per build")
    print(f"  of which the msgen-krm process (generator - stand-in): {1000 * statistics.median(own):.1f} ms")
    print(f"msgen-krm alone on kustomize's ResourceList: median "
          f"{1000 * statistics.median(times['msgen-krm alone']):.1f} ms   {shlex.join(krm)} < request.yaml")


def timed_with_input(cmd: list[str], stdin: Path, env: dict[str, str]) -> float:
    """Seconds for one run of `cmd` reading `stdin`; output discarded, as in `timed`."""
    with stdin.open("rb") as given:
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdin=given, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{shlex.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.decode(errors='replace')}")
    return elapsed


def captured_request(temp: Path, kustomize: list[str], env: dict[str, str]) -> Path:
    """The ResourceList kustomize sends msgen-krm for overlays/generator, from one real build."""
    directory = temp / "capture"
    directory.mkdir()
    request = temp / "request.yaml"
    krm = Path(sys.executable).parent / "msgen-krm"
    script = directory / "fn.sh"
    script.write_text(f"#!/bin/sh\ntee {shlex.quote(str(request))} | {shlex.quote(str(krm))}\n")
    script.chmod(0o755)
    job = (GENERATOR / "msjob.yaml").read_text()
    (directory / "msjob.yaml").write_text(job.replace("path: msgen-krm", "path: ./fn.sh"))
    (directory / "kustomization.yaml").write_text("generators:\n- msjob.yaml\n")
    subprocess.run([*kustomize, "build", "--enable-alpha-plugins", "--enable-exec", str(directory)],
                   stdout=subprocess.DEVNULL, check=True, env=env)
    return request


def stand_in_generator(temp: Path, request: Path, env: dict[str, str]) -> Path:
    """overlays/generator with a function that prints msgen-krm's reply without running msgen."""
    directory = temp / "stand-in"
    directory.mkdir()
    job = (GENERATOR / "msjob.yaml").read_text()
    reply = subprocess.run([str(Path(sys.executable).parent / "msgen-krm")], input=request.read_text(),
                           capture_output=True, text=True, check=True, env=env).stdout
    (directory / "reply.yaml").write_text(reply)
    script = directory / "fn.sh"
    script.write_text(f"#!/bin/sh\ncat {directory / 'reply.yaml'}\n")
    script.chmod(0o755)
    (directory / "msjob.yaml").write_text(job.replace("path: msgen-krm", "path: ./fn.sh"))
    (directory / "kustomization.yaml").write_text("generators:\n- msjob.yaml\n")
    return directory


if __name__ == "__main__":
    main()
