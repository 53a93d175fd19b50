#!/usr/bin/env python3
"""`msgen controller`'s memory at N jobs, in a minute rather than bench/controller_scale.py's half hour.

Why: the controller keeps a copy of every watched object of its namespaces, so its memory
grows with the jobs; what one job costs decides how many a replica's memory limit holds.
This creates N jobs' objects (the shapes of controller_scale.py: a Scheduler and 2-8 Workers,
`indexed-job` and `pod` targets, their pods running) in tests/fake_api.py, in this process,
then starts one `msgen controller` replica against it and reads its VmHWM and VmRSS from
/proc once its first full pass is over (every job has a phase in `msgen_jobs` and the work
queue is empty; with `--follower`, once it has listed and queued every job while another
replica holds the Lease: no writes, so 10,000 jobs take minutes, not the fake API server's
hour of writes). Run on demand; never a test.

    .venv/bin/python bench/controller_memory.py --jobs 1000 3000 10000

`--watched` makes the objects once the replica has listed the empty namespace, so that each
reaches it by a watch event, as when jobs arrive over time: parsed one at a time, objects
share nothing (a list's page shares its field names), which is what a long-running replica
holds.

`--trace N` instead lists the watches of N jobs in a child process under tracemalloc and
prints the lines that hold the most of what stays (the copies of the objects, by where
they were made), and the copies' own size per job: what a job costs, and where.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from controller_scale import FakeDriver, Simulation, scenario  # noqa: E402

from tests import fake_api  # noqa: E402
from tests.fake_kubelet import start  # noqa: E402


def populated(jobs: int, seed: int, driver: FakeDriver | None = None) -> tuple[FakeDriver, int]:
    """The fake API server with `jobs` jobs' objects, every pod running; and the pods' count."""
    driver = driver or FakeDriver()
    simulation = Simulation(driver, scenario(jobs, 600.0, seed), time.monotonic())
    pods = 0
    for job in simulation.jobs:
        for pod in driver.place(simulation.objects(job)):
            start(driver.cluster, driver.namespace, pod["metadata"]["name"])
            pods += 1
    return driver, pods


def _status(pid: int) -> dict[str, int]:
    """VmHWM and VmRSS in KiB."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {line.split(":")[0]: int(line.split()[1]) for line in lines if line.startswith(("VmHWM:", "VmRSS:"))}


def _first_pass_over(port: int, health: int, jobs: int, follower: bool) -> bool:
    """Every job reconciled and nothing queued; a follower: every watch listed (ready) and
    every job queued (it acts on none)."""
    try:
        found = _metrics(port)
        ready = urlopen(f"http://127.0.0.1:{health}/readyz", timeout=10).status == 200
    except OSError:
        return False
    phased = sum(s.value for s in found["msgen_jobs"].samples) if "msgen_jobs" in found else 0
    depth = sum(s.value for s in found["workqueue_depth"].samples) if "workqueue_depth" in found else 1
    if follower:
        return ready and depth >= jobs
    return phased >= jobs and depth == 0


def held_by_another(driver: FakeDriver) -> None:
    """The controller's Lease, held for an hour by a replica that is not there: the one
    measured follows, holding every job's objects and queueing every job, acting on none."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    driver.cluster.put({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": "msgen-controller", "namespace": driver.namespace},
                        "spec": {"holderIdentity": "elsewhere", "leaseDurationSeconds": 3600,
                                 "acquireTime": now, "renewTime": now}})


def _metrics(port: int) -> dict[str, Any]:
    from msgen.reconcile.metrics import families

    return dict(families(urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()))


def _watch_events(port: int) -> float:
    return float(sum(s.value for s in _metrics(port)["msgen_watch_events"].samples if s.name.endswith("_total")))


def measure(jobs: int, seed: int, msgen: list[str], timeout: float, follower: bool, watched: bool,
            relist: bool = False) -> dict[str, Any]:
    """One replica against `jobs` jobs: its memory after its first full pass. `watched`: the
    replica starts on an empty namespace and every object reaches it by a watch event, as
    when jobs arrive over time (each event is parsed alone: nothing is shared between
    objects as within a page of a list). `relist`: then the API server restarts (its watch
    history gone), the replica lists every kind again, and its memory is read once more:
    a relist must not hold a second copy of what it has."""
    if watched:  # the fake's watch history must outlast the arrivals, or a watch resumed late relists
        fake_api.HISTORY = max(fake_api.HISTORY, 4 * 10 * jobs)
    driver = FakeDriver()
    if follower:
        held_by_another(driver)
    made = time.monotonic()
    pods = 0 if watched else populated(jobs, seed, driver)[1]
    made = time.monotonic() - made
    scratch = Path(tempfile.mkdtemp(prefix="msgen-controller-memory-"))
    config = scratch / "kubeconfig"
    config.write_text(json.dumps(driver.kubeconfig()))
    with socket.socket() as probe, socket.socket() as other:
        probe.bind(("127.0.0.1", 0))
        other.bind(("127.0.0.1", 0))
        port, health = int(probe.getsockname()[1]), int(other.getsockname()[1])
    log = (scratch / "controller.log").open("wb")
    process = subprocess.Popen([*msgen, "controller", "-n", driver.namespace, "--metrics-port", str(port),
                                "--health-port", str(health),
                                "--kubeconfig", str(config)], stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    began = time.monotonic()

    def wait(until: Any) -> None:
        while not until():
            if process.poll() is not None or time.monotonic() - began > timeout:
                raise SystemExit(f"the replica did not finish its first pass (log: {scratch / 'controller.log'})")
            time.sleep(1.0)

    try:
        if watched:
            wait(lambda: _first_pass_over(port, health, 0, follower))
            made = time.monotonic()
            pods = populated(jobs, seed, driver)[1]
            made = time.monotonic() - made
        wait(lambda: _first_pass_over(port, health, jobs, follower))
        seen = -1.0
        while seen != (seen := _watch_events(port)):  # the last events of the pass
            time.sleep(3.0)
        passed = time.monotonic() - began
        memory = _status(process.pid)
        if relist:
            listed = _lists(port)
            driver.restart()
            wait(lambda: _lists(port) > listed and _first_pass_over(port, health, jobs, follower))
            seen = -1.0
            while seen != (seen := _lists(port) + _watch_events(port)):  # every kind listed again
                time.sleep(3.0)
            again = _status(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        driver.stop()
    found = {"jobs": jobs, "pods": pods, "objects_made_s": round(made, 1), "first_pass_s": round(passed, 1),
             "vmhwm_mib": round(memory["VmHWM"] / 1024, 1), "vmrss_mib": round(memory["VmRSS"] / 1024, 1)}
    if relist:
        found |= {"after_relist_vmhwm_mib": round(again["VmHWM"] / 1024, 1),
                  "after_relist_vmrss_mib": round(again["VmRSS"] / 1024, 1)}
    return found


def _lists(port: int) -> float:
    return float(sum(s.value for s in _metrics(port)["msgen_watch_lists"].samples if s.name.endswith("_total")))


def deep_size(root: Any) -> int:
    """Bytes of `root` and everything it holds (each object once)."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack += [*obj.keys(), *obj.values()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack += list(obj)
    return total


