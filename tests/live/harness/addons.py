"""What the add-on components (JobSet, Kueue, Volcano, Kubeflow Trainer, kwok) share.

Each add-on is a Go module pinned in `tests/live/go/<component>/go.mod`, built on this machine,
and run as a supervised host process talking to the API server through the harness's kubeconfig,
not as a pod: no image registry is reachable, and a host process needs no image, no base image
and no image import, and restarts in a second when the harness restarts it. What the cluster
must hold (CRDs, namespaces, webhook configurations, RBAC) is read at install time from the
module's own files in the Go module cache (`config/`, `manifests/`, `installer/`), at the
version go.mod pins: nothing of theirs is copied into this repository.

Webhooks stay as the release writes them (`clientConfig.service`): the webhook's Service is
replaced by one without a selector whose EndpointSlice points at the node IP and the port the
host process listens on. The API server reaches it through the Service's ClusterIP like any
Service, and the serving certificate the controller makes for `<service>.<namespace>.svc`
(or the harness makes, for Volcano) verifies as it would in a pod.

The controllers write their serving certificates under a fixed `/tmp/k8s-webhook-server`, so
each runs in a private mount namespace with a `/tmp` of its own (`unshare`), or two of them
would overwrite each other's.

Stdlib only, as the rest of the harness: manifests are handled as YAML documents split on
`---` and read for their `kind` and `metadata.name`; what the harness writes itself is JSON,
which kubectl and the controllers read as YAML.
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import ssl
import subprocess
import urllib.request
from pathlib import Path
from typing import Any, Callable

from . import releases

GO_DIR = Path(__file__).resolve().parents[1] / "go"

#: Host ports the add-ons listen on, chosen clear of the control plane's (2379-2380, 6443,
#: 10248-10259) and of each other: the release defaults (8080, 8081, 8443, 9443) collide.
PORTS = {
    "jobset": {"webhook": 19443, "metrics": 18443, "health": 18081},
    "kueue": {"webhook": 19444, "metrics": 18444, "health": 18082},
    "trainer": {"webhook": 19445, "metrics": 18446, "health": 18083},
    "volcano-admission": {"webhook": 19446, "health": 18084},
    "volcano-scheduler": {"metrics": 18085, "health": 18086},
    "volcano-controllers": {"metrics": 18089, "health": 18087},
    "kwok": {"server": 18088},
}


def module(component: str, path: str) -> tuple[Path, str]:
    """The directory of module `path` in the Go module cache and its version, as
    `tests/live/go/<component>/go.mod` pins it (downloaded first when missing)."""
    where = GO_DIR / component
    subprocess.run(["go", "mod", "download", path], cwd=where, check=True, capture_output=True, text=True)
    info = json.loads(subprocess.run(["go", "list", "-m", "-json", path], cwd=where, check=True,
                                     capture_output=True, text=True).stdout)
    replaced = info.get("Replace") or {}
    directory = replaced.get("Dir") or info.get("Dir")
    if not directory:
        raise RuntimeError(f"{path}: not in the Go module cache after `go mod download` in {where}")
    return Path(directory), str(replaced.get("Version") or info["Version"])


def build(h: Any, component: str, packages: dict[str, str]) -> None:
    """Build each `package` of `tests/live/go/<component>` to `h.bin/<binary>` (the harness
    skips a build whose go.mod, go.sum and flags are unchanged)."""
    for binary, package in packages.items():
        h.go_build(GO_DIR / component, package, Path(h.bin) / binary)


# --- manifests as YAML documents -------------------------------------------------------------

_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)
_KIND = re.compile(r"^kind:[ \t]*(\S+)", re.MULTILINE)
_METADATA_NAME = re.compile(r"^metadata:[ \t]*\n(?:(?:[ \t]*#.*| {2,}.*)?\n)*? {2}name:[ \t]*[\"']?([^\s\"']+)", re.MULTILINE)


def documents(text: str) -> list[str]:
    """The documents of a multi-document YAML stream that hold more than comments."""
    return [part.strip("\n") + "\n" for part in _SEPARATOR.split(text)
            if any(line.strip() and not line.lstrip().startswith("#") for line in part.splitlines())]


def kind_and_name(document: str) -> tuple[str, str]:
    """A document's `kind` and `metadata.name`, whether the release wrote it (YAML) or the
    harness did (JSON, `as_document`)."""
    if document.lstrip().startswith("{"):
        obj = json.loads(document)
        return str(obj.get("kind", "")), str((obj.get("metadata") or {}).get("name", ""))
    kind = _KIND.search(document)
    name = _METADATA_NAME.search(document)
    return (kind.group(1) if kind else "", name.group(1) if name else "")


def select(text: str, drop: Callable[[str, str], bool]) -> list[str]:
    """The documents of `text` except those `drop(kind, name)` is true for."""
    return [d for d in documents(text) if not drop(*kind_and_name(d))]


def stream(docs: list[str]) -> str:
    """Documents, YAML or JSON, as one YAML stream. It starts with `---`: kubectl reads a stream
    whose first character is `{` as JSON and then fails at the first separator."""
    return "".join(f"---\n{d}" for d in docs)


def apply(h: Any, docs: list[str]) -> None:
    """Server-side apply (CRDs are too large for the last-applied annotation)."""
    h.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=msgen-harness", "-f", "-",
              input=stream(docs))


def crds_established(h: Any, *names: str) -> None:
    """Wait until the API server serves each CRD (`kubectl wait` fails on one whose status is
    not written yet, right after it was created)."""
    def established() -> bool:
        found = json.loads(h.kubectl("get", "crd", *names, "-o", "json"))
        items = found.get("items", [found]) if found.get("kind") == "List" else [found]
        return len(items) == len(names) and all(
            any(c.get("type") == "Established" and c.get("status") == "True" for c in (i.get("status") or {}).get("conditions") or [])
            for i in items)
    h.wait_for(f"the CRDs {', '.join(names)}", established, 120)


def as_document(obj: dict[str, Any]) -> str:
    return json.dumps(obj, indent=1) + "\n"


def host_service(name: str, namespace: str, node_ip: str, ports: dict[str, tuple[int, int]],
                 endpoints: bool = False) -> list[str]:
    """A Service `name` without selector and its EndpointSlice: each named port of the Service
    (`name: (service port, host port)`) leads to the node's port where the host process listens.
    With `endpoints`, its v1 Endpoints as well, for an API server that reaches a webhook through
    them (`releases.resolves_services_by_endpoints`), not mirrored into a second slice."""
    service = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": {"msgen-harness/host-process": "true"}},
        "spec": {"ports": [{"name": port_name, "port": service_port, "protocol": "TCP", "targetPort": host_port}
                           for port_name, (service_port, host_port) in ports.items()]},
    }
    slice_ = {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": f"{name}-host", "namespace": namespace,
                     "labels": {"kubernetes.io/service-name": name, "endpointslice.kubernetes.io/managed-by": "msgen-harness"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [node_ip], "conditions": {"ready": True}}],
        "ports": [{"name": port_name, "port": host_port, "protocol": "TCP"} for port_name, (_, host_port) in ports.items()],
    }
    found = [as_document(service), as_document(slice_)]
    if endpoints:
        found.append(as_document({
            "apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
            "subsets": [{"addresses": [{"ip": node_ip}],
                         "ports": [{"name": port_name, "port": host_port, "protocol": "TCP"}
                                   for port_name, (_, host_port) in ports.items()]}],
        }))
    return found


def replace_selector_service(h: Any, name: str, namespace: str) -> None:
    """A Service created from the release's manifest keeps its selector under server-side
    apply by another manager: delete it once so the selector-less one replaces it."""
    current = h.kubectl("get", "service", name, "-n", namespace, "--ignore-not-found", "-o", "json")
    if current.strip() and (json.loads(current).get("spec") or {}).get("selector"):
        h.kubectl("delete", "service", name, "-n", namespace, "--wait=true")


def install_with_host_webhook(h: Any, docs: list[str], crds: tuple[str, ...], service: str, namespace: str,
                               ports: dict[str, tuple[int, int]]) -> None:
    """Apply a release's documents with its webhook Service led to the host process: the
    namespaces and CRDs first (the rest names them, and a CRD must be served before its
    objects are), then everything else with the selector-less `service` (`host_service`)."""
    apply(h, [d for d in docs if kind_and_name(d)[0] in ("Namespace", "CustomResourceDefinition")])
    crds_established(h, *crds)
    replace_selector_service(h, service, namespace)
    by_endpoints = releases.resolves_services_by_endpoints(releases.recorded(h))
    apply(h, docs + host_service(service, namespace, h.node_ip, ports, endpoints=by_endpoints))


# --- processes --------------------------------------------------------------------------------

def private_tmp(h: Any, name: str) -> Path:
    tmp = Path(h.home) / "addons" / name / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return tmp


def spawn_with_private_tmp(h: Any, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
    """Start `argv` as the harness's supervised process `name`, with its own `/tmp` (a bind
    mount in a private mount namespace). `unshare --fork` stays the process the harness
    watches and stops (its whole process group), as its first argument says."""
    wrapped = ["unshare", "--fork", "--mount", "--propagation", "private", "--", "sh", "-c",
               'mount --bind "$0" /tmp && exec "$@"', str(private_tmp(h, name)), *argv]
    h.spawn(name, wrapped, env={**(env or {}), "KUBECONFIG": str(h.kubeconfig)})


def project_secret(h: Any, component: str, secret: str, namespace: str,
                   mount: str = "k8s-webhook-server/serving-certs") -> None:
    """Do what the kubelet does for the release's pod: write the webhook certificate Secret the
    controller fills (open-policy-agent's cert-controller) as files under its private `/tmp`,
    where the controller waits for them before it serves."""
    directory = private_tmp(h, component) / mount

    def projected() -> bool:
        found = h.kubectl("get", "secret", secret, "-n", namespace, "--ignore-not-found", "-o", "json")
        data = (json.loads(found).get("data") or {}) if found.strip() else {}
        if not data.get("tls.crt") or not data.get("tls.key"):
            return False
        directory.mkdir(parents=True, exist_ok=True)
        for key, value in data.items():
            target = directory / key
            target.write_bytes(base64.b64decode(value))
            target.chmod(0o600)
        return True

    h.wait_for(f"{namespace}/{secret} filled by {component}", projected, 180)


def http_ok(url: str) -> bool:
    """A health endpoint answers 200 (plain HTTP, or HTTPS with any certificate)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, timeout=3, context=context) as answer:
            return int(answer.status) == 200
    except (OSError, ValueError):
        return False


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def dry_run_ok(h: Any, document: str) -> bool:
    """A server-side dry run of `document` goes through: it passed every admission webhook
    it meets, so the API server reaches them and trusts their certificates."""
    try:
        h.kubectl("create", "--dry-run=server", "-f", "-", input=document)
    except Exception:  # the harness's error, or kubectl's: not yet
        return False
    return True


