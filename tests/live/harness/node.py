"""The cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, then its nodes
(each Debian's containerd with runc and the CNI bridge, a kubelet and kube-proxy: node_runtime.py;
node 1 on the host, extra nodes in network namespaces of their own: topology.py), CoreDNS and
msgen's images, started in that order; the nodes start together.

What these machines need (learnt on them; see docs/development.md):
- a hybrid cgroup v1 layout: the kubelet runs with `failCgroupV1: false` and the `cgroupfs`
  driver, containerd with runc (Debian's crun refuses the layout);
- no CAP_SYS_RESOURCE: containerd's `restrict_oom_score_adj`, and the kubelet's and
  kube-proxy's oomScoreAdj 0; kube-proxy leaves the conntrack sysctls alone;
- no registry: images are imported (images.py), the sandbox image is our own pause;
- extended resources (`nvidia.com/gpu`, `huawei.com/Ascend910`, `huawei.com/npu`) are plain
  numbers patched into each node's status: there are no devices, MindSpore runs on the CPU.

CoreDNS runs on the host (its `kubernetes` plugin reading the API as admin), listening on the
node IP; the usual `kube-system/kube-dns` Service (10.96.0.10) points to it through an
EndpointSlice of ours.

A home with a port offset (`up --port-offset N`, `Harness.port`) runs etcd and the control
plane only, every port moved up by N, beside a cluster on the usual ports: containerd's socket,
the CNI configuration, kube-proxy's iptables rules and the kubelet's cgroups are one per
machine, so that home has no node: neither node 1 nor extra ones, whose namespace, veth,
address, pod CIDR, cgroup root and the host's FORWARD chain are the machine's too, named by
the node's index (`up --nodes N` there is refused). Its pods stay Pending; what needs no
kubelet runs. Before a process starts, the ports it will listen on must be free: a port
another cluster answers on is refused, never shared (an API server of one release on
another's etcd would corrupt it). An extra node's kubelet and kube-proxy listen on its own
address in its own namespace: no port of the host's.
"""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import binaries, features, images, network, node_runtime, pki, releases, topology
from .core import Harness, HarnessError, have
from .topology import Node

PACKAGES = {"containerd": "containerd", "runc": "runc", "iptables": "iptables", "conntrack": "conntrack",
            "debootstrap": "debootstrap", "buildah": "buildah", "openssl": "openssl", "kubectl": None,
            "go": None, "dig": "dnsutils", "/usr/lib/cni/bridge": "containernetworking-plugins"}
#: In start order; `down` stops them in the reverse order.
PROCESSES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "containerd", "kubelet",
             "kube-proxy", "coredns")
#: The usual ports of each process (Harness.port moves them in a home with a port offset).
PORTS = {"etcd": (2379, 2380, 2381), "kube-apiserver": (6443,), "kube-controller-manager": (10257,),
         "kube-scheduler": (10259,), "kubelet": (10248, 10250), "kube-proxy": (10249, 10256), "coredns": (10181,)}
CONTROL_PLANE = PROCESSES[:4]
CONTAINERD_STATE = "/run/containerd"  # `state` in config/containerd.toml
HERE = Path(__file__).resolve().parent


def _missing() -> list[str]:
    return [package or name for name, package in PACKAGES.items()
            if not (Path(name).exists() if name.startswith("/") else have(name))]


def _check_host(h: Harness) -> None:
    """The Debian packages the node needs, installed when missing (once: apt-get update first);
    Go and kubectl come from their own releases."""
    debian = [name for name in _missing() if name in PACKAGES.values()]
    if debian and have("apt-get"):
        h.log(f"installing {' '.join(debian)} (apt-get)")
        h.sh(["apt-get", "update", "-q"], log="apt")
        h.sh(["apt-get", "install", "-y", "-q", "--no-install-recommends", *debian],
             env={"DEBIAN_FRONTEND": "noninteractive"}, log="apt")
    missing = _missing()
    if missing:
        raise HarnessError("missing on this machine: " + ", ".join(missing) + " (Debian: apt-get install -y "
                           + " ".join(p for p in PACKAGES.values() if p) + "; Go 1.26 and kubectl from their releases)")