def traced(config: str, namespace: str, jobs: int, passes: bool) -> None:
    """In the child: list and watch as the controller does (and with `passes`, reconcile
    every job), under tracemalloc; what stays."""
    import tracemalloc

    tracemalloc.start(1)
    from msgen.reconcile import controller, kube
    from msgen.reconcile.metrics import NOTHING
    from msgen.reconcile.workers import Workers
    from msgen.reconcile.writes import Writes

    client = kube.connect(config, None)
    view = controller.ClusterView(client, [namespace])
    while not view.synced():
        time.sleep(0.5)
    if passes:  # reconcile every job, as a replica's first pass does, until its writes are back
        writes, phases = Writes(), {}  # type: ignore[var-annotated]
        while view.queue.depth() or len(phases) < jobs:
            controller.reconcile_queued(client, view, lambda line: None, lambda: True, writes=writes,
                                        recorder=NOTHING, phases=phases, workers=Workers(4))
            time.sleep(0.1)
        print(f"reconciled: {len(phases)} jobs, {len(writes)} writes remembered")
    time.sleep(2.0)  # the last events
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    stats = snapshot.statistics("lineno")
    total = sum(s.size for s in stats)
    peak = tracemalloc.get_traced_memory()[1]
    print(f"traced: {total / 2**20:.1f} MiB allocated and kept, {total / jobs / 1024:.1f} KiB per job; "
          f"at the peak {peak / 2**20:.1f} MiB, {peak / jobs / 1024:.1f} KiB per job")
    for stat in stats[:15]:
        frame = stat.traceback[0]
        print(f"  {stat.size / jobs / 1024:6.2f} KiB/job  {stat.count / jobs:7.1f} blocks/job  "
              f"{os.path.relpath(frame.filename, ROOT)}:{frame.lineno}")
    caches = [i.cache.objects for i in view.informers]
    print(f"the informers' copies: {deep_size(caches) / jobs / 1024:.1f} KiB per job; "
          f"with the by-job index: {deep_size([caches, view._by_job]) / jobs / 1024:.1f} KiB per job")
    view.stop()


def trace(jobs: int, seed: int, passes: bool) -> None:
    driver, pods = populated(jobs, seed)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as config:
        json.dump(driver.kubeconfig(), config)
    print(f"{jobs} jobs, {pods} pods", flush=True)
    try:
        subprocess.run([sys.executable, __file__, "--child", config.name, driver.namespace, str(jobs),
                        str(passes)], check=True)
    finally:
        driver.stop()
        os.unlink(config.name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1000])
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--msgen", default=f"{sys.executable} -m msgen", help="the command that runs msgen")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds a first pass may take")
    parser.add_argument("--follower", action="store_true", help="the replica follows (another holds the Lease): "
                        "measured once it has listed and queued every job, without the first pass's writes")
    parser.add_argument("--watched", action="store_true", help="the objects are made once the replica has "
                        "listed, so each reaches it by a watch event (jobs arriving over time)")
    parser.add_argument("--relist", action="store_true", help="then restart the API server (its watch history "
                        "gone) and read the memory again once every kind is listed anew")
    parser.add_argument("--trace", type=int, metavar="N", help="where the memory of N jobs' copies goes (tracemalloc)")
    parser.add_argument("--reconcile", action="store_true", help="with --trace: reconcile every job first")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        traced(args.child[0], args.child[1], int(args.child[2]), args.child[3] == "True")
        return
    if args.trace:
        trace(args.trace, args.seed, args.reconcile)
        return
    found: list[dict[str, Any]] = []
    for jobs in sorted(args.jobs):
        found.append(measure(jobs, args.seed, args.msgen.split(), args.timeout, args.follower, args.watched,
                             args.relist))
        print(json.dumps(found[-1]), flush=True)
    for fewer, more in zip(found, found[1:], strict=False):  # what a job adds, without the interpreter's own
        per_job = (more["vmhwm_mib"] - fewer["vmhwm_mib"]) * 1024 / (more["jobs"] - fewer["jobs"])
        print(f"VmHWM from {fewer['jobs']} to {more['jobs']} jobs: {per_job:.1f} KiB per job")


if __name__ == "__main__":
    main()
