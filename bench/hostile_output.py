"""Two small inputs that make a large output, and what a run costs on them.

- `wide`: one MSJob of 100 KB (a 50 KB env value, 9,999 Workers) rendered with
  `--target pod`: about 500 MB of YAML without a bound; msgen stops at `max-output-size`.
- `many`: 20 MSJobs of 2,000 Workers each (30 KB of files) as an Argo CD application
  (`msgen argocd-generate`, `ARGOCD_ENV_MSGEN_TARGET=pod`): 68 MB of YAML, written job by job.

Per case: wall time, peak RSS of the msgen process, exit status, output bytes. Run from the
repository root: `.venv/bin/python bench/hostile_output.py`. Figures: bench/README.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JOB = (ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text()
COMMAND = 'command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]'


def measured(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, int, int]:
    """(seconds, peak RSS in KiB, exit status, bytes on stdout) of one run (`os.wait4`: this
    child's own usage)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **env}, stdout=out, stderr=subprocess.DEVNULL)
        _pid, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - started
        size = out.seek(0, os.SEEK_END)
    return elapsed, usage.ru_maxrss, child.returncode, size


def main() -> None:
    msgen = [sys.executable, "-m", "msgen"]
    with tempfile.TemporaryDirectory(prefix="msgen-bench-") as scratch:
        tmp = Path(scratch)
        wide = JOB.replace("replicas: 2", "replicas: 9999").replace(
            COMMAND, COMMAND + '\n              env: [{name: BIG, value: "' + "x" * 50_000 + '"}]')
        (tmp / "wide.yaml").write_text(wide)
        app = tmp / "app"
        app.mkdir()
        for i in range(20):
            text = JOB.replace("replicas: 2", "replicas: 2000").replace("name: msjob-mnist", f"name: job-{i}")
            (app / f"job{i}.yaml").write_text(text)
        cases = [
            ("wide", [*msgen, "render", "wide.yaml", "--target", "pod"], tmp, {}),
            ("many", [*msgen, "argocd-generate", "."], app,
             {"ARGOCD_APP_NAMESPACE": "team-a", "ARGOCD_ENV_MSGEN_TARGET": "pod"}),
        ]  # fmt: skip
        for name, argv, cwd, env in cases:
            seconds, peak, status, size = measured(argv, cwd, env)
            print(f"{name:5} {seconds:7.2f} s  peak RSS {peak / 1024:7.1f} MiB  exit {status}  "
                  f"output {size / 2**20:7.1f} MiB")


if __name__ == "__main__":
    main()