def control_plane_only(h: Harness) -> bool:
    return h.port_offset != 0


def build(h: Harness) -> None:
    _check_host(h)
    if control_plane_only(h):
        binaries.build_etcd(h)
        binaries.build_kube(h)
        return
    binaries.build_all(h)
    images.build(h)


def _config(h: Harness, name: str, node: Node | None = None, **values: str) -> Path:
    """etc/<name> (an extra node's: etc/nodes/<node>/<name>) from the template
    harness/config/<name>, its {placeholders} filled for `node` (default node 1)."""
    node = node or h.nodes(1)[0]
    text = (HERE / "config" / name).read_text()
    reserved = topology.system_reserved(_resources(h), os.cpu_count() or 1, _memory_total())
    fields = {"home": str(h.home), "pki": str(h.pki), "etc": str(h.etc), "data": str(h.data), "node_ip": node.ip,
              "node_name": node.name, "domain": h.domain, "dns_ip": h.dns_ip, "pod_cidr": h.pod_cidr,
              "node_pod_cidr": node.pod_cidr, "service_cidr": h.service_cidr, "pause": images.PAUSE,
              "containerd_root": str(node.containerd_root), "containerd_state": str(node.containerd_state),
              "containerd_socket": str(node.containerd_socket), "cni_conf_dir": str(node.cni_conf_dir),
              "netns_under_state": "true" if node.extra else "false", "bind": node.bind,
              "serving": f"kubelet-serving-{node.name}" if node.extra else "kubelet-serving",
              "cgroup_root": node.cgroup_root, "pod_logs_dir": str(node.pod_logs_dir),
              "system_reserved": "".join(f"\n  {key}: {value}" for key, value in sorted(reserved.items())),
              "kube_proxy_kubeconfig": str((node.etc if node.extra else h.etc) / "kube-proxy.kubeconfig"), **values}
    path = (node.etc if node.extra else h.etc) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pki.write(path, releases.fields(name, text.format(**fields), releases.recorded(h)))
    return path


def _resources(h: Harness) -> dict[str, str]:
    return topology.load(h.topology_file).resources


