"""kwok (`sigs.k8s.io/kwok`): simulated nodes, for measuring msgen's controller at scale.

The kwok controller runs on the host (see `harness/addons.py`) with the release's own
configuration (`kustomize/kwok/kwok.yaml` in the module: it manages the nodes annotated
`kwok.x-k8s.io/node: fake`) but for `POD_PARALLELISM`, and the release's CRDs and stages: the nodes' `fast` stages and the
pods' `general` ones, whose delays each pod chooses with annotations
(`pod-ready.stage.kwok.x-k8s.io/delay`, `pod-complete.stage.kwok.x-k8s.io/delay`, ... with
jitter), so a benchmark can make its pods start and end at the pace it wants.

The harness registers `MSGEN_HARNESS_KWOK_NODES` fake nodes (default 10) `kwok-node-<i>`,
labelled `type: kwok` and tainted `kwok.x-k8s.io/node=fake:NoSchedule`, so that only pods that
tolerate the taint (and select the label) land on them and the real node's pods never do.
Each takes `PODS_PER_NODE` pods: the benchmark of a thousand jobs has ~6,000 pods, up to
~4,000 at once while its controller is behind (250 a node, kwok's example, stopped it at
2,500 pods pending). The capacity is written to the nodes' status on every `up`, since
`kubectl apply` leaves an existing node's status as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .. import addons

NAME = "kwok"
MODULE = "sigs.k8s.io/kwok"
BINARY = "kwok"
#: The release's port for kwok's own server and health endpoint (`nodePort` in kwok.yaml).
HEALTH_PORT = 10247
TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
PODS_PER_NODE = 1000
#: Pod stages kwok plays at once (the release's configuration: 4). Each is a request to the
#: API server (a pod's creation and its readiness are two status writes, its deletion a
#: third); kwok sets itself no client-side rate limit, so these are all it has in flight. A
#: thousand jobs arriving in nine minutes are ~11 pods a second, ~33 requests a second: at
#: 0.3-1 s a request on the loaded shared machine, 4 at once left 1,700 pods waiting for
#: kwok (Pending or ContainerCreating) and most of that benchmark's jobs never ran.
POD_PARALLELISM = 16
CAPACITY = {"cpu": "1000", "memory": "4Ti", "pods": str(PODS_PER_NODE)}


def build(h: Any) -> None:
    addons.build(h, NAME, {BINARY: f"{MODULE}/cmd/kwok"})


def node_count() -> int:
    return int(os.environ.get("MSGEN_HARNESS_KWOK_NODES", "10"))


def fake_node(name: str) -> dict[str, Any]:
    capacity = CAPACITY
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {"type": "kwok", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                       "kubernetes.io/arch": "amd64", "node-role.kubernetes.io/agent": ""},
        },
        "spec": {"taints": [TAINT]},
        "status": {"allocatable": capacity, "capacity": capacity},
    }


def up(h: Any) -> dict[str, str]:
    directory, version = addons.module(NAME, MODULE)
    kustomize = directory / "kustomize"
    crds = h.kubectl("kustomize", str(kustomize / "crd"))
    addons.apply(h, addons.documents(crds))
    addons.crds_established(h, "stages.kwok.x-k8s.io")
    stages = [h.kubectl("kustomize", str(kustomize / "stage" / part))
              for part in ("node/fast", "node/heartbeat-with-lease", "pod/general")]
    addons.apply(h, [d for text in stages for d in addons.documents(text)])
    h.spawn(NAME, [str(Path(h.bin) / BINARY), f"--kubeconfig={h.kubeconfig}",
                   f"--config={configuration(h, kustomize / 'kwok' / 'kwok.yaml')}", f"--node-ip={h.node_ip}"])
    h.wait_for("kwok's health endpoint", lambda: addons.http_ok(f"http://127.0.0.1:{HEALTH_PORT}/healthz"), 120)
    names = [f"kwok-node-{i}" for i in range(node_count())]
    h.kubectl("apply", "-f", "-", input=addons.stream([addons.as_document(fake_node(n)) for n in names]))
    status = json.dumps({"status": {"capacity": CAPACITY, "allocatable": CAPACITY}})
    for n in names:
        h.kubectl("patch", "node", n, "--subresource=status", "--type=merge", "-p", status)
    h.kubectl("wait", "--for=condition=Ready", *(f"node/{n}" for n in names), "--timeout=120s")
    return {"MSGEN_TEST_KWOK_VERSION": version, "MSGEN_TEST_KWOK_NODES": ",".join(names)}


def configuration(h: Any, release: Path) -> Path:
    """The release's kwok.yaml with `POD_PARALLELISM` pod stages at once, written beside the
    harness's other configuration (kwok reads it when it starts: a running kwok keeps its
    own until it is stopped and `up` starts it again)."""
    text = release.read_text()
    line = "  podPlayStageParallelism: 4\n"
    if line not in text:
        raise RuntimeError(f"{release} no longer says {line.strip()!r}: read it and set POD_PARALLELISM anew")
    out = Path(h.etc) / "kwok.yaml"
    out.write_text(text.replace(line, f"  podPlayStageParallelism: {POD_PARALLELISM}\n"))
    return out


def down(h: Any) -> None:
    h.stop(NAME)


def status(h: Any) -> str:
    healthy = addons.http_ok(f"http://127.0.0.1:{HEALTH_PORT}/healthz")
    return f"kwok: {'ready' if healthy else 'not ready'} ({node_count()} fake nodes)"
