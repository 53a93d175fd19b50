"""One node's own processes: its containerd, kubelet and kube-proxy, started, lost and removed.

`start` brings a node up (an extra node first gets its network, cgroup root, certificates and
Node object, then the images node 1 holds); `lose` takes one away as a node whose power went
(veth down, SIGKILL to its processes, its shims and every process in its cgroups, its mounts
and run-time state gone: no clean shutdown, and the kubelet's Node goes NotReady); `remove`
takes one away for good (`down`). Node 1's processes keep the names the single-node harness
gave them (`containerd`, `kubelet`, `kube-proxy`); an extra node's are `<node>.<component>`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

from . import images, network, pki, topology
from .core import Harness, HarnessError
from .topology import Node

COMPONENTS = ("containerd", "kubelet", "kube-proxy")
CGROUPS = Path("/sys/fs/cgroup")
HERE = Path(__file__).resolve().parent


def http_ok(url: str, insecure: bool = False) -> bool:
    return subprocess.run(["curl", "-sf", "--max-time", "5", *(["-k"] if insecure else []), url],
                          capture_output=True).returncode == 0


def containerd_answers(node: Node) -> bool:
    """Whether a containerd serves the node's socket (a socket left by a killed one hangs: no)."""
    try:
        return subprocess.run(["ctr", "--address", str(node.containerd_socket), "version"], capture_output=True,
                              timeout=10).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def cni_config(node: Node) -> str:
    return ((HERE / "config" / "cni.conflist").read_text().replace("{node_pod_cidr}", node.pod_cidr)
            .replace("{gateway}", node.gateway).replace("{ipam_dir}", str(node.ipam_dir)))


# --- start ------------------------------------------------------------------------------------

ConfigWriter = Callable[..., Path]


def start(h: Harness, node: Node, config: ConfigWriter, resources: dict[str, str]) -> None:
    """The node up and Ready, its devices patched in. `config(h, name, node=...)` writes a
    configuration template for it (node.py's `_config`)."""
    if node.extra:
        network.up(h, node)
        _cgroup_root(node)
        pki.node_certificates(h, node)
        _node_object(h, node)
    _containerd(h, node, config)
    images.load(h, str(node.containerd_socket))
    if node.extra:
        share_content(h.nodes(1)[0], node)
    _kubelet(h, node, config)
    proxy = node.process("kube-proxy")
    h.spawn(proxy, kube_proxy_argv(h, node, config), netns=network.netns_path(node) if node.extra else None)
    h.wait_for(f"{proxy} healthy", lambda: http_ok(f"http://{node.bind}:10256/healthz"), 60)
    h.wait_for(f"node {node.name} Ready", lambda: ready(h, node.name), 180)
    patch_devices(h, node, resources)


def _containerd(h: Harness, node: Node, config: ConfigWriter) -> None:
    conf = node.cni_conf_dir / "10-msgen-harness.conflist"
    conf.parent.mkdir(parents=True, exist_ok=True)
    pki.write(conf, cni_config(node))
    conf.chmod(0o644)
    for other in conf.parent.iterdir():  # containerd loads the first conflist only
        if other != conf and other.suffix in (".conflist", ".conf") and other.name < conf.name:
            raise HarnessError(f"{other} would win over {conf}: move it away")
    path = config(h, "containerd.toml", node=node)
    name = node.process("containerd")
    if not h.alive(name) and containerd_answers(node):
        raise HarnessError(f"a containerd the harness did not start serves {node.containerd_socket}: stop it first")
    node.containerd_state.mkdir(parents=True, exist_ok=True)
    h.spawn(name, ["/usr/bin/containerd", "--config", str(path)], netns=network.netns_path(node) if node.extra else None)
    h.wait_for(name, lambda: containerd_answers(node), 60)


BLOBS = "io.containerd.content.v1.content/blobs/sha256"