def _memory_total() -> int:
    """MemTotal, the kubelet's memory capacity."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) << 10
    raise HarnessError("no MemTotal in /proc/meminfo")


def _https_ok(h: Harness, url: str) -> bool:
    done = subprocess.run(["curl", "-sf", "--max-time", "5", "--cacert", str(h.pki / "ca.crt"), "--cert",
                           str(h.pki / "admin.crt"), "--key", str(h.pki / "admin.key"), url], capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == "ok"


def _http_ok(url: str, insecure: bool = False) -> bool:
    return subprocess.run(["curl", "-sf", "--max-time", "5", *(["-k"] if insecure else []), url],
                          capture_output=True).returncode == 0


def _host_settings(h: Harness) -> None:
    """Pods route through the host, and bridged traffic must pass iptables (Services)."""
    if not Path("/proc/sys/net/bridge/bridge-nf-call-iptables").exists():
        h.sh(["modprobe", "br_netfilter"], check=False)
    settings = {"net/ipv4/ip_forward": "1", "net/bridge/bridge-nf-call-iptables": "1",
                "net/bridge/bridge-nf-call-ip6tables": "1"}
    for key, value in settings.items():
        path = Path("/proc/sys") / key
        if path.exists() and path.read_text().strip() != value:
            path.write_text(value)


def _answers(port: int) -> bool:
    """Whether something listens on 127.0.0.1:`port` (connecting binds nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(2)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def check_ports(h: Harness, names: tuple[str, ...]) -> None:
    """HarnessError when a port one of `names` would listen on answers while this home's
    process of that name does not run: another cluster (or program) holds it."""
    taken = [f"{h.port(port)} ({name})" for name in names if not h.alive(name)
             for port in PORTS.get(name, ()) if _answers(h.port(port))]
    if taken:
        raise HarnessError(f"ports in use, not by {h.home}'s processes: {', '.join(taken)}; another "
                           "cluster runs here: stop it, or run this one beside it with `up --port-offset N` "
                           "(its control plane only)")


def _control_plane(h: Harness) -> None:
    bin_ = h.bin
    check_ports(h, CONTROL_PLANE)
    etcd = [f"http://127.0.0.1:{h.port(port)}" for port in PORTS["etcd"]]
    h.spawn("etcd", [str(bin_ / "etcd"), "--name", h.node_name, "--data-dir", str(h.data / "etcd"),
                     "--listen-client-urls", etcd[0], "--advertise-client-urls", etcd[0],
                     "--listen-peer-urls", etcd[1], "--initial-advertise-peer-urls", etcd[1],
                     "--initial-cluster", f"{h.node_name}={etcd[1]}", "--listen-metrics-urls", etcd[2],
                     "--quota-backend-bytes", str(4 << 30), "--log-level", "warn"])
    h.wait_for("etcd healthy", lambda: _http_ok(f"{etcd[2]}/health"), 60)
    p = h.pki
    h.spawn("kube-apiserver", [
        str(bin_ / "kube-apiserver"), f"--etcd-servers={etcd[0]}", "--bind-address=0.0.0.0",
        f"--secure-port={h.port(6443)}", f"--advertise-address={h.node_ip}", f"--service-cluster-ip-range={h.service_cidr}",
        f"--client-ca-file={p}/ca.crt", f"--tls-cert-file={p}/apiserver.crt", f"--tls-private-key-file={p}/apiserver.key",
        f"--kubelet-client-certificate={p}/apiserver-kubelet-client.crt",
        f"--kubelet-client-key={p}/apiserver-kubelet-client.key", f"--kubelet-certificate-authority={p}/ca.crt",
        "--kubelet-preferred-address-types=InternalIP,Hostname", f"--service-account-key-file={p}/sa.pub",
        f"--service-account-signing-key-file={p}/sa.key", f"--service-account-issuer=https://kubernetes.default.svc.{h.domain}",
        "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
        f"--requestheader-client-ca-file={p}/front-proxy-ca.crt", "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-", f"--proxy-client-cert-file={p}/front-proxy-client.crt",
        f"--proxy-client-key-file={p}/front-proxy-client.key", "--enable-aggregator-routing=true",
        "--allow-privileged=true", "--profiling=false", "--event-ttl=1h", *features.flags(h, "kube-apiserver")])
    h.wait_for("kube-apiserver ready", lambda: _https_ok(h, f"https://127.0.0.1:{h.port(6443)}/readyz"), 240)
    for name, extra in (("kube-controller-manager", [
            "--use-service-account-credentials=true", f"--service-account-private-key-file={p}/sa.key",
            f"--root-ca-file={p}/ca.crt", f"--cluster-signing-cert-file={p}/ca.crt", f"--cluster-signing-key-file={p}/ca.key",
            "--allocate-node-cidrs=true", f"--cluster-cidr={h.pod_cidr}", "--node-cidr-mask-size=24",
            f"--service-cluster-ip-range={h.service_cidr}", "--controllers=*,bootstrapsigner,tokencleaner"]),
            ("kube-scheduler", [])):
        kubeconfig = h.etc / f"{name}.kubeconfig"
        h.spawn(name, [str(bin_ / name), f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
                       f"--authorization-kubeconfig={kubeconfig}", "--bind-address=127.0.0.1",
                       f"--secure-port={h.port(PORTS[name][0])}", "--leader-elect=false",
                       "--profiling=false", *extra, *features.flags(h, name)])
    for name in ("kube-controller-manager", "kube-scheduler"):
        h.wait_for(f"{name} healthy", functools.partial(_http_ok, f"https://127.0.0.1:{h.port(PORTS[name][0])}/healthz",
                                                        True), 120)


def _dns(h: Harness) -> None:
    h.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=msgen-harness", "-f",
              str(_config(h, "kube-dns.yaml")))
    corefile = _config(h, "Corefile", kubeconfig=str(h.etc / "admin.kubeconfig"))
    h.spawn("coredns", [str(h.bin / "coredns"), "-conf", str(corefile)])
    h.wait_for("CoreDNS ready", lambda: _http_ok("http://127.0.0.1:10181/ready"), 90)
    h.wait_for(f"DNS kubernetes.default.svc.{h.domain} via {h.dns_ip}", lambda: h.sh(
        ["dig", "+time=2", "+tries=1", "+short", f"@{h.dns_ip}", f"kubernetes.default.svc.{h.domain}", "A"],
        check=False).split() == [h.api_service_ip], 90)


