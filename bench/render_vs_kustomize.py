#!/usr/bin/env python3
"""Wall-clock cost of one cold `msgen render` against `kustomize build`.

Why: msgen runs where kustomize runs (Argo CD config management plugins, CI
pipelines, pre-commit hooks), once per render, in a fresh process. Its
start-up cost is what users feel, so the yardstick is kustomize 4.5.4 doing
the least work it can on the same objects: `kustomize build DIR`, where DIR
holds a kustomization.yaml whose only resource is msgen's own output for the
sample. Both commands therefore start a process, read YAML and print the
same objects; the ratio says how much msgen's Python start-up and compiling
cost on top of that floor.

Method: the two commands alternate (msgen, kustomize, msgen, ...) so drifting
machine load hits both alike. Every run is a new process ("cold" means a
fresh interpreter, not a cold disk cache). The first run of each command is a
warm-up (page cache, bytecode cache) and is not counted. msgen runs with
a private bytecode cache (PYTHONPYCACHEPREFIX in the temporary directory, and
PYTHONDONTWRITEBYTECODE unset): an installed msgen has its .pyc files, but an
editable install under PYTHONDONTWRITEBYTECODE=1 would recompile msgen on
every run, and the bench must not write __pycache__ into the source tree.
--env-as-is measures with the caller's environment instead. The ratio reported is
the median of the per-pair ratios msgen/kustomize. `--kubectl` adds `kubectl kustomize DIR`
(the yardstick users most often have) and `--before CMD` another msgen (an older checkout's
venv) to the same alternation, so before/after ratios come from one run on a noisy machine.
Standalone: needs only the standard library, msgen and kustomize; no pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SAMPLE = ROOT / "samples" / "mindspore" / "widedeep-gpu-dataparallel.yaml"
KUSTOMIZE_VERSION = "v4.5.4"


def default_msgen() -> list[str]:
    """The msgen installed beside this interpreter, so `venv/bin/python bench/...` measures that venv."""
    beside = Path(sys.executable).parent / "msgen"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("msgen")
    if found is None:
        sys.exit("msgen not found beside sys.executable nor on PATH; pass --msgen")
    return [found]


def default_kustomize() -> list[str]:
    """The same lookup order as the tests and .ci/run use, then `kubectl kustomize` as a last resort."""
    for candidate in (os.environ.get("MSGEN_KUSTOMIZE"), str(ROOT / ".ci" / "tools" / "kustomize"),
                      shutil.which("kustomize")):
        if candidate and os.access(candidate, os.X_OK):
            return [candidate]
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        return [kubectl, "kustomize"]
    sys.exit("kustomize not found ($MSGEN_KUSTOMIZE, .ci/tools, PATH, kubectl); run .ci/fetch-kustomize")


def kustomize_version(kustomize: list[str]) -> str:
    """What is actually measured: the figures only mean something against the stated kustomize."""
    if Path(kustomize[0]).name == "kubectl":
        return "bundled with kubectl (see `kubectl version --client`)"
    out = subprocess.run([*kustomize, "version"], capture_output=True, text=True).stdout.strip()
    if KUSTOMIZE_VERSION not in out:
        print(f"warning: expected kustomize {KUSTOMIZE_VERSION}, got: {out}", file=sys.stderr)
    return out


def timed(cmd: list[str], env: dict[str, str]) -> float:
    """Seconds for one run; output is discarded so terminal or pipe speed does not count."""
    return measured(cmd, env)[0]


def measured(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds for one run, and the CPU seconds (user + system) the operating system
    accounted to the process and its children: on a shared machine the CPU time moves less
    with the load than the wall time does."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{shlex.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def import_costs(cmd: list[str], env: dict[str, str], top: int = 5) -> dict[str, Any]:
    """One msgen run under -X importtime (via PYTHONPROFILEIMPORTTIME, so any Python launcher works).

    Why: a cold render is mostly interpreter start-up and imports; this shows which modules pay for it.
    Self times are exclusive, so they add up to the total import time; profiling itself adds some overhead.
    """
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True,
                          env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
    modules: list[tuple[int, str]] = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            self_field, _cumulative, name = line[len("import time:"):].split("|")
            modules.append((int(self_field), name.strip()))
    by_package: dict[str, int] = defaultdict(int)
    for self_us, name in modules:
        by_package[name.split(".")[0]] += self_us
    ranked = sorted(modules, reverse=True)[:top]
    return {
        "total_import_s": sum(us for us, _ in modules) / 1e6,
        "top_modules_self_s": [{"module": name, "self_s": us / 1e6} for us, name in ranked],
        "top_packages_self_s": [{"package": pkg, "self_s": us / 1e6}
                                for pkg, us in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]],
    }


def main() -> None:  # noqa: C901 - the benchmark's steps in order, an option's branch each
    """Parse options, build the pass-through kustomization, time both commands, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sample", type=Path, default=DEFAULT_SAMPLE, help="MSJob file to render")
    parser.add_argument("--runs", type=int, default=20, help="counted runs per command (plus 1 warm-up)")
    parser.add_argument("--msgen", help="msgen command line (default: msgen beside sys.executable, else PATH)")
    parser.add_argument("--kustomize", help="kustomize binary (default: $MSGEN_KUSTOMIZE, .ci/tools, PATH, kubectl)")
    parser.add_argument("--kubectl", action="store_true", help="also time `kubectl kustomize DIR`")
    parser.add_argument("--before", help="another msgen command line to time in the same run")
    parser.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    parser.add_argument("--env-as-is", action="store_true",
                        help="keep the caller's bytecode settings instead of a private .pyc cache")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    msgen = shlex.split(args.msgen) if args.msgen else default_msgen()
    kustomize = [args.kustomize] if args.kustomize else default_kustomize()
    sample = args.sample.resolve()

    with tempfile.TemporaryDirectory(prefix="msgen-bench-") as tmp:
        env = dict(os.environ)
        if not args.env_as_is:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        msgen_cmd = [*msgen, "render", str(sample)]
        first = subprocess.run(msgen_cmd, capture_output=True, env=env)
        if first.returncode != 0:
            sys.exit(f"{shlex.join(msgen_cmd)} failed ({first.returncode}):\n{first.stderr.decode(errors='replace')}")
        (Path(tmp) / "rendered.yaml").write_bytes(first.stdout)
        (Path(tmp) / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- rendered.yaml\n")
        kustomize_cmd = [*kustomize, "build", tmp]
        commands = {"msgen": msgen_cmd, "kustomize": kustomize_cmd}
        if args.before:
            commands["before"] = [*shlex.split(args.before), "render", str(sample)]
        if args.kubectl:
            kubectl = shutil.which("kubectl")
            if kubectl is None:
                sys.exit("--kubectl: kubectl not found on PATH")
            commands["kubectl"] = [kubectl, "kustomize", tmp]

        times: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(args.runs + 1):
            for name, cmd in commands.items():
                elapsed, used = measured(cmd, env)
                if i > 0:  # run 0 is the warm-up
                    times[name].append(elapsed)
                    cpu[name].append(used)
        imports = import_costs(msgen_cmd, env)

    ratios = [m / k for m, k in zip(times["msgen"], times["kustomize"], strict=True)]
    extra_ratios = {
        f"{a}/{b}": statistics.median(x / y for x, y in zip(times[a], times[b], strict=True))
        for a, b in (("msgen", "kubectl"), ("before", "kubectl"), ("before", "kustomize"),
                     ("msgen", "before"))
        if a in times and b in times
    }
    summary: dict[str, Any] = {
        "sample": str(sample),
        "runs": args.runs,
        "warmup_runs_discarded": 1,
        "bytecode": "caller's environment" if args.env_as_is else "private .pyc cache (PYTHONPYCACHEPREFIX)",
        "commands": {name: shlex.join(cmd) for name, cmd in commands.items()},
        "kustomize_version": kustomize_version(kustomize),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0]},
        "median_s": {name: statistics.median(ts) for name, ts in times.items()},
        "min_s": {name: min(ts) for name, ts in times.items()},
        "median_ratio_msgen_over_kustomize": statistics.median(ratios),
        "median_ratios": extra_ratios,
        "median_cpu_s": {name: statistics.median(ts) for name, ts in cpu.items()},
        "median_cpu_ratios": {
            f"{a}/{b}": statistics.median(x / y for x, y in zip(cpu[a], cpu[b], strict=True) if y)
            for a, b in (("msgen", "kustomize"), ("msgen", "kubectl"), ("before", "kubectl"), ("msgen", "before"))
            if a in cpu and b in cpu
        },
        "msgen_imports": imports,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return

    print(f"sample:    {summary['sample']}")
    print(f"msgen:     {summary['commands']['msgen']}")
    print(f"kustomize: {summary['commands']['kustomize']}  ({summary['kustomize_version']})")
    print(f"runs:      {args.runs} per command, alternating; 1 warm-up run each not counted")
    print(f"bytecode:  {summary['bytecode']}")
    print(f"machine:   {summary['machine']['cpus']} CPUs, {summary['machine']['platform']}")
    for name in ("before", "kubectl"):
        if name in commands:
            print(f"{name + ':':<10} {summary['commands'][name]}")
    for name in commands:
        print(f"{name:<10} median {summary['median_s'][name] * 1e3:7.1f} ms   min {summary['min_s'][name] * 1e3:7.1f} ms")
    print(f"median ratio msgen/kustomize (per pair): {summary['median_ratio_msgen_over_kustomize']:.2f}x")
    for pair, ratio in extra_ratios.items():
        print(f"median ratio {pair} (per pair): {ratio:.2f}x")
    print("CPU (user + system) medians: " + ", ".join(
        f"{name} {value * 1e3:.1f} ms" for name, value in summary["median_cpu_s"].items()))
    for pair, ratio in summary["median_cpu_ratios"].items():
        print(f"median CPU ratio {pair} (per pair): {ratio:.2f}x")
    print(f"msgen imports (one run, -X importtime): {imports['total_import_s'] * 1e3:.1f} ms in total; top self times:")
    for row in imports["top_modules_self_s"]:
        print(f"  {row['self_s'] * 1e3:6.1f} ms  {row['module']}")
    print("  by top-level package: " + ", ".join(
        f"{row['package']} {row['self_s'] * 1e3:.1f} ms" for row in imports["top_packages_self_s"]))


if __name__ == "__main__":
    main()
