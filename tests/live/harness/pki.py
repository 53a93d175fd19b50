"""The cluster's certificates (openssl) and kubeconfigs, made once under pki/ and etc/.

One CA signs every client and serving certificate; a second (front-proxy) CA lets the
controller-manager and scheduler delegate authentication, and aggregated API servers (some
add-ons install one) work. A certificate is remade only when its subject alternative names
change (a new node IP).
"""

from __future__ import annotations

import base64
from pathlib import Path

from .core import Harness
from .topology import Node

DAYS = "3650"


def _ca(h: Harness, name: str, subject: str) -> None:
    if (h.pki / f"{name}.crt").exists():
        return
    h.sh(["openssl", "genrsa", "-out", str(h.pki / f"{name}.key"), "2048"])
    h.sh(["openssl", "req", "-x509", "-new", "-key", str(h.pki / f"{name}.key"), "-subj", subject, "-days", DAYS,
          "-out", str(h.pki / f"{name}.crt"), "-addext", "basicConstraints=critical,CA:TRUE",
          "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"])


def _cert(h: Harness, name: str, subject: str, usage: str, san: str = "", ca: str = "ca") -> None:
    marker = h.pki / f"{name}.san"
    if (h.pki / f"{name}.crt").exists() and marker.exists() and marker.read_text() == san:
        return
    key, csr, ext = (h.pki / f"{name}.{suffix}" for suffix in ("key", "csr", "ext"))
    h.sh(["openssl", "genrsa", "-out", str(key), "2048"])
    h.sh(["openssl", "req", "-new", "-key", str(key), "-subj", subject, "-out", str(csr)])
    ext.write_text("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                   f"extendedKeyUsage={usage}\n" + (f"subjectAltName={san}\n" if san else ""))
    h.sh(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(h.pki / f"{ca}.crt"), "-CAkey", str(h.pki / f"{ca}.key"),
          "-CAcreateserial", "-days", DAYS, "-extfile", str(ext), "-out", str(h.pki / f"{name}.crt")])
    marker.write_text(san)


def _write(path: Path, text: str) -> None:
    """Replace `path` only when its content differs (kube-proxy restarts on a changed config)."""
    if path.exists() and path.read_text() == text:
        return
    new = path.with_name(path.name + ".new")
    new.write_text(text)
    new.chmod(0o600)
    new.replace(path)


def kubeconfig(h: Harness, path: Path, cert: str, user: str, server: str = "") -> None:
    server = server or f"https://127.0.0.1:{h.port(6443)}"

    def data(name: str) -> str:
        return base64.b64encode((h.pki / name).read_bytes()).decode()

    _write(path, f"""apiVersion: v1
kind: Config
clusters:
- name: msgen-harness
  cluster:
    server: {server}
    certificate-authority-data: {data("ca.crt")}
users:
- name: {user}
  user:
    client-certificate-data: {data(cert + ".crt")}
    client-key-data: {data(cert + ".key")}
contexts:
- name: msgen-harness
  context: {{cluster: msgen-harness, user: {user}}}
current-context: msgen-harness
""")


def make(h: Harness) -> None:
    _ca(h, "ca", "/CN=msgen-harness-ca")
    _ca(h, "front-proxy-ca", "/CN=msgen-harness-front-proxy-ca")
    if not (h.pki / "sa.key").exists():
        h.sh(["openssl", "genrsa", "-out", str(h.pki / "sa.key"), "2048"])
        h.sh(["openssl", "rsa", "-in", str(h.pki / "sa.key"), "-pubout", "-out", str(h.pki / "sa.pub")])
    _cert(h, "front-proxy-client", "/CN=front-proxy-client", "clientAuth", ca="front-proxy-ca")
    for name, subject in (("admin", "/O=system:masters/CN=kubernetes-admin"),
                          ("kube-controller-manager", "/CN=system:kube-controller-manager"),
                          ("kube-scheduler", "/CN=system:kube-scheduler"),
                          ("kube-proxy", "/CN=system:kube-proxy"),
                          ("kubelet", f"/O=system:nodes/CN=system:node:{h.node_name}"),
                          ("apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client")):
        _cert(h, name, subject, "clientAuth")
    names = ["kubernetes", "kubernetes.default", "kubernetes.default.svc", f"kubernetes.default.svc.{h.domain}", "localhost"]
    _cert(h, "apiserver", "/CN=kube-apiserver", "serverAuth",
          ",".join([*(f"DNS:{n}" for n in names), "IP:127.0.0.1", f"IP:{h.api_service_ip}", f"IP:{h.node_ip}"]))
    _cert(h, "kubelet-serving", f"/O=system:nodes/CN=system:node:{h.node_name}", "serverAuth",
          f"DNS:{h.node_name},IP:{h.node_ip},IP:127.0.0.1")
    kubeconfig(h, h.etc / "admin.kubeconfig", "admin", "kubernetes-admin")
    for name in ("kube-controller-manager", "kube-scheduler", "kube-proxy"):
        kubeconfig(h, h.etc / f"{name}.kubeconfig", name, f"system:{name}")
    kubeconfig(h, h.etc / "kubelet.kubeconfig", "kubelet", f"system:node:{h.node_name}")
    # for the tests (and pods that reach the API server from outside the cluster's network)
    kubeconfig(h, h.kubeconfig, "admin", "kubernetes-admin", f"https://{h.node_ip}:{h.port(6443)}")


def node_certificates(h: Harness, node: Node) -> None:
    """An extra node's kubelet certificates (client, and serving for its address) and the
    kubeconfigs of its kubelet and kube-proxy, which reach the API server at the host's address
    (127.0.0.1 in the node's network namespace is its own)."""
    _cert(h, f"kubelet-{node.name}", f"/O=system:nodes/CN=system:node:{node.name}", "clientAuth")
    _cert(h, f"kubelet-serving-{node.name}", f"/O=system:nodes/CN=system:node:{node.name}", "serverAuth",
          f"DNS:{node.name},IP:{node.ip}")
    node.etc.mkdir(parents=True, exist_ok=True)
    server = f"https://{h.node_ip}:{h.port(6443)}"
    kubeconfig(h, node.etc / "kubelet.kubeconfig", f"kubelet-{node.name}", f"system:node:{node.name}", server)
    kubeconfig(h, node.etc / "kube-proxy.kubeconfig", "kube-proxy", "system:kube-proxy", server)


write = _write
