"""The single node: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, Debian's
containerd (runc, CNI bridge), the kubelet, kube-proxy and CoreDNS, started in that order.

What these machines need (learnt on them; see docs/development.md):
- a hybrid cgroup v1 layout: the kubelet runs with `failCgroupV1: false` and the `cgroupfs`
  driver, containerd with runc (Debian's crun refuses the layout);
- no CAP_SYS_RESOURCE: containerd's `restrict_oom_score_adj`, and the kubelet's and
  kube-proxy's oomScoreAdj 0; kube-proxy leaves the conntrack sysctls alone;
- no registry: images are imported (images.py), the sandbox image is our own pause;
- extended resources (`nvidia.com/gpu`, `huawei.com/Ascend910`, `huawei.com/npu`) are plain
  numbers patched into the node's status: there are no devices, MindSpore runs on the CPU.

CoreDNS runs on the host (its `kubernetes` plugin reading the API as admin), listening on the
node IP; the usual `kube-system/kube-dns` Service (10.96.0.10) points to it through an
EndpointSlice of ours.

A home with a port offset (`up --port-offset N`, `Harness.port`) runs etcd and the control
plane only, every port moved up by N, beside a cluster on the usual ports: containerd's socket,
the CNI configuration, kube-proxy's iptables rules and the kubelet's cgroups are one per
machine, so that home has no node (pods stay Pending; what needs no kubelet runs). Before a
process starts, the ports it will listen on must be free: a port another cluster answers on is
refused, never shared (an API server of one release on another's etcd would corrupt it).
"""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
from pathlib import Path

from . import binaries, features, images, pki, releases
from .core import Harness, HarnessError, have

PACKAGES = {"containerd": "containerd", "runc": "runc", "iptables": "iptables", "conntrack": "conntrack",
            "debootstrap": "debootstrap", "buildah": "buildah", "openssl": "openssl", "kubectl": None,
            "go": None, "dig": "dnsutils", "/usr/lib/cni/bridge": "containernetworking-plugins"}
DEVICES = {"nvidia.com/gpu": "8", "huawei.com/Ascend910": "8", "huawei.com/npu": "8"}
#: In start order; `down` stops them in the reverse order.
PROCESSES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "containerd", "kubelet",
             "kube-proxy", "coredns")
CNI_CONF = Path("/etc/cni/net.d/10-msgen-harness.conflist")
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


def _config(h: Harness, name: str, **values: str) -> Path:
    """etc/<name> from the template harness/config/<name>, its {placeholders} filled."""
    text = (HERE / "config" / name).read_text()
    fields = {"home": str(h.home), "pki": str(h.pki), "etc": str(h.etc), "data": str(h.data), "node_ip": h.node_ip,
              "node_name": h.node_name, "domain": h.domain, "dns_ip": h.dns_ip, "pod_cidr": h.pod_cidr,
              "node_pod_cidr": h.node_pod_cidr, "service_cidr": h.service_cidr, "pause": images.PAUSE, **values}
    path = h.etc / name
    pki.write(path, releases.fields(name, text.format(**fields), releases.recorded(h)))
    return path


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


def _containerd_answers() -> bool:
    """Whether a containerd serves the socket (a socket left by a killed one hangs: no)."""
    try:
        return subprocess.run(["ctr", "version"], capture_output=True, timeout=10).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _containerd(h: Harness) -> None:
    CNI_CONF.parent.mkdir(parents=True, exist_ok=True)
    pki.write(CNI_CONF, (HERE / "config" / "cni.conflist").read_text().replace("{node_pod_cidr}", h.node_pod_cidr)
              .replace("{gateway}", h.node_pod_cidr.rsplit(".", 1)[0] + ".1"))
    CNI_CONF.chmod(0o644)
    for other in CNI_CONF.parent.iterdir():  # containerd loads the first conflist only
        if other != CNI_CONF and other.suffix in (".conflist", ".conf") and other.name < CNI_CONF.name:
            raise HarnessError(f"{other} would win over {CNI_CONF}: move it away")
    config = _config(h, "containerd.toml")
    if not h.alive("containerd") and _containerd_answers():
        raise HarnessError("a containerd the harness did not start serves /run/containerd/containerd.sock: stop it first")
    h.spawn("containerd", ["/usr/bin/containerd", "--config", str(config)])
    h.wait_for("containerd", _containerd_answers, 60)
    images.load(h)


