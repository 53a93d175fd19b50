#!/usr/bin/env python3
"""What msgen adds to a `kustomize build` when it runs as the build's KRM generator.

Why: kustomize and Argo CD run the generator on every build and refresh, so its cost is paid
again and again. Two builds of the same objects are compared: `overlays/generator` (msgen
compiles the job inside the build) against a directory holding msgen's pre-rendered output
(kustomize only passes it through). The difference is what using msgen as a generator costs
per build: kustomize's exec-function overhead plus one cold msgen process.

A third build separates kustomize's share from msgen's: the same generator config with a
stand-in function that only prints msgen's pre-computed reply (no msgen process). kustomize
4.5.4 handles a function config of a kind it has no schema for (an MSJob) slowly on its own.

Method as in render_vs_kustomize.py: alternating runs, one uncounted warm-up each, medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from render_vs_kustomize import ROOT, default_kustomize, kustomize_version, timed

GENERATOR = ROOT / "overlays" / "generator"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="counted runs per build (plus 1 warm-up)")
    parser.add_argument("--kustomize", help="kustomize binary (default: as render_vs_kustomize.py)")
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
        stand_in = stand_in_generator(Path(temp), env)
        commands = {
            "generator": [*kustomize, "build", "--enable-alpha-plugins", "--enable-exec", str(GENERATOR)],
            "stand-in": [*kustomize, "build", "--enable-alpha-plugins", "--enable-exec", str(stand_in)],
            "pre-rendered": [*kustomize, "build", str(rendered)],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for run in range(args.runs + 1):
            for name, cmd in commands.items():
                elapsed = timed(cmd, env)
                if run:
                    times[name].append(elapsed)
    print(f"kustomize: {kustomize_version(kustomize)}")
    print(f"runs:      {args.runs} per build, alternating; 1 warm-up each not counted")
    for name, cmd in commands.items():
        print(f"{name:13} median {1000 * statistics.median(times[name]):7.1f} ms   {' '.join(cmd)}")
    added = [g - p for g, p in zip(times["generator"], times["pre-rendered"])]
    own = [g - s for g, s in zip(times["generator"], times["stand-in"])]
    print(f"msgen as a generator adds (median per pair): {1000 * statistics.median(added):.1f} ms per build")
    print(f"  of which the msgen-krm process (generator - stand-in): {1000 * statistics.median(own):.1f} ms")


def stand_in_generator(temp: Path, env: dict[str, str]) -> Path:
    """overlays/generator with a function that prints msgen-krm's reply without running msgen."""
    directory = temp / "stand-in"
    directory.mkdir()
    job = (GENERATOR / "msjob.yaml").read_text()
    request = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
    request += "".join(f"  {line}\n" for line in job.splitlines() if not line.startswith("#"))
    reply = subprocess.run([str(Path(sys.executable).parent / "msgen-krm")], input=request,
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
