"""Real Argo CD Applications on real commits, for `tests/test_live_argocd.py`.

`tests/live/cluster up --with argocd` installs Argo CD with msgen's plugin and serves the bare
Git repositories under `MSGEN_TEST_GIT_ROOT` at `MSGEN_TEST_GIT_URL` (the repo server clones
from there). A `Repo` is one such repository: the test commits files into it with git, as a
user pushes. An `App` is an Application on it, using the plugin `msgen-v1`, whose status is
read from Argo CD's own API server, as its UI and `argocd app get` show it: since Argo CD 3.0
the application controller keeps each resource's health out of the Application object
(`controller.resource.health.persist` is false by default) and the API server adds it from
its resource tree. `Api` reaches that server through `kubectl port-forward`, as `argocd
--port-forward` does, logged in as the installation's initial admin.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import ssl
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from collections.abc import Mapping
from typing import Any, Callable

import pytest

from .live_cluster import KUBECONFIG, KUBECTL, kubectl

GIT_ROOT = os.environ.get("MSGEN_TEST_GIT_ROOT")
GIT_URL = os.environ.get("MSGEN_TEST_GIT_URL")
NAMESPACE = os.environ.get("MSGEN_TEST_ARGOCD_NAMESPACE", "argocd")
IMAGE = "localhost/mindspore-cpu:2.10.0"


@functools.cache
def skip_reason() -> str | None:
    if not KUBECONFIG or not KUBECTL:
        return "MSGEN_TEST_KUBECONFIG names no cluster (or kubectl is not on the PATH)"
    if not GIT_ROOT or not GIT_URL:
        return "MSGEN_TEST_GIT_ROOT / MSGEN_TEST_GIT_URL are not set: tests/live/cluster up --with argocd prints them"
    found = kubectl("get", "deployment", "argocd-repo-server", "-n", NAMESPACE, "--ignore-not-found", "-o", "name",
                    check=False)
    if not found.stdout.strip():
        return f"no Argo CD in namespace {NAMESPACE}: tests/live/cluster up --with argocd"
    return None


def job(name: str, command: str, scheduler: bool = False) -> str:
    """An MSJob whose pods run `command` in the harness's MindSpore image: one Worker, and a
    Scheduler (whose Services msgen renders) when asked."""
    roles = ("Scheduler", "Worker") if scheduler else ("Worker",)
    specs = "".join(f"""\
    {role}:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers:
            - name: mindspore
              image: {IMAGE}
              imagePullPolicy: IfNotPresent
              command: [sh, -c, {json.dumps(command)}]
""" for role in roles)
    return f"""\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: {name}
spec:
  msReplicaSpecs:
{specs}"""


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "msgen test", "GIT_AUTHOR_EMAIL": "test@msgen.invalid",
                               "GIT_COMMITTER_NAME": "msgen test", "GIT_COMMITTER_EMAIL": "test@msgen.invalid"}).stdout


class Repo:
    """A bare repository under MSGEN_TEST_GIT_ROOT and a work tree the test commits from."""

    def __init__(self, work: Path, name: str):
        assert GIT_ROOT and GIT_URL
        self.name = name
        self.bare = Path(GIT_ROOT) / f"{name}.git"
        self.url = GIT_URL + f"{name}.git"
        self.work = work
        subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(self.bare)], check=True)
        git("init", "--quiet", "--initial-branch=main", cwd=work)
        git("remote", "add", "origin", str(self.bare), cwd=work)

    def commit(self, files: Mapping[str, str | None], message: str) -> str:
        """Write (or, for None, remove) the files, commit, push; the new commit's SHA."""
        for path, text in files.items():
            target = self.work / path
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        git("add", "--all", ".", cwd=self.work)
        git("commit", "--quiet", "--allow-empty", "-m", message, cwd=self.work)
        git("push", "--quiet", "origin", "main", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work).strip()

    def remove(self) -> None:
        subprocess.run(["rm", "-rf", str(self.bare)], check=False)


