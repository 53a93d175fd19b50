"""What the live suites share: the cluster MSGEN_TEST_KUBECONFIG names, msgen and kubectl run
as a user runs them, a namespace per test, and small MSJobs whose pods fail on purpose.

The suites skip, naming why, without a cluster. Pods use MSGEN_TEST_IMAGE (by default the
MindSpore CPU image the cluster kit imports) with `imagePullPolicy: IfNotPresent`: a cluster
with no registry has only what was imported. Jobs are small (the cluster may be a 2-core
machine shared with others): one Scheduler, two Workers, shell commands that end in seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ROOT, Run

KUBECONFIG = os.environ.get("MSGEN_TEST_KUBECONFIG")
KUBECTL = shutil.which("kubectl")
IMAGE = os.environ.get("MSGEN_TEST_IMAGE", "localhost/mindspore-cpu:2.10.0")
PREFIX = os.environ.get("MSGEN_TEST_NAMESPACE_PREFIX", "msgen-test")
needs_cluster = pytest.mark.skipif(
    not KUBECONFIG or not KUBECTL,
    reason="MSGEN_TEST_KUBECONFIG names no cluster to test against (and kubectl must be on the PATH)",
)


def env() -> dict[str, str]:
    return {**os.environ, "KUBECONFIG": str(KUBECONFIG)}


def msgen(*args: str, timeout: float = 300) -> Run:
    done = subprocess.run([sys.executable, "-m", "msgen", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env(), timeout=timeout)
    return Run(done.returncode, done.stdout, done.stderr)


def msgen_started(*args: str) -> subprocess.Popen[str]:
    """msgen running in the background (apply --wait, a controller), for the test to act meanwhile."""
    return subprocess.Popen([sys.executable, "-m", "msgen", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env())


def finished(proc: subprocess.Popen[str], timeout: float = 300) -> Run:
    out, err = proc.communicate(timeout=timeout)
    return Run(proc.returncode, out, err)


def kubectl(*args: str, check: bool = True, input: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert KUBECTL, "kubectl is needed for the live tests"
    done = subprocess.run([KUBECTL, "--kubeconfig", str(KUBECONFIG), *args], capture_output=True,
                          text=True, input=input, env=env(), timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)}: {done.stderr}")
    return done


def release() -> tuple[int, int]:
    """The cluster's Kubernetes minor, as msgen renders for it (a newer one as msgen's newest)."""
    from msgen.model import versions

    found = json.loads(kubectl("version", "-o", "json").stdout)["serverVersion"]
    return min((int(found["major"]), int(found["minor"].rstrip("+"))), versions.NEWEST)


#: The release that serves ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1), which
#: the controller overlays' admission.yaml needs; below it docs/reconciler.md has the overlay
#: installed without admission.yaml, and so do the live tests.
ADMISSION_POLICIES_FROM = (1, 30)


def admission_policies_served() -> bool:
    return release() >= ADMISSION_POLICIES_FROM


def without_admission_policies(built: str) -> str:
    """A kustomize build's documents, without the admission policies where the cluster serves
    none (`ADMISSION_POLICIES_FROM`)."""
    if admission_policies_served():
        return built
    return "\n---\n".join(d for d in built.split("\n---\n") if "kind: ValidatingAdmissionPolic" not in d)


def get(kind: str, namespace: str, name: str = "", selector: str = "") -> Any:
    args = ["get", kind, *([name] if name else []), "-n", namespace, "-o", "json"]
    found = json.loads(kubectl(*args, *(["-l", selector] if selector else [])).stdout)
    return found if name else found["items"]


def pods(namespace: str, selector: str = "") -> list[dict[str, Any]]:
    return list(get("pods", namespace, selector=selector))


def wait_for(what: str, check: Callable[[], Any], timeout: float = 240, every: float = 1.0) -> Any:
    """`check()`'s first true value, polled; fails naming `what` after `timeout` seconds
    (generous: a pod starts in 10-30 s on a busy 2-core machine)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)


def running_pod(namespace: str, selector: str) -> dict[str, Any]:
    """The first pod of `selector` whose containers run."""
    def find() -> dict[str, Any] | None:
        for pod in pods(namespace, selector):
            statuses = (pod.get("status") or {}).get("containerStatuses") or []
            if statuses and all("running" in (s.get("state") or {}) for s in statuses) \
                    and not pod["metadata"].get("deletionTimestamp"):
                return pod
        return None
    return dict(wait_for(f"a running pod of {selector}", find))


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"{PREFIX}-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def script(exits: dict[int, tuple[float, int]], default: tuple[float, int] = (2.0, 0)) -> str:
    """A worker's shell: by the index its host name ends with (`<job>-worker-<i>` on every
    target), sleep, print a line, and exit with the code given for that index."""
    cases = "".join(f'  {i}) sleep {delay}; echo "worker {i} exits {code}"; exit {code};;\n'
                    for i, (delay, code) in sorted(exits.items()))
    delay, code = default
    return (f'i=${{HOSTNAME##*-}}; echo "worker $i starts"\ncase "$i" in\n{cases}'
            f'  *) sleep {delay}; echo "worker $i exits {code}"; exit {code};;\nesac\n')


def msjob(name: str, worker: str, *, restart: str = "Never", workers: int = 2, scheduler: bool = True,
          run_policy: dict[str, Any] | None = None, extra: dict[str, Any] | None = None,
          pod_extra: dict[str, Any] | None = None) -> str:
    """An MSJob whose Workers run the shell `worker` and whose Scheduler sleeps."""
    def template(command: str) -> dict[str, Any]:
        return {"spec": {"terminationGracePeriodSeconds": 2, **(pod_extra or {}), "containers": [{
            "name": "mindspore", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
            "command": ["sh", "-c", command]}]}}

    replicas: dict[str, Any] = {}
    if scheduler:
        replicas["Scheduler"] = {"replicas": 1, "template": template("echo scheduler up; exec sleep 3600")}
    replicas["Worker"] = {"replicas": workers, "restartPolicy": restart, "template": template(worker)}
    spec: dict[str, Any] = {"runPolicy": run_policy or {}, **(extra or {}), "msReplicaSpecs": replicas}
    return yaml.safe_dump({"apiVersion": "mindspore.gitee.com/v1", "kind": "MSJob",
                           "metadata": {"name": name}, "spec": spec}, sort_keys=False)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path
