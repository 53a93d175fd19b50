"""The `Harness` object every part of the harness (and every component) works through.

It owns the paths under the harness home, the supervised background processes (a pid file
and a log each, so `up` twice starts nothing twice and `down` stops only what `up` started),
Go builds (skipped while their inputs are unchanged), kubectl against the cluster, and images:
imported into the node's containerd, built with buildah (no Docker daemon, no registry).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from . import topology

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[3]
GO_MODULES = REPO / "tests" / "live" / "go"
CONTAINERD_SOCKET = "/run/containerd/containerd.sock"


class HarnessError(Exception):
    """A step failed; the message names the step and where its log is."""


class Harness:
    """Paths, processes, builds and images of one harness home."""

    node_name = "msgen-node"
    domain = "cluster.local"
    service_cidr = "10.96.0.0/16"
    pod_cidr = "10.244.0.0/16"
    node_pod_cidr = "10.244.0.0/24"
    api_service_ip = "10.96.0.1"
    dns_ip = "10.96.0.10"

    def __init__(self, home: Path | None = None, node_ip: str | None = None):
        self.home = (home or Path(os.environ.get("MSGEN_HARNESS_HOME", "/root/.cache/msgen-harness"))).resolve()
        self.repo = REPO
        self.bin = self.home / "bin"
        self.images = self.home / "images"
        self.pki = self.home / "pki"
        self.etc = self.home / "etc"
        self.data = self.home / "data"
        self.logs = self.home / "logs"
        self.run = self.home / "run"
        for path in (self.bin, self.images, self.pki, self.etc, self.data, self.logs, self.run):
            path.mkdir(parents=True, exist_ok=True)
        self.kubeconfig = self.home / "kubeconfig"
        self.node_ip = node_ip or os.environ.get("MSGEN_HARNESS_NODE_IP") or default_ip()
        self.topology_file = self.etc / "topology.json"
        offset = self.etc / "port-offset"
        #: Added to every port the control plane listens on (`up --port-offset`): a cluster of
        #: another release beside the one on the usual ports, its control plane only.
        self.port_offset = int(offset.read_text()) if offset.exists() else 0
        self.started = time.monotonic()

    def port(self, usual: int) -> int:
        """Where the process that usually listens on `usual` listens in this home."""
        return usual + self.port_offset

    # ---- nodes --------------------------------------------------------------------------------
    def nodes(self, count: int | None = None) -> list[topology.Node]:
        """The nodes `up` last started (or `count` of them), node 1 first (topology.py)."""
        count = topology.load(self.topology_file).count if count is None else count
        return topology.plan(count, self.home, self.data, self.etc, self.node_ip)

    # ---- messages -----------------------------------------------------------------------------
    def log(self, message: str) -> None:
        """Progress goes to stderr: stdout holds only the `MSGEN_TEST_*=` lines."""
        print(f"[harness +{time.monotonic() - self.started:5.0f}s] {message}", file=sys.stderr, flush=True)

    # ---- commands -----------------------------------------------------------------------------
    def sh(self, argv: list[str], *, input: str | None = None, env: Mapping[str, str] | None = None,
           cwd: Path | None = None, log: str | None = None, check: bool = True, timeout: float | None = None) -> str:
        """Run a command; its output is returned, or appended to `logs/<log>.log` when named.
        A failure raises HarnessError with the command and the end of its output."""
        full_env = {**os.environ, **(env or {})}
        if log is None:
            done = subprocess.run(argv, input=input, env=full_env, cwd=cwd, capture_output=True, text=True,
                                  timeout=timeout)
            if check and done.returncode != 0:
                raise HarnessError(f"{' '.join(argv)}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-2000:]}")
            return done.stdout
        path = self.logs / f"{log}.log"
        with path.open("a") as out:
            out.write(f"==== {time.strftime('%Y-%m-%dT%H:%M:%S')} {' '.join(argv)}\n")
            out.flush()
            done = subprocess.run(argv, input=input, env=full_env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                  text=True, timeout=timeout)
        if check and done.returncode != 0:
            tail = path.read_text(errors="replace").splitlines()[-15:]
            raise HarnessError(f"{' '.join(argv[:3])}...: exit {done.returncode} (log {path}):\n" + "\n".join(tail))
        return ""

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> str:
        """kubectl as the cluster's admin."""
        return self.sh(["kubectl", "--kubeconfig", str(self.kubeconfig), *args], input=input, check=check, timeout=300)

    def wait_for(self, what: str, check: Callable[[], T], timeout: float = 120, every: float = 1.0) -> T:
        """`check()`'s first true value (exceptions count as false); HarnessError after `timeout`."""
        deadline = time.monotonic() + timeout
        last = ""
        while True:
            try:
                value = check()
                if value:
                    self.log(f"{what}: ok")
                    return value
            except (HarnessError, OSError, subprocess.SubprocessError) as error:
                last = f" (last: {str(error)[-300:]})"
            if time.monotonic() > deadline:
                raise HarnessError(f"timed out after {timeout:.0f}s waiting for {what}{last}; logs in {self.logs}")
            time.sleep(every)

    # ---- supervised processes -----------------------------------------------------------------
    def _pid(self, name: str) -> int | None:
        try:
            return int((self.run / f"{name}.pid").read_text())
        except (OSError, ValueError):
            return None

    def alive(self, name: str) -> bool:
        """Whether the process `spawn(name, ...)` started still runs (the same program)."""
        pid = self._pid(name)
        if pid is None:
            return False
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        expected = (self.run / f"{name}.cmd").read_text().encode() if (self.run / f"{name}.cmd").exists() else b""
        return state != "Z" and bool(cmdline) and cmdline[0] == expected

    def spawn(self, name: str, argv: list[str], env: Mapping[str, str] | None = None,
              netns: Path | None = None) -> int:
        """Start `argv` in a session of its own, its output in `logs/<name>.log`, its pid in
        `run/<name>.pid`; a process of that name still running is left as it is. With `netns`,
        in that network namespace (nsenter execs `argv` in the same process)."""
        if self.alive(name):
            pid = self._pid(name)
            assert pid is not None
            return pid
        log = (self.logs / f"{name}.log").open("a")
        log.write(f"==== {time.strftime('%Y-%m-%dT%H:%M:%S')} {' '.join(argv)}\n")
        log.flush()
        entered = ["nsenter", f"--net={netns}", "--", *argv] if netns else argv
        process = subprocess.Popen(entered, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, **(env or {})}, start_new_session=True)
        log.close()
        (self.run / f"{name}.cmd").write_text(argv[0])
        (self.run / f"{name}.pid").write_text(str(process.pid))
        self.log(f"started {name} (pid {process.pid}, log {self.logs / (name + '.log')})")
        return process.pid

    def stop(self, name: str, grace: float = 20) -> None:
        """SIGTERM to the process group `spawn` started, SIGKILL after `grace` seconds."""
        pid = self._pid(name)
        if pid is not None and self.alive(name):
            for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(pid, sig)
                except ProcessLookupError:
                    break
                deadline = time.monotonic() + wait
                while self.alive(name) and time.monotonic() < deadline:
                    time.sleep(0.2)
                if not self.alive(name):
                    break
            self.log(f"stopped {name}")
        (self.run / f"{name}.pid").unlink(missing_ok=True)

    def kill(self, name: str) -> None:
        """SIGKILL to the process group `spawn` started, at once: no clean shutdown."""
        pid = self._pid(name)
        if pid is not None and self.alive(name):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + 10
            while self.alive(name) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.log(f"killed {name}")
        (self.run / f"{name}.pid").unlink(missing_ok=True)

    # ---- builds -------------------------------------------------------------------------------
    def go_build(self, module_dir: Path, package: str, out: Path, ldflags: Iterable[str] = (),
                 tags: Iterable[str] = ()) -> Path:
        """`go build` of `package` in the pinned module `module_dir` to `out`, unless `out` was
        built from the same go.mod, go.sum, sources and flags (a stamp beside it says so)."""
        flags = ["-s", "-w", *ldflags]
        tagged = ["-tags", ",".join(tags)] if tags else []
        digest = hashlib.sha256(f"{package}\0{' '.join(flags)}\0{go_version()}{' '.join(tagged)}".encode())
        for path in sorted(module_dir.iterdir()):
            if path.is_file():
                digest.update(path.name.encode() + b"\0" + path.read_bytes())
        stamp = out.with_name(out.name + ".stamp")
        if out.exists() and stamp.exists() and stamp.read_text() == digest.hexdigest():
            return out
        self.log(f"building {out.name} from {module_dir.relative_to(self.repo) if module_dir.is_relative_to(self.repo) else module_dir} (log {self.logs}/build-{out.name}.log)")
        began = time.monotonic()
        env = {"GOFLAGS": "-trimpath -mod=readonly", "CGO_ENABLED": os.environ.get("CGO_ENABLED", "0"),
               "GOTOOLCHAIN": "local"}
        self.sh(["nice", "-n", "5", "go", "build", *tagged, "-ldflags", " ".join(flags), "-o", str(out) + ".new", package],
                cwd=module_dir, env=env, log=f"build-{out.name}")
        os.replace(str(out) + ".new", out)
        stamp.write_text(digest.hexdigest())
        self.log(f"built {out.name} in {time.monotonic() - began:.0f}s")
        return out

    # ---- images -------------------------------------------------------------------------------
    def ctr(self, *args: str, check: bool = True, socket: str = CONTAINERD_SOCKET) -> str:
        return self.sh(["ctr", "--address", socket, "-n", "k8s.io", *args], check=check, timeout=1800)

    def image_present(self, ref: str, socket: str = CONTAINERD_SOCKET) -> bool:
        """Whether node 1's containerd (or the one at `socket`) has `ref` (a full reference,
        e.g. docker.io/library/x:1). Images go to node 1: an extra node gets the pause and
        MindSpore images when it starts (node_runtime.py), no other."""
        return ref in self.ctr("images", "ls", "-q", socket=socket).split()

    def import_image(self, tarball: Path, socket: str = CONTAINERD_SOCKET) -> None:
        """A docker-archive or OCI tarball into node 1's containerd (or the one at `socket`),
        namespace k8s.io."""
        self.log(f"importing {tarball.name}" + (f" ({socket})" if socket != CONTAINERD_SOCKET else ""))
        self.ctr("images", "import", str(tarball), socket=socket)

    def tag_image(self, source: str, *targets: str, socket: str = CONTAINERD_SOCKET) -> None:
        for target in targets:
            self.ctr("images", "tag", "--force", source, target, socket=socket)

    def build_image(self, ref: str, containerfile: Path, context: Path, build_args: Mapping[str, str] | None = None,
                    tags: Iterable[str] = ()) -> Path:
        """`buildah bud` (no daemon) → `images/<name>.tar` (docker-archive) → containerd, with `tags`.

        Base images the Containerfile names must be in buildah's local storage (`buildah_load`)."""
        tarball = self.images / (ref.rsplit("/", 1)[-1].replace(":", "-") + ".tar")
        argv = ["buildah", "bud", "--isolation", "chroot", "--pull=never", "--layers=false", "-f", str(containerfile),
                "-t", ref]
        for key, value in (build_args or {}).items():
            argv += ["--build-arg", f"{key}={value}"]
        self.log(f"building image {ref} from {containerfile}")
        self.sh([*argv, str(context)], log=f"image-{tarball.stem}")
        tarball.unlink(missing_ok=True)
        self.sh(["buildah", "push", ref, f"docker-archive:{tarball}:{ref}"], log=f"image-{tarball.stem}")
        self.import_image(tarball)
        self.tag_image(ref, *tags)
        return tarball

    def buildah_load(self, tarball: Path, ref: str) -> None:
        """A docker-archive into buildah's storage as `ref` (to be a FROM of a build)."""
        self.sh(["buildah", "pull", "--quiet", f"docker-archive:{tarball}"], log="buildah")
        found = self.sh(["buildah", "images", "--format", "{{.Name}}:{{.Tag}}"]).split()
        if ref not in found and ref.removeprefix("docker.io/") not in found:
            self.sh(["buildah", "tag", f"docker-archive:{tarball}", ref], check=False)


def go_version() -> str:
    return subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()


def default_ip() -> str:
    """The address of the default-route interface (the node's InternalIP)."""
    route = subprocess.run(["ip", "-4", "route", "show", "default"], capture_output=True, text=True).stdout.split()
    device = route[route.index("dev") + 1] if "dev" in route else ""
    addresses = subprocess.run(["ip", "-4", "-o", "addr", "show", *(["dev", device] if device else []), "scope", "global"],
                               capture_output=True, text=True).stdout.split()
    for word in addresses:
        if "/" in word and word[0].isdigit():
            return word.split("/")[0]
    raise HarnessError("no node IP found: set MSGEN_HARNESS_NODE_IP")


def have(program: str) -> bool:
    return shutil.which(program) is not None