def openssl_ca_and_serving_cert(directory: Path, dns_name: str) -> dict[str, Path]:
    """A CA and a serving certificate for `dns_name` signed by it (openssl, as Volcano's own
    `gen-admission-secret.sh` does): made once, kept across restarts."""
    directory.mkdir(parents=True, exist_ok=True)
    files = {"ca": directory / "ca.crt", "ca_key": directory / "ca.key", "cert": directory / "tls.crt",
             "key": directory / "tls.key"}
    if all(p.exists() for p in files.values()):
        return files
    run = lambda *argv: subprocess.run(list(argv), check=True, capture_output=True)  # noqa: E731
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=msgen-harness-ca",
        "-keyout", str(files["ca_key"]), "-out", str(files["ca"]))
    request = directory / "tls.csr"
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={dns_name}", "-keyout", str(files["key"]),
        "-out", str(request))
    extensions = directory / "san.ext"
    extensions.write_text(f"subjectAltName=DNS:{dns_name}\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", str(request), "-CA", str(files["ca"]), "-CAkey", str(files["ca_key"]),
        "-CAcreateserial", "-days", "3650", "-extfile", str(extensions), "-out", str(files["cert"]))
    os.chmod(files["key"], 0o600)
    return files


# --- controllers built on controller-runtime (JobSet, Kueue, Trainer) --------------------------

