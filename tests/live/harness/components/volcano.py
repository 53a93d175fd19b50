"""Volcano (`volcano.sh/volcano`): the scheduler, controller manager and admission webhook that
run msgen's `--target volcano` and `--gang-scheduler volcano` output.

Installed from the release's own rendered manifest (`installer/volcano-development.yaml` in the
module) without its Deployments and its certificate Job: the three run on the host (see
`harness/addons.py`), each with the arguments its Deployment gives it, only the host-specific
ones (ports, the files the ConfigMaps were mounted as, the certificates) replaced. The
admission certificate is made by the harness (openssl, as the release's own
`gen-admission-secret.sh` does); the webhook manager writes its CA into the webhook
configurations at start, as in a pod. The `default` queue is the scheduler's own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .. import addons

NAME = "volcano"
MODULE = "volcano.sh/volcano"
NAMESPACE = "volcano-system"
WEBHOOK_SERVICE = "volcano-admission-service"
BINARIES = {"vc-scheduler": f"{MODULE}/cmd/scheduler", "vc-controller-manager": f"{MODULE}/cmd/controller-manager",
            "vc-webhook-manager": f"{MODULE}/cmd/webhook-manager"}
DEPLOYMENTS = {"volcano-admission": "vc-webhook-manager", "volcano-controllers": "vc-controller-manager",
               "volcano-scheduler": "vc-scheduler"}
#: Arguments whose value is a path inside the release's pod, or a port: the harness sets them.
HOST_SPECIFIC = ("--tls-cert-file", "--tls-private-key-file", "--ca-cert-file", "--admission-conf",
                 "--scheduler-conf", "--port", "--healthz-address", "--listen-address", "--kubeconfig")

#: A Volcano Job the admission webhooks must accept (a dry run).
PROBE = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: msgen-harness-probe, namespace: default}
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
  - name: probe
    replicas: 1
    template:
      spec:
        restartPolicy: Never
        containers: [{name: probe, image: localhost/probe:none, command: ["true"]}]
"""


def build(h: Any) -> None:
    addons.build(h, NAME, BINARIES)


def release_args(document: str) -> list[str]:
    """The `--flag=value` arguments a Deployment of the release gives its container, less the
    host-specific ones."""
    args = re.findall(r"^\s+- (--[^\s=]+(?:=\S*)?)\s*$", document, re.MULTILINE)
    return [a for a in args if a.split("=", 1)[0] not in HOST_SPECIFIC]


def config_file(h: Any, configmap: str, key: str) -> Path:
    """A ConfigMap of the release, once applied, as the file its pod would have mounted."""
    text = h.kubectl("get", "configmap", configmap, "-n", NAMESPACE, "-o",
                     "jsonpath={.data." + key.replace(".", "\\.") + "}")
    path = Path(h.home) / "addons" / NAME / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def up(h: Any) -> dict[str, str]:
    directory, version = addons.module(NAME, MODULE)
    manifests = (directory / "installer" / "volcano-development.yaml").read_text()
    deployments = {name: d for d in addons.documents(manifests) for kind, name in [addons.kind_and_name(d)]
                   if kind == "Deployment"}
    docs = addons.select(manifests, lambda kind, name: kind in ("Deployment", "Job")
                         or (kind, name) == ("Service", WEBHOOK_SERVICE))
    ports = addons.PORTS
    addons.install_with_host_webhook(
        h, docs, ("jobs.batch.volcano.sh", "podgroups.scheduling.volcano.sh", "queues.scheduling.volcano.sh"),
        WEBHOOK_SERVICE, NAMESPACE, {"https": (443, ports["volcano-admission"]["webhook"])})
    certs = addons.openssl_ca_and_serving_cert(Path(h.home) / "addons" / NAME / "admission-certs",
                                               f"{WEBHOOK_SERVICE}.{NAMESPACE}.svc")
    bin_ = Path(h.bin)
    kubeconfig = f"--kubeconfig={h.kubeconfig}"
    h.spawn("volcano-admission", [
        str(bin_ / "vc-webhook-manager"), *release_args(deployments["volcano-admission"]), kubeconfig,
        f"--tls-cert-file={certs['cert']}", f"--tls-private-key-file={certs['key']}", f"--ca-cert-file={certs['ca']}",
        f"--admission-conf={config_file(h, 'volcano-admission-configmap', 'volcano-admission.conf')}",
        f"--port={ports['volcano-admission']['webhook']}",
        f"--healthz-address=:{ports['volcano-admission']['health']}"])
    h.spawn("volcano-controllers", [
        str(bin_ / "vc-controller-manager"), *release_args(deployments["volcano-controllers"]), kubeconfig,
        f"--listen-address=:{ports['volcano-controllers']['metrics']}",
        f"--healthz-address=:{ports['volcano-controllers']['health']}"])
    h.spawn("volcano-scheduler", [
        str(bin_ / "vc-scheduler"), *release_args(deployments["volcano-scheduler"]), kubeconfig,
        f"--scheduler-conf={config_file(h, 'volcano-scheduler-configmap', 'volcano-scheduler.conf')}",
        f"--listen-address=:{ports['volcano-scheduler']['metrics']}",
        f"--healthz-address=:{ports['volcano-scheduler']['health']}"])
    for process in DEPLOYMENTS:
        h.wait_for(f"{process}'s health endpoint", lambda process=process: healthy(process), 180)
    h.wait_for("Volcano's admission webhooks", lambda: addons.dry_run_ok(h, PROBE), 180)
    h.wait_for("Volcano's default queue",
               lambda: bool(h.kubectl("get", "queues.scheduling.volcano.sh", "default", "--ignore-not-found",
                                      "-o", "name").strip()), 120)
    return {"MSGEN_TEST_VOLCANO_VERSION": version}


def healthy(process: str) -> bool:
    """The process's health endpoint answers (the webhook manager serves it over its TLS)."""
    scheme = "https" if process == "volcano-admission" else "http"
    return addons.http_ok(f"{scheme}://127.0.0.1:{addons.PORTS[process]['health']}/healthz")


def down(h: Any) -> None:
    for process in DEPLOYMENTS:
        h.stop(process)


def status(h: Any) -> str:
    return ", ".join(f"{process}: {'ready' if healthy(process) else 'not ready'}" for process in DEPLOYMENTS)