def _node(h: Harness) -> None:
    (h.data / "kubelet").mkdir(exist_ok=True)
    config = _config(h, "kubelet.yaml")
    h.spawn("kubelet", [str(h.bin / "kubelet"), f"--config={config}", f"--kubeconfig={h.etc}/kubelet.kubeconfig",
                        f"--hostname-override={h.node_name}", f"--node-ip={h.node_ip}", f"--root-dir={h.data}/kubelet",
                        f"--cert-dir={h.data}/kubelet/pki", "-v=1"])
    h.wait_for("kubelet healthy", lambda: _http_ok("http://127.0.0.1:10248/healthz"), 120)
    h.wait_for(f"node {h.node_name} registered", lambda: h.kubectl("get", "node", h.node_name, "-o", "name"), 120)
    h.spawn("kube-proxy", [str(h.bin / "kube-proxy"), f"--config={_config(h, 'kube-proxy.yaml')}"])
    h.wait_for("kube-proxy healthy", lambda: _http_ok("http://127.0.0.1:10256/healthz"), 60)
    h.wait_for(f"node {h.node_name} Ready", lambda: _ready(h), 180)
    patch_devices(h)


def _ready(h: Harness) -> bool:
    node = json.loads(h.kubectl("get", "node", h.node_name, "-o", "json"))
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions", []))


def patch_devices(h: Harness) -> None:
    """The extended resources, as plain numbers in the node's status (no device plugin)."""
    ops = [{"op": "add", "path": f"/status/{part}/{name.replace('/', '~1')}", "value": value}
           for part in ("capacity", "allocatable") for name, value in DEVICES.items()]
    h.kubectl("patch", "node", h.node_name, "--subresource=status", "--type=json", "-p", json.dumps(ops))


def _dns(h: Harness) -> None:
    h.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=msgen-harness", "-f",
              str(_config(h, "kube-dns.yaml")))
    corefile = _config(h, "Corefile", kubeconfig=str(h.etc / "admin.kubeconfig"))
    h.spawn("coredns", [str(h.bin / "coredns"), "-conf", str(corefile)])
    h.wait_for("CoreDNS ready", lambda: _http_ok("http://127.0.0.1:10181/ready"), 90)
    h.wait_for(f"DNS kubernetes.default.svc.{h.domain} via {h.dns_ip}", lambda: h.sh(
        ["dig", "+time=2", "+tries=1", "+short", f"@{h.dns_ip}", f"kubernetes.default.svc.{h.domain}", "A"],
        check=False).split() == [h.api_service_ip], 90)


def up(h: Harness) -> dict[str, str]:
    _check_host(h)
    pki.make(h)
    if control_plane_only(h):
        _control_plane(h)
        return {"MSGEN_TEST_KUBECONFIG": str(h.kubeconfig)}
    _host_settings(h)
    _control_plane(h)
    check_ports(h, ("kubelet", "kube-proxy", "coredns"))
    _containerd(h)
    _node(h)
    _dns(h)
    images.controller(h)
    images.cmp(h)
    patch_devices(h)  # once more: a kubelet status update may have come in between
    return {"MSGEN_TEST_KUBECONFIG": str(h.kubeconfig), "MSGEN_TEST_IMAGE": images.MINDSPORE}


def _remove_containers(h: Harness) -> None:
    """Every pod sandbox and container in containerd's k8s.io namespace (the kubelet is gone)."""
    if not h.alive("containerd"):
        return
    for kind in ("tasks", "containers"):
        listed = h.sh(["ctr", "-n", "k8s.io", kind, "ls", "-q"], check=False).split()
        for item in listed:
            if kind == "tasks":
                h.sh(["ctr", "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", item], check=False)
                h.sh(["ctr", "-n", "k8s.io", "tasks", "delete", "-f", item], check=False)
            else:
                h.sh(["ctr", "-n", "k8s.io", "containers", "delete", item], check=False)


def down(h: Harness) -> None:
    if control_plane_only(h):  # the machine's containerd, mounts and node belong to another home
        for name in reversed(CONTROL_PLANE):
            h.stop(name)
        return
    for name in reversed(PROCESSES):
        if name == "containerd":
            _remove_containers(h)
        h.stop(name)
    # the pods' mounts under the kubelet's directory (never followed: a subPath can point anywhere),
    # the directory itself (the kubelet bind-mounts it), and, when no containerd serves any more,
    # the sandboxes' and containers' mounts a killed containerd left in its state directory
    # (a machine stopped without `down` keeps them, and a new containerd trips over them)
    prefixes = [f"{h.data}/kubelet/"]
    if not _containerd_answers():
        prefixes.append(f"{CONTAINERD_STATE}/io.containerd.")
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()
              if line.split()[1].startswith(tuple(prefixes)) or line.split()[1] == f"{h.data}/kubelet"]
    for mount in sorted(mounts, reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True)


def status(h: Harness) -> str:
    lines = []
    for name in CONTROL_PLANE if control_plane_only(h) else PROCESSES:
        pid = (h.run / f"{name}.pid").read_text().strip() if h.alive(name) else ""
        lines.append(f"{name}: {'running (pid ' + pid + ')' if pid else 'not running'}")
    if h.alive("kube-apiserver") and os.path.exists(h.kubeconfig):
        lines.append("node: " + h.kubectl("get", "node", "-o", "wide", "--no-headers", check=False).strip())
    lines.append(f"MSGEN_TEST_KUBECONFIG={h.kubeconfig}")
    return "\n".join(lines)
