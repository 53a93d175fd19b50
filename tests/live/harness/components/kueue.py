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

Kueue 0.19 turns `waitForPodsReady` on by default (`timeout` 30 minutes, `recoveryTimeout` the
same, `blockAdmission` false, requeued after a 60 s backoff doubling to an hour): the
configuration below leaves it out, so the harness runs those defaults, as a cluster installed
from the release does. msgen's `MS_TOPO_TIMEOUT` for a queued job follows that timeout
(docs/targets.md, "Kueue's timeout and MindSpore's").
"""

from __future__ import annotations

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
    return addons.write_config(h, NAME, {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": NAMESPACE,
        **addons.controller_settings(NAME),
        "internalCertManagement": {"enable": True, "webhookServiceName": WEBHOOK_SERVICE,
                                   "webhookSecretName": "kueue-webhook-server-cert"},
        "integrations": {"frameworks": INTEGRATIONS},
    })


def up(h: Any) -> dict[str, str]:
    directory, version = addons.module(NAME, MODULE)
    manifests = h.kubectl("kustomize", str(directory / "config" / "default"))
    docs = addons.select(manifests, lambda kind, name: kind in ("Deployment", "APIService")
                         or (kind, name) == ("Service", WEBHOOK_SERVICE))
    addons.install_with_host_webhook(
        h, docs, ("workloads.kueue.x-k8s.io", "clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io"),
        WEBHOOK_SERVICE, NAMESPACE, {"https": (443, PORTS["webhook"])})
    addons.start_controller(h, NAME, [str(Path(h.bin) / BINARY), f"--config={config(h)}",
                                      "--feature-gates=VisibilityOnDemand=false", "--zap-log-level=info"],
                            "kueue-webhook-server-cert", NAMESPACE, PROBE, "Kueue")
    return {"MSGEN_TEST_KUEUE_VERSION": version}


def down(h: Any) -> None:
    h.kubectl("delete", "mutatingwebhookconfiguration", "kueue-mutating-webhook-configuration", "--ignore-not-found")
    h.kubectl("delete", "validatingwebhookconfiguration", "kueue-validating-webhook-configuration", "--ignore-not-found")
    h.stop(NAME)


def status(h: Any) -> str:
    return addons.controller_status(NAME)