def share_content(first: Node, node: Node) -> int:
    """Each of the node's image blobs that node 1's containerd holds too, made a hard link to
    node 1's file (a blob is named by its digest and never written again): an extra node then
    costs the disk only its unpacked layers, not a second copy of every image (3 GiB for
    MindSpore's). Returns the bytes saved."""
    mine, theirs = node.containerd_root / BLOBS, first.containerd_root / BLOBS
    saved = 0
    if not mine.is_dir() or not theirs.is_dir():
        return 0
    for blob in mine.iterdir():
        other = theirs / blob.name
        try:
            a, b = blob.stat(), other.stat()
        except OSError:
            continue
        if a.st_ino == b.st_ino or a.st_size != b.st_size or a.st_dev != b.st_dev:
            continue
        link = blob.with_name(blob.name + ".link")
        os.link(other, link)
        os.replace(link, blob)
        saved += a.st_size
    return saved


def kubelet_argv(h: Harness, node: Node, config: ConfigWriter) -> list[str]:
    """The node's kubelet command line (its configuration written); the flags every release
    the harness builds knows (tests/test_live_harness_releases.py)."""
    path = config(h, "kubelet.yaml", node=node)
    kubeconfig = h.etc / "kubelet.kubeconfig" if not node.extra else node.etc / "kubelet.kubeconfig"
    return [str(h.bin / "kubelet"), f"--config={path}", f"--kubeconfig={kubeconfig}",
            f"--hostname-override={node.name}", f"--node-ip={node.ip}", f"--root-dir={node.kubelet_dir}",
            f"--cert-dir={node.kubelet_dir}/pki", "-v=1"]


def kube_proxy_argv(h: Harness, node: Node, config: ConfigWriter) -> list[str]:
    return [str(h.bin / "kube-proxy"), f"--config={config(h, 'kube-proxy.yaml', node=node)}"]


def _kubelet(h: Harness, node: Node, config: ConfigWriter) -> None:
    node.kubelet_dir.mkdir(parents=True, exist_ok=True)
    node.pod_logs_dir.mkdir(parents=True, exist_ok=True)
    name = node.process("kubelet")
    h.spawn(name, kubelet_argv(h, node, config), netns=network.netns_path(node) if node.extra else None)
    h.wait_for(f"{name} healthy", lambda: http_ok(f"http://{node.bind}:10248/healthz"), 120)
    h.wait_for(f"node {node.name} registered", lambda: h.kubectl("get", "node", node.name, "-o", "name"), 120)


def _cgroup_root(node: Node) -> None:
    """The kubelet's cgroup root in every v1 hierarchy (it must exist); cpuset's copied from
    its parent (a new cpuset cgroup has no CPUs)."""
    for hierarchy in _hierarchies():
        parent = hierarchy
        for part in node.cgroup_root.strip("/").split("/"):
            path = parent / part
            path.mkdir(exist_ok=True)
            if hierarchy.name == "cpuset":
                for key in ("cpuset.cpus", "cpuset.mems"):
                    if not (path / key).read_text().strip():
                        (path / key).write_text((parent / key).read_text())
            parent = path


def _hierarchies() -> list[Path]:
    return [p for p in sorted(CGROUPS.iterdir()) if p.is_dir() and p.name != "unified" and not p.is_symlink()]


def _node_object(h: Harness, node: Node) -> None:
    """The Node, made before its kubelet registers: its pod CIDR (the controller-manager
    takes it as allocated), the hostname label and the extra nodes' taint."""
    if h.kubectl("get", "node", node.name, "--ignore-not-found", "-o", "name").strip():
        return
    labels = {"kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              topology.EXTRA_LABEL[0]: topology.EXTRA_LABEL[1]}
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node.name, "labels": labels},
           "spec": {"podCIDR": node.pod_cidr, "podCIDRs": [node.pod_cidr], "taints": [topology.EXTRA_TAINT]}}
    h.kubectl("create", "-f", "-", input=json.dumps(obj))


def ready(h: Harness, name: str) -> bool:
    found = json.loads(h.kubectl("get", "node", name, "-o", "json"))
    return any(c["type"] == "Ready" and c["status"] == "True" for c in found["status"].get("conditions", []))


def patch_devices(h: Harness, node: Node, resources: dict[str, str]) -> None:
    """The extended resources, as plain numbers in the node's status (no device plugin)."""
    ops = [{"op": "add", "path": f"/status/{part}/{name.replace('/', '~1')}", "value": value}
           for part in ("capacity", "allocatable") for name, value in topology.devices(resources).items()]
    h.kubectl("patch", "node", node.name, "--subresource=status", "--type=json", "-p", json.dumps(ops))