def up(h: Harness, count: int | None = None, resources: dict[str, str] | None = None) -> dict[str, str]:
    """The control plane, `count` nodes (default: as many as `up` last started, one at first)
    with `resources` each (default: as last time), CoreDNS and msgen's images."""
    _check_host(h)
    if control_plane_only(h):
        pki.make(h)
        _control_plane(h)
        return {"MSGEN_TEST_KUBECONFIG": str(h.kubeconfig)}
    _host_settings(h)
    before = topology.load(h.topology_file)
    wanted = topology.Topology(before.count if count is None else count,
                               before.resources if resources is None else resources)
    nodes = h.nodes(wanted.count)
    topology.system_reserved(wanted.resources, os.cpu_count() or 1, _memory_total())  # fails before anything starts
    if wanted.count > 1:
        network.held_elsewhere(h)
    pki.make(h)
    _control_plane(h)
    check_ports(h, ("kubelet", "kube-proxy", "coredns"))  # node 1's (an extra node's are in its namespace)
    if wanted.count > 1:
        network.claim(h)  # the control plane runs on the usual ports: no other home's runs
    if network.holds(h):  # else the nodes' namespaces and the host's rules are another home's
        for gone in h.nodes(max(before.count, wanted.count))[wanted.count:]:
            remove_node(h, gone)
        if wanted.count > 1:
            network.host_rules(h)
        else:
            network.remove_host_rules(h)
            network.release(h)
    h.topology_file.write_text(wanted.to_json())
    for node in nodes[1:]:  # one openssl at a time: they share the CA's serial file
        pki.node_certificates(h, node)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(nodes)) as pool:  # the nodes start (and import images) together
        for done in [pool.submit(node_runtime.start, h, node, _config, wanted.resources) for node in nodes]:
            done.result()
    h.log(f"{len(nodes)} node{'s' if len(nodes) > 1 else ''} Ready in {time.monotonic() - started:.0f}s")
    _dns(h)
    images.controller(h)
    images.cmp(h)
    for node in nodes:  # once more: a kubelet status update may have come in between
        node_runtime.patch_devices(h, node, wanted.resources)
    return {"MSGEN_TEST_KUBECONFIG": str(h.kubeconfig), "MSGEN_TEST_IMAGE": images.MINDSPORE}


def mindspore_releases(h: Harness, releases: list[str]) -> str:
    """`up --mindspore-version`: the images of `releases` in every running node's containerd,
    not node 1's alone: a suite that trains with one (MSGEN_LIVE_MINDSPORE) places pods on the
    extra nodes too. An extra node's blobs are then linked to node 1's, as when it starts; a
    node lost meanwhile gets them from the next `up --mindspore-version`."""
    nodes = [n for n in h.nodes() if node_runtime.containerd_answers(n)]
    refs = images.mindspore_releases(h, releases, [str(n.containerd_socket) for n in nodes])
    first = h.nodes(1)[0]
    for extra in (n for n in nodes if n.extra):
        node_runtime.share_content(first, extra)
    return refs


