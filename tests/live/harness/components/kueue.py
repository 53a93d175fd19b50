"""Kueue (`sigs.k8s.io/kueue`): admits the jobs msgen labels with `--kueue-queue`.

Installed from the release's own kustomize tree (`config/default`) without its Deployment (the
controller runs on the host, see `harness/addons.py`) and without the visibility API (its
APIServices, and the feature gate `VisibilityOnDemand` off): its server authenticates through
the pod's in-cluster configuration, which a host process has not, and Kueue exits when it
cannot start it; an aggregated API whose server is not reachable would also break discovery,
and with it namespace deletion, for the whole cluster. The live tests read Workloads.

Kueue's pod webhook (`failurePolicy: Fail`, every namespace but kube-system and kueue-system)
refuses every pod while Kueue is down: `up` waits for it, and `down` removes the webhook
configurations before it stops Kueue, so a stopped Kueue blocks nobody.

Integrations: `batch/job`, `jobset.x-k8s.io/jobset`, `pod` (msgen's `indexed-job`, `jobset` and
`pod` targets) and `trainer.kubeflow.org/trainjob`, which Kueue sets up once Trainer's CRDs are
there. No queues: each test makes the ResourceFlavor, ClusterQueue and LocalQueue it needs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import addons

NAME = "kueue"
MODULE = "sigs.k8s.io/kueue"
NAMESPACE = "kueue-system"
WEBHOOK_SERVICE = "kueue-webhook-service"
BINARY = "kueue-controller"
PORTS = addons.PORTS["kueue"]
INTEGRATIONS = ["batch/job", "jobset.x-k8s.io/jobset", "pod", "trainer.kubeflow.org/trainjob"]

#: A labelled Job the webhooks must see (Kueue's webhook suspends it): readiness means the API
#: server reaches them. A dry run: nothing is created.
PROBE = """apiVersion: batch/v1
kind: Job
metadata:
  name: msgen-harness-probe
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: msgen-harness-probe}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: probe, image: localhost/probe:none, command: ["true"]}]
"""


def build(h: Any) -> None:
    addons.build(h, NAME, {BINARY: f"{MODULE}/cmd/kueue"})


def config(h: Any) -> Path:
    path = Path(h.home) / "addons" / NAME / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": NAMESPACE,
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": True, "webhookServiceName": WEBHOOK_SERVICE,
                                   "webhookSecretName": "kueue-webhook-server-cert"},
        "webhook": {"port": PORTS["webhook"]},
        "metrics": {"bindAddress": f":{PORTS['metrics']}"},
        "health": {"healthProbeBindAddress": f":{PORTS['health']}"},
        "integrations": {"frameworks": INTEGRATIONS},
    }, indent=1))
    return path


def up(h: Any) -> dict[str, str]:
    directory, version = addons.module(NAME, MODULE)
    manifests = h.kubectl("kustomize", str(directory / "config" / "default"))
    docs = addons.select(manifests, lambda kind, name: kind in ("Deployment", "APIService")
                         or (kind, name) == ("Service", WEBHOOK_SERVICE))
    addons.apply(h, [d for d in docs if addons.kind_and_name(d)[0] in ("Namespace", "CustomResourceDefinition")])
    addons.crds_established(h, "workloads.kueue.x-k8s.io", "clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io")
    addons.replace_selector_service(h, WEBHOOK_SERVICE, NAMESPACE)
    addons.apply(h, docs + addons.host_service(WEBHOOK_SERVICE, NAMESPACE, h.node_ip, {"https": (443, PORTS["webhook"])}))
    addons.spawn_with_private_tmp(h, NAME, [str(Path(h.bin) / BINARY), f"--config={config(h)}",
                                            "--feature-gates=VisibilityOnDemand=false",
                                            "--zap-log-level=info"])
    addons.project_secret(h, NAME, "kueue-webhook-server-cert", NAMESPACE)
    h.wait_for("Kueue's health endpoint", lambda: addons.http_ok(f"http://127.0.0.1:{PORTS['health']}/readyz"), 180)
    h.wait_for("Kueue's webhooks", lambda: addons.dry_run_ok(h, PROBE), 180)
    return {"MSGEN_TEST_KUEUE_VERSION": version}


def down(h: Any) -> None:
    h.kubectl("delete", "mutatingwebhookconfiguration", "kueue-mutating-webhook-configuration", "--ignore-not-found")
    h.kubectl("delete", "validatingwebhookconfiguration", "kueue-validating-webhook-configuration", "--ignore-not-found")
    h.stop(NAME)


def status(h: Any) -> str:
    healthy = addons.http_ok(f"http://127.0.0.1:{PORTS['health']}/readyz")
    return f"kueue controller: {'ready' if healthy else 'not ready'} (health port {PORTS['health']})"