# --- lose and remove --------------------------------------------------------------------------

def lose(h: Harness, node: Node) -> None:
    """The node gone as if its power went: unreachable first, then every process of it killed
    (no SIGTERM, no pod torn down), its mounts and its run-time state (its /run) gone. Its disk
    stays: the containerd root, the kubelet's directory, the pod logs."""
    assert node.extra, "node 1 runs the shared harness's pods"
    network.cut(h, node)
    for component in ("kubelet", "kube-proxy", "containerd"):
        h.kill(node.process(component))
    _kill_leftovers(node)
    _unmount(node)
    shutil.rmtree(topology.RUN_ROOT / node.name, ignore_errors=True)


def remove(h: Harness, node: Node) -> None:
    """An extra node taken down for good: its containers removed while its containerd still
    answers, its processes, mounts, cgroups, network namespace and routes gone."""
    if node.extra and h.alive(node.process("containerd")):
        remove_containers(h, node)
    for component in ("kube-proxy", "kubelet", "containerd"):
        h.stop(node.process(component))
    _kill_leftovers(node)
    _unmount(node)
    shutil.rmtree(topology.RUN_ROOT / node.name, ignore_errors=True)
    _remove_cgroups(node)
    network.remove(h, node)


def remove_containers(h: Harness, node: Node) -> None:
    """Every pod sandbox and container in the node's containerd (namespace k8s.io)."""
    socket = str(node.containerd_socket)
    for kind in ("tasks", "containers"):
        for item in h.ctr(kind, "ls", "-q", socket=socket, check=False).split():
            if kind == "tasks":
                h.ctr("tasks", "kill", "-s", "SIGKILL", item, socket=socket, check=False)
                h.ctr("tasks", "delete", "-f", item, socket=socket, check=False)
            else:
                h.ctr("containers", "delete", item, socket=socket, check=False)


def _kill_leftovers(node: Node) -> None:
    """SIGKILL to the node's shims (by the containerd socket they serve) and to every process
    in its cgroups, until none is left."""
    address = str(node.containerd_socket).encode()
    for _ in range(50):
        pids = set(_cgroup_pids(node))
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    argv = (proc / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if argv and b"containerd-shim" in argv[0] and address in argv:
                    pids.add(int(proc.name))
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)
    raise HarnessError(f"{node.name}: processes still alive after SIGKILL: {sorted(_cgroup_pids(node))}")


def _cgroup_pids(node: Node) -> list[int]:
    root = CGROUPS / "pids" / node.cgroup_root.strip("/")
    found: list[int] = []
    if root.exists():
        for directory, _, _ in os.walk(root):
            try:
                found += [int(p) for p in (Path(directory) / "cgroup.procs").read_text().split()]
            except OSError:
                pass
    return found


def _unmount(node: Node) -> None:
    """What the kubelet (volumes, the directory itself) and containerd (root filesystems,
    sandboxes' shm, pods' network namespaces) left mounted, deepest first, never followed."""
    kubelet = str(node.kubelet_dir)
    state = str(topology.RUN_ROOT / node.name)
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    mine = [m for m in mounts if m == kubelet or m.startswith(kubelet + "/") or m == state or m.startswith(state + "/")]
    for mount in sorted(set(mine), reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True)


def _remove_cgroups(node: Node) -> None:
    for hierarchy in _hierarchies():
        root = hierarchy / node.cgroup_root.strip("/")
        if not root.exists():
            continue
        for directory, _, _ in sorted(os.walk(root), key=lambda entry: -len(entry[0])):
            try:
                os.rmdir(directory)
            except OSError:
                pass
        try:
            os.rmdir(root.parent)  # /msgen-harness, once the last node's is gone
        except OSError:
            pass


def status(h: Harness, node: Node) -> list[str]:
    lines = []
    for component in COMPONENTS:
        name = node.process(component)
        pid = (h.run / f"{name}.pid").read_text().strip() if h.alive(name) else ""
        lines.append(f"{name}: {'running (pid ' + pid + ')' if pid else 'not running'}")
    return lines