def remove_node(h: Harness, node: Node) -> None:
    """An extra node gone for good: its processes, state and network, and its Node object
    (its pods with it) when the API server answers."""
    node_runtime.remove(h, node)
    if _https_ok(h, f"https://127.0.0.1:{h.port(6443)}/readyz"):
        h.kubectl("delete", "node", node.name, "--ignore-not-found", "--wait=false")


def stop_node(h: Harness, name: str) -> None:
    """`node stop NAME`: the node lost (node_runtime.lose)."""
    node = _extra_node(h, name)
    node_runtime.lose(h, node)


def start_node(h: Harness, name: str) -> None:
    """`node start NAME`: the lost node back, Ready."""
    node = _extra_node(h, name)
    node_runtime.start(h, node, _config, _resources(h))


def _extra_node(h: Harness, name: str) -> Node:
    if control_plane_only(h):
        raise HarnessError(f"{h.home} runs a control plane only (port offset {h.port_offset}): it has no {name}")
    try:
        index = topology.index_of(name)
    except ValueError as error:
        raise HarnessError(str(error)) from None
    nodes = h.nodes()
    if index == 1:
        raise HarnessError(f"{name} runs the control plane's add-ons and every other suite's pods: "
                           f"stop an extra node ({', '.join(n.name for n in nodes[1:]) or 'none: up --nodes N'})")
    if index > len(nodes):
        raise HarnessError(f"no node {name}: the cluster has {len(nodes)} (tests/live/cluster up --nodes N)")
    if not network.holds(h):
        raise HarnessError(f"{name} is another home's: the cluster of {network.holder()} holds the extra nodes")
    return nodes[index - 1]


def down(h: Harness) -> None:
    if control_plane_only(h):  # the machine's containerd, mounts and node belong to another home
        for name in reversed(CONTROL_PLANE):
            h.stop(name)
        return
    nodes = h.nodes()
    if network.holds(h):  # else the nodes' namespaces and the host's rules are another home's
        for node in reversed(nodes[1:]):
            remove_node(h, node)
        network.remove_host_rules(h)
        network.release(h)
    first = nodes[0]
    for name in reversed(PROCESSES):
        if name == "containerd" and h.alive("containerd"):
            node_runtime.remove_containers(h, first)
        h.stop(name)
    # the pods' mounts under the kubelet's directory (never followed: a subPath can point anywhere),
    # the directory itself (the kubelet bind-mounts it), and, when no containerd serves any more,
    # the sandboxes' and containers' mounts a killed containerd left in its state directory
    # (a machine stopped without `down` keeps them, and a new containerd trips over them)
    prefixes = [f"{h.data}/kubelet/"]
    if not node_runtime.containerd_answers(first):
        prefixes.append(f"{CONTAINERD_STATE}/io.containerd.")
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()
              if line.split()[1].startswith(tuple(prefixes)) or line.split()[1] == f"{h.data}/kubelet"]
    for mount in sorted(mounts, reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True)


def status(h: Harness) -> str:
    nodes = h.nodes(1) if control_plane_only(h) else h.nodes()
    lines = []
    for name in CONTROL_PLANE if control_plane_only(h) else PROCESSES:
        pid = (h.run / f"{name}.pid").read_text().strip() if h.alive(name) else ""
        lines.append(f"{name}: {'running (pid ' + pid + ')' if pid else 'not running'}")
    for node in nodes[1:]:
        lines += node_runtime.status(h, node)
    if h.alive("kube-apiserver") and os.path.exists(h.kubeconfig):
        shown = h.kubectl("get", "node", "-o", "wide", "--no-headers", check=False).strip()
        lines += [f"node: {line}" for line in shown.splitlines()]
    lines.append(f"MSGEN_TEST_KUBECONFIG={h.kubeconfig}")
    return "\n".join(lines)
