"""JobSet (`sigs.k8s.io/jobset`): the controller that runs msgen's `--target jobset` output.

Installed from the release's own kustomize tree (`config/default` in the module) without its
Deployment: the controller runs on the host (see `harness/addons.py` for why), with the
release's configuration but its ports moved clear of the others and no leader election (one
replica; a lease would need an in-cluster namespace). It makes and rotates its own webhook
certificate (`internalCertManagement`), as in a pod.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import addons

NAME = "jobset"
MODULE = "sigs.k8s.io/jobset"
NAMESPACE = "jobset-system"
WEBHOOK_SERVICE = "jobset-webhook-service"
BINARY = "jobset-controller"
PORTS = addons.PORTS["jobset"]

#: A JobSet the webhooks must accept: readiness means the API server reaches them.
PROBE = """apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: msgen-harness-probe, namespace: default}
spec:
  replicatedJobs:
  - name: probe
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: probe, image: localhost/probe:none, command: ["true"]}]
"""


def build(h: Any) -> None:
    addons.build(h, NAME, {BINARY: MODULE})


def config(h: Any) -> Path:
    """The controller's configuration: the release's settings, moved to the harness's ports."""
    path = Path(h.home) / "addons" / NAME / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": True, "webhookServiceName": WEBHOOK_SERVICE,
                                   "webhookSecretName": "jobset-webhook-server-cert"},
        "webhook": {"port": PORTS["webhook"]},
        "metrics": {"bindAddress": f":{PORTS['metrics']}"},
        "health": {"healthProbeBindAddress": f":{PORTS['health']}"},
    }, indent=1))
    return path


def up(h: Any) -> dict[str, str]:
    directory, version = addons.module(NAME, MODULE)
    manifests = h.kubectl("kustomize", str(directory / "config" / "default"))
    docs = addons.select(manifests, lambda kind, name: kind == "Deployment" or (kind, name) == ("Service", WEBHOOK_SERVICE))
    addons.apply(h, [d for d in docs if addons.kind_and_name(d)[0] in ("Namespace", "CustomResourceDefinition")])
    addons.crds_established(h, "jobsets.jobset.x-k8s.io")
    addons.replace_selector_service(h, WEBHOOK_SERVICE, NAMESPACE)
    addons.apply(h, docs + addons.host_service(WEBHOOK_SERVICE, NAMESPACE, h.node_ip, {"https": (443, PORTS["webhook"])}))
    addons.spawn_with_private_tmp(h, NAME, [str(Path(h.bin) / BINARY), f"--config={config(h)}",
                                            "--zap-log-level=info"])
    addons.project_secret(h, NAME, "jobset-webhook-server-cert", NAMESPACE)
    h.wait_for("the JobSet controller's health endpoint",
               lambda: addons.http_ok(f"http://127.0.0.1:{PORTS['health']}/readyz"), 180)
    h.wait_for("the JobSet webhooks", lambda: addons.dry_run_ok(h, PROBE), 180)
    return {"MSGEN_TEST_JOBSET_VERSION": version}


def down(h: Any) -> None:
    h.stop(NAME)


def status(h: Any) -> str:
    healthy = addons.http_ok(f"http://127.0.0.1:{PORTS['health']}/readyz")
    return f"jobset controller: {'ready' if healthy else 'not ready'} (health port {PORTS['health']})"