def controller_settings(component: str) -> dict[str, Any]:
    """The configuration fields JobSet's and Kueue's controllers share: one replica without
    leader election (a lease would need an in-cluster namespace), on the harness's ports."""
    ports = PORTS[component]
    return {"leaderElection": {"leaderElect": False}, "webhook": {"port": ports["webhook"]},
            "metrics": {"bindAddress": f":{ports['metrics']}"},
            "health": {"healthProbeBindAddress": f":{ports['health']}"}}


def write_config(h: Any, component: str, configuration: dict[str, Any]) -> Path:
    """`configuration` as the file the controller's `--config` reads (JSON, which it reads as YAML)."""
    path = Path(h.home) / "addons" / component / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(configuration, indent=1))
    return path


def controller_ready(component: str) -> bool:
    return http_ok(f"http://127.0.0.1:{PORTS[component]['health']}/readyz")


def start_controller(h: Any, component: str, argv: list[str], secret: str, namespace: str, probe: str,
                     what: str) -> None:
    """Start a controller that makes its own webhook certificate, hand it that certificate as
    its pod would have it, and wait until it is ready and the API server reaches its webhooks
    (a dry run of `probe` passes them; the health endpoint says ready before that)."""
    spawn_with_private_tmp(h, component, argv)
    project_secret(h, component, secret, namespace)
    h.wait_for(f"{what}'s health endpoint", lambda: controller_ready(component), 180)
    h.wait_for(f"{what}'s webhooks", lambda: dry_run_ok(h, probe), 180)


def controller_status(component: str) -> str:
    return (f"{component} controller: {'ready' if controller_ready(component) else 'not ready'} "
            f"(health port {PORTS[component]['health']})")
