"""Kubeflow Trainer (`github.com/kubeflow/trainer/v2`): the TrainJob controller, on JobSet.

Installed from the release's own kustomize bases (`manifests/base/{crds,manager,rbac,webhook}`
in the module, in `kubeflow-system`, as its `overlays/manager` does) without the Deployment (the
controller runs on the host, see `harness/addons.py`) and without the overlay's JobSet, which the
overlay downloads from the internet: the harness's `jobset` component is that JobSet, and
`up --with trainer` needs it. No runtimes are installed: msgen writes the runtime each job
refers to.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .. import addons

NAME = "trainer"
MODULE = "github.com/kubeflow/trainer/v2"
NAMESPACE = "kubeflow-system"
SERVICE = "kubeflow-trainer-controller-manager"
SECRET = "kubeflow-trainer-webhook-cert"
BINARY = "trainer-controller-manager"
PORTS = {**addons.PORTS["trainer"], "status": 18447}
REQUIRES = ("jobset",)
#: A TrainingRuntime its validating webhook (failurePolicy Fail) must admit: a server-side dry
#: run of it passes once the API server reaches the webhook and trusts its certificate, which
#: the health endpoint does not say (it is ready before the certificate is projected).
PROBE = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: msgen-harness-probe, namespace: default}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                restartPolicy: Never
                containers: [{name: node, image: localhost/probe:none, command: ["true"]}]
"""


def build(h: Any) -> None:
    addons.build(h, NAME, {BINARY: f"{MODULE}/cmd/trainer-controller-manager"})


def config(h: Any) -> Path:
    shared = addons.controller_settings(NAME)
    return addons.write_config(h, NAME, {
        "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
        "kind": "Configuration",
        **shared,
        "health": {**shared["health"], "readinessEndpointName": "readyz", "livenessEndpointName": "healthz"},
        "metrics": {**shared["metrics"], "secureServing": True},
        "webhook": {**shared["webhook"], "host": ""},
        "certManagement": {"enable": True, "webhookServiceName": SERVICE, "webhookSecretName": SECRET},
        "statusServer": {"port": PORTS["status"]},
    })


def manifests(h: Any, directory: Path) -> str:
    """The release's manager overlay less its downloaded JobSet, built by kubectl's kustomize
    from a kustomization in the harness's home (kustomize takes only relative paths)."""
    where = Path(h.home) / "addons" / NAME / "kustomize"
    where.mkdir(parents=True, exist_ok=True)
    base = os.path.relpath(directory / "manifests" / "base", where)
    (where / "kustomization.yaml").write_text(json.dumps({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "namespace": NAMESPACE,
        "resources": [f"{base}/{part}" for part in ("crds", "manager", "rbac", "webhook")],
    }))
    return str(h.kubectl("kustomize", str(where)))


def up(h: Any) -> dict[str, str]:
    directory, version = addons.module(NAME, MODULE)
    if not h.kubectl("get", "crd", "jobsets.jobset.x-k8s.io", "--ignore-not-found", "-o", "name").strip():
        raise RuntimeError("Kubeflow Trainer runs TrainJobs as JobSets: start the harness with --with jobset,trainer")
    docs = addons.select(manifests(h, directory), lambda kind, name: kind == "Deployment" or (kind, name) == ("Service", SERVICE))
    namespace = addons.as_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    secret = addons.as_document({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET, "namespace": NAMESPACE}})
    addons.install_with_host_webhook(
        h, [namespace, secret] + docs,
        ("trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org",
         "clustertrainingruntimes.trainer.kubeflow.org"),
        SERVICE, NAMESPACE, {"webhook-server": (443, PORTS["webhook"]), "status-server": (10443, PORTS["status"])})
    addons.start_controller(h, NAME, [str(Path(h.bin) / BINARY), f"--config={config(h)}", "--zap-log-level=2"],
                            SECRET, NAMESPACE, PROBE, "the Trainer controller")
    return {"MSGEN_TEST_TRAINER_VERSION": version}


def down(h: Any) -> None:
    h.stop(NAME)


def status(h: Any) -> str:
    return addons.controller_status(NAME)