class Api:
    """Argo CD's API server through a `kubectl port-forward` of its Service, logged in as
    `admin` with the password of `argocd-initial-admin-secret`."""

    def __init__(self) -> None:
        self.output = tempfile.TemporaryFile(mode="w+")
        # Forwarded lines go to a file: kubectl writes one per connection, and a pipe no one
        # reads would stop it after a few thousand.
        self.forward = subprocess.Popen([str(KUBECTL), "--kubeconfig", str(KUBECONFIG), "port-forward", "-n",
                                         NAMESPACE, "service/argocd-server", ":443"],
                                        stdout=self.output, stderr=subprocess.STDOUT, text=True)
        self.base = f"https://127.0.0.1:{self._port()}"
        # The server's certificate is the self-signed one Argo CD makes at install; the
        # connection is to the local end of the port-forward.
        self.tls = ssl.create_default_context()
        self.tls.check_hostname = False
        self.tls.verify_mode = ssl.CERT_NONE
        secret = json.loads(kubectl("get", "secret", "argocd-initial-admin-secret", "-n", NAMESPACE, "-o",
                                    "json").stdout)
        password = base64.b64decode(secret["data"]["password"]).decode()
        self.token = ""
        self.token = str(self.call("POST", "/api/v1/session", {"username": "admin", "password": password})["token"])

    def _port(self) -> int:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            self.output.seek(0)
            text = self.output.read()
            found = re.search(r"Forwarding from 127\.0\.0\.1:(\d+)", text)
            if found:
                return int(found.group(1))
            if self.forward.poll() is not None:
                raise AssertionError(f"kubectl port-forward to argocd-server ended: {text}")
            time.sleep(0.2)
        raise AssertionError("kubectl port-forward to argocd-server did not start within 30s")

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        request = urllib.request.Request(self.base + path, method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json",
                                                  **({"Authorization": f"Bearer {self.token}"} if self.token else {})})
        with urllib.request.urlopen(request, context=self.tls, timeout=60) as response:
            return dict(json.loads(response.read()))

    def application(self, name: str) -> dict[str, Any]:
        return self.call("GET", f"/api/v1/applications/{name}?appNamespace={NAMESPACE}")

    def close(self) -> None:
        self.forward.terminate()
        self.forward.wait(timeout=30)
        self.output.close()


class App:
    """An Application in Argo CD's namespace deploying `path` of `repo` into `destination`."""

    def __init__(self, repo: Repo, path: str, destination: str, api: Api, *,
                 parameters: dict[str, str] | None = None,
                 env: dict[str, str] | None = None, automated: bool = True, self_heal: bool = True, prune: bool = True):
        self.name = f"{repo.name}-{uuid.uuid4().hex[:4]}"
        self.destination = destination
        self.api = api
        plugin: dict[str, Any] = {"name": "msgen-v1"}
        if parameters:
            plugin["parameters"] = [{"name": k, "string": v} for k, v in parameters.items()]
        if env:
            plugin["env"] = [{"name": k, "value": v} for k, v in env.items()]
        spec: dict[str, Any] = {
            "project": "default",
            "source": {"repoURL": repo.url, "path": path, "targetRevision": "main", "plugin": plugin},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": destination},
        }
        if automated:
            spec["syncPolicy"] = {"automated": {"prune": prune, "selfHeal": self_heal}}
        self.manifest = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                         "metadata": {"name": self.name, "namespace": NAMESPACE,
                                      "finalizers": ["resources-finalizer.argocd.argoproj.io"]},
                         "spec": spec}

    def create(self) -> App:
        subprocess.run([str(KUBECTL), "--kubeconfig", str(KUBECONFIG), "apply", "-f", "-"],
                       input=json.dumps(self.manifest), check=True, capture_output=True, text=True)
        return self

    def get(self) -> dict[str, Any]:
        return dict(json.loads(kubectl("get", "application", self.name, "-n", NAMESPACE, "-o", "json").stdout))

    def status(self) -> dict[str, Any]:
        """The status as Argo CD's API server shows it: with each resource's health."""
        return dict(self.api.application(self.name).get("status") or {})

    def refresh(self, hard: bool = False) -> None:
        """What the UI's Refresh button does (hard: ignore the manifest cache)."""
        kubectl("annotate", "application", self.name, "-n", NAMESPACE, "--overwrite",
                f"argocd.argoproj.io/refresh={'hard' if hard else 'normal'}")

    def patch(self, patch: dict[str, Any]) -> None:
        kubectl("patch", "application", self.name, "-n", NAMESPACE, "--type=merge", "-p", json.dumps(patch))

    def sync(self) -> None:
        """A manual sync, as `argocd app sync` starts one: an operation on the Application."""
        self.patch({"operation": {"initiatedBy": {"username": "msgen-test"}, "sync": {"prune": True}}})

    def wait(self, what: str, check: Callable[[dict[str, Any]], Any], timeout: float = 300) -> Any:
        """`check(status)`'s first true value; fails with the last status seen."""
        deadline = time.monotonic() + timeout
        status: dict[str, Any] = {}
        while True:
            status = self.status()
            value = check(status)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: {what} not within {timeout:.0f}s; last status: "
                                     f"{json.dumps(brief(status))}")
            time.sleep(2)

    def delete(self) -> None:
        kubectl("delete", "application", self.name, "-n", NAMESPACE, "--ignore-not-found", "--wait=true",
                "--timeout=180s", check=False, timeout=200)


