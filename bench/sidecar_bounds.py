"""The worst a repository can make the Argo CD sidecar spend, at its default bounds.

Each case is an application directory rendered as the cmp-server renders it (`msgen
argocd-generate` in the directory, Argo CD's environment, kustomize on PATH, the sidecar's
defaults: no MSGEN_ARGOCD_* set). Per case: wall and CPU seconds (the whole process tree),
the peak of the tree's summed resident memory (sampled from /proc every 20 ms: what the
container's memory limit counts, msgen and kustomize together) and the largest of each kind
of process in it (msgen's own, kustomize, msgen's steps inside the build), exit status and
output size. The build's time bound is lifted (`UNTIMED`) so that a build's whole cost is
measured on a loaded machine too.

- `plain`: one MSJob of 80 KB (two 40 KB env values, 2,000 Workers, target pod) in a
  directory: msgen alone, stopped at max-output-size.
- `many`: 20 MSJobs of 2,000 Workers each (30 KB of files), target pod: msgen alone.
- `generator`: one MSJob as msgen's KRM generator in a kustomization (msgen's step inside
  kustomize): output just under the ceiling, held by kustomize, then read back by msgen.
- `generator-over`: the same past the ceiling: stopped by msgen's step.
- `many-objects`: the most objects within the ceilings (8,000 small pods), through kustomize.
- `transformer`: the generator's output through a label transformer after msgen.
- `patch-bomb`: no msgen function; a JSON patch of 40 `copy` operations doubling a ConfigMap's
  data (kustomize alone): stopped by the build's memory or output bound.
- `diamond`: no msgen; a base reached through a diamond of overlays 12 levels deep (4,096
  builds of it): refused by the reader's bound before kustomize runs.

Run from the repository root with the kustomize to measure on PATH or in MSGEN_KUSTOMIZE
(`.ci/fetch-kustomize` installs 4.5.4; the sidecar image carries 5.x):
`MSGEN_KUSTOMIZE=.ci/tools/kustomize .venv/bin/python bench/sidecar_bounds.py`.
`--deadline S` first kills the process tree of a case still running after S seconds (exit
-9): for code without bounds of its own, such as msgen before the sidecar's bounds, run
under `prlimit --data=BYTES` to cap each process too. Names of cases after it pick cases.
Figures: bench/README.md and docs/security.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JOB = (ROOT / "samples" / "mindspore" / "lenet-cpu.yaml").read_text()
COMMAND = 'command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]'
FUNCTION = ("  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: msgen-krm\n"
            "    msgen/target: pod\n")  # fmt: skip


#: `--deadline S`: the bench kills the whole tree of a case still running after S seconds
#: (to measure code that has no bound of its own, such as msgen before the sidecar's bounds).
DEADLINE = 0.0

#: `msgen argocd-generate` with the build's time bound lifted: the cost of a build is measured
#: whole even on a loaded machine (the CPU seconds say what it takes on an idle one).
UNTIMED = ("import sys; sys.argv[0] = 'msgen'; from msgen.hosts.argocd import kustomize_build; "
           "kustomize_build.BUILD_TIMEOUT = 3600; from msgen.hosts.command_line.entry import main; main()")


def job(replicas: int, env_bytes: int, name: str = "msjob-mnist", function: bool = False) -> str:
    text = JOB.replace("replicas: 2", f"replicas: {replicas}").replace("name: msjob-mnist", f"name: {name}")
    if env_bytes:
        text = text.replace(COMMAND, COMMAND + f'\n              env: [{{name: BIG, value: "{"x" * env_bytes}"}}]')
    if function:
        text = text.replace(f"  name: {name}\n", f"  name: {name}\n{FUNCTION}", 1)
    return text


def cases(tmp: Path) -> list[tuple[str, Path, dict[str, str]]]:
    pod = {"ARGOCD_ENV_MSGEN_TARGET": "pod"}
    out = []

    def app(name: str, files: dict[str, str], env: dict[str, str] | None = None) -> None:
        directory = tmp / name / "app"
        for file, text in files.items():
            (directory / file).parent.mkdir(parents=True, exist_ok=True)
            (directory / file).write_text(text)
        out.append((name, directory, env or {}))

    app("plain", {"job.yaml": job(2000, 40_000)}, pod)
    app("many", {f"job{i}.yaml": job(2000, 0, f"job-{i}") for i in range(20)}, pod)
    # 30 KB of env in each of 520 pods: about 15.8 MiB, just under the 16Mi ceiling
    app("generator", {"kustomization.yaml": "generators: [job.yaml]\n", "job.yaml": job(520, 30_000, function=True)})
    app("generator-over", {"kustomization.yaml": "generators: [job.yaml]\n", "job.yaml": job(2000, 30_000, function=True)})
    # the most objects within the ceilings: 8,000 small pods (about 15 MiB)
    app("many-objects", {"kustomization.yaml": "generators: [job.yaml]\n", "job.yaml": job(8000, 0, function=True)})
    app("transformer", {"kustomization.yaml": "generators: [job.yaml]\ntransformers: [labels.yaml]\n",
                        "job.yaml": job(520, 30_000, function=True),
                        "labels.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\n"
                                       "labels: {team: a}\nfieldSpecs: [{path: metadata/labels, create: true}]\n"})  # fmt: skip
    copies = "".join(f"    - {{op: copy, from: /data, path: /data/d{i}}}\n" for i in range(40))
    app("patch-bomb", {"kustomization.yaml": "resources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |\n" + copies,
                       "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: " + "x" * 1000 + "}\n"})  # fmt: skip
    files = {"kustomization.yaml": "resources: [../l0]\n", "../l12/kustomization.yaml": "resources: [job.yaml]\n",
             "../l12/job.yaml": job(2, 0)}  # fmt: skip
    for level in range(12):
        files[f"../l{level}/kustomization.yaml"] = "resources: [a, b]\n"
        for side in "ab":
            files[f"../l{level}/{side}/kustomization.yaml"] = f"namePrefix: {side}-\nresources: [../../l{level + 1}]\n"
    app("diamond", files)
    return out


def tree_rss(root: int) -> tuple[int, dict[str, int], list[int]]:
    """The summed resident memory, in bytes, of `root` and every process below it, the
    largest of each kind of process: msgen (the root), kustomize, msgen's steps (python), and
    the processes' ids."""
    parents, sizes, names = {}, {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm") as statm:
                sizes[int(entry)] = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{entry}/comm") as comm:
                names[int(entry)] = comm.read().strip()
            parents[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    total, each, pending, seen = 0, {}, [root], []
    while pending:
        pid = pending.pop()
        seen.append(pid)
        total += sizes.get(pid, 0)
        kind = "msgen" if pid == root else "kustomize" if "kustomize" in names.get(pid, "") else "steps"
        each[kind] = max(each.get(kind, 0), sizes.get(pid, 0))
        pending.extend(child for child, parent in parents.items() if parent == pid)
    return total, each, seen


def measured(directory: Path, env: dict[str, str], kustomize: str) -> tuple[float, float, int, dict[str, int], int, int, str]:
    tools = directory.parent / "tools"
    tools.mkdir(exist_ok=True)
    (tools / "kustomize").symlink_to(kustomize)
    bin_dir = str(Path(sys.executable).parent)
    full = {"PATH": f"{tools}:{bin_dir}:/usr/bin:/bin", "HOME": str(directory.parent), "ARGOCD_APP_NAMESPACE": "team-a",
            "ARGOCD_APP_SOURCE_PATH": "app", "KUBE_VERSION": "1.31", **env}  # fmt: skip
    started = time.perf_counter()
    peak, largest = 0, {}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen([sys.executable, "-c", UNTIMED, "argocd-generate"], cwd=directory, env=full,
                                 stdout=out, stderr=err)  # fmt: skip
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            total, each, pids = tree_rss(child.pid)
            if DEADLINE and time.perf_counter() - started > DEADLINE:
                for pid in pids:  # the code measured may not bound itself: the bench does
                    try:
                        os.kill(pid, 9)
                    except OSError:
                        pass
            peak = max(peak, total)
            largest = {k: max(v, largest.get(k, 0)) for k, v in each.items()} | {k: v for k, v in largest.items() if k not in each}
            time.sleep(0.02)
        child.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - started
        size = out.seek(0, os.SEEK_END)
        err.seek(0)
        said = [line for line in err.read().decode(errors="replace").splitlines() if "error" in line or "msgen:" in line]
    cpu = usage.ru_utime + usage.ru_stime  # the child's and its reaped descendants'
    return elapsed, cpu, peak, largest, child.returncode, size, (said[-1][:160] if said else "")


def main() -> None:
    kustomize = os.environ.get("MSGEN_KUSTOMIZE") or shutil.which("kustomize")
    if not kustomize:
        sys.exit("kustomize is not on PATH nor in MSGEN_KUSTOMIZE")
    kustomize = os.path.abspath(kustomize)
    version = subprocess.run([kustomize, "version"], capture_output=True, text=True).stdout.strip()
    print(f"kustomize: {version}")
    global DEADLINE
    arguments = sys.argv[1:]
    if arguments[:1] == ["--deadline"]:
        DEADLINE, arguments = float(arguments[1]), arguments[2:]
    wanted = set(arguments)
    with tempfile.TemporaryDirectory(prefix="msgen-bench-") as scratch:
        for name, directory, env in cases(Path(scratch)):
            if wanted and name not in wanted:
                continue
            wall, cpu, peak, largest, status, size, said = measured(directory, env, kustomize)
            each = "  ".join(f"{k} {largest.get(k, 0) / 2**20:5.0f}" for k in ("msgen", "kustomize", "steps"))
            print(f"{name:14} wall {wall:6.1f} s  cpu {cpu:5.1f} s  tree peak {peak / 2**20:6.1f} MiB ({each})  "
                  f"exit {status}  output {size / 2**20:5.1f} MiB"
                  + (f"\n{'':15} {said}" if said else ""))  # fmt: skip


if __name__ == "__main__":
    main()
