"""JobSet (`sigs.k8s.io/jobset`): the controller that runs msgen's `--target jobset` output.

Installed from the release's own kustomize tree (`config/default` in the module) without its
Deployment: the controller runs on the host (see `harness/addons.py` for why), with the
release's configuration but its ports moved clear of the others and no leader election (one
replica; a lease would need an in-cluster namespace). It makes and rotates its own webhook
certificate (`internalCertManagement`), as in a pod.
"""

from __future__ import annotations

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
    return addons.write_config(h, NAME, {
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        **addons.controller_settings(NAME),
        "internalCertManagement": {"enable": True, "webhookServiceName": WEBHOOK_SERVICE,
                                   "webhookSecretName": "jobset-webhook-server-cert"},
    })


def up(h: Any) -> dict[str, str]:
    directory, version = addons.module(NAME, MODULE)
    manifests = h.kubectl("kustomize", str(directory / "config" / "default"))
    docs = addons.select(manifests, lambda kind, name: kind == "Deployment" or (kind, name) == ("Service", WEBHOOK_SERVICE))
    addons.install_with_host_webhook(h, docs, ("jobsets.jobset.x-k8s.io",), WEBHOOK_SERVICE, NAMESPACE,
                                     {"https": (443, PORTS["webhook"])})
    addons.start_controller(h, NAME, [str(Path(h.bin) / BINARY), f"--config={config(h)}", "--zap-log-level=info"],
                            "jobset-webhook-server-cert", NAMESPACE, PROBE, "the JobSet controller")
    return {"MSGEN_TEST_JOBSET_VERSION": version}


def down(h: Any) -> None:
    h.stop(NAME)


def status(h: Any) -> str:
    return addons.controller_status(NAME)