def brief(status: dict[str, Any]) -> dict[str, Any]:
    """What a failure message needs of an Application's status."""
    return {"sync": (status.get("sync") or {}).get("status"), "revision": (status.get("sync") or {}).get("revision"),
            "health": (status.get("health") or {}).get("status"),
            "conditions": [(c.get("type"), c.get("message", "")[:600]) for c in status.get("conditions") or []],
            "operation": ((status.get("operationState") or {}).get("phase"),
                          (status.get("operationState") or {}).get("message", "")[:300]),
            "resources": [(r.get("kind"), r.get("name"), r.get("status"), (r.get("health") or {}).get("status"))
                          for r in status.get("resources") or []]}


def synced_at(revision: str) -> Callable[[dict[str, Any]], bool]:
    def check(status: dict[str, Any]) -> bool:
        sync = status.get("sync") or {}
        operation = status.get("operationState") or {}
        return bool(sync.get("status") == "Synced" and sync.get("revision") == revision
                    and operation.get("phase") == "Succeeded"
                    and (operation.get("syncResult") or {}).get("revision") == revision)
    return check


def resource_health(kind: str, name: str) -> Callable[[dict[str, Any]], str | None]:
    def check(status: dict[str, Any]) -> str | None:
        for resource in status.get("resources") or []:
            if resource.get("kind") == kind and resource.get("name") == name:
                return (resource.get("health") or {}).get("status")
        return None
    return check


def comparison_error(status: dict[str, Any]) -> str | None:
    for condition in status.get("conditions") or []:
        if condition.get("type") == "ComparisonError":
            return str(condition.get("message", ""))
    return None


def namespace() -> str:
    """A new destination namespace, prefixed MSGEN_TEST_NAMESPACE_PREFIX (`msgen-test`) as every live test's."""
    name = f"{os.environ.get('MSGEN_TEST_NAMESPACE_PREFIX', 'msgen-test')}-argocd-{uuid.uuid4().hex[:6]}"
    kubectl("create", "namespace", name)
    return name


def drop_namespace(name: str) -> None:
    kubectl("delete", "namespace", name, "--ignore-not-found", "--wait=false", check=False)


def repo_server_log(since: str) -> str:
    """The repo server's log since an RFC 3339 time (the plugin's sidecar included)."""
    return "\n".join(kubectl("logs", "-n", NAMESPACE, "deployment/argocd-repo-server", "-c", container,
                             f"--since-time={since}", check=False, timeout=60).stdout
                     for container in ("argocd-repo-server", "msgen"))


#: The gRPC services whose GenerateManifest calls the logs time: the msgen sidecar's cmp-server
#: (one run of `msgen argocd-generate`, the repository's files received included) and the
#: repo server (what the application controller waits for: Git, the manifest cache, the plugin).
PLUGIN_SERVICE = "plugin.ConfigManagementPluginService"
REPO_SERVICE = "repository.RepoServerService"


def generate_times(log: str, service: str = PLUGIN_SERVICE) -> list[float]:
    """The seconds of each GenerateManifest call of `service` that finished, from its gRPC log
    line (in the JSON format Argo CD's manifests choose, or in text)."""
    times = []
    for line in log.splitlines():
        if "GenerateManifest" not in line or "time_ms" not in line or "finished" not in line or service not in line:
            continue
        if line.startswith("{"):
            entry = json.loads(line)
            if (entry.get("grpc.method"), entry.get("grpc.service")) == ("GenerateManifest", service) \
                    and "grpc.time_ms" in entry:
                times.append(float(entry["grpc.time_ms"]) / 1000)
        else:
            found = re.search(r'grpc\.time_ms="?([0-9.]+)', line)
            if found and re.search(rf'grpc\.service="?{re.escape(service)}\b', line):
                times.append(float(found.group(1)) / 1000)
    return times


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def require() -> None:
    why = skip_reason()
    if why:
        pytest.skip(why)
