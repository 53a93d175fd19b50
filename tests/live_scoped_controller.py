"""msgen's controller deployed for some namespaces of a shared cluster, as
`overlays/controller-namespaces` asks a user to: built by the real kustomize, then its two
lists edited (the namespaces it watches and binds), and moved out of `msgen-system` into a
namespace of the test run's own, with its ServiceAccount's user name in the admission
policies changed together (as `overlays/controller/admission.yaml` says). Its cluster-scoped
objects (the ClusterRole, the ValidatingAdmissionPolicies and their bindings) get the run's
suffix, so that several runs, or another deployment of the overlay, never share one.

It runs the image built from this checkout (`tests/controller_image.py`, by its source tag,
so that an image of other sources imported meanwhile under `msgen-controller:0.1.0` is not
used) with one replica: the cluster is a 2-core machine shared with others.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .conftest import ROOT, kustomize_binary
from .live import PREFIX, kubectl, wait_for, without_admission_policies

SYSTEM_NAMESPACE = "msgen-system"
EXAMPLE_NAMESPACES = ("team-a", "team-b")


@dataclass
class Deployment:
    """Where one run's controller lives: `system` holds it; it watches `watched`, in which
    its ClusterRole is bound; `other` is a namespace it was given nothing in."""

    run: str = field(default_factory=lambda: uuid.uuid4().hex[:6])

    @property
    def system(self) -> str:
        return f"{PREFIX}-{self.run}-sys"

    @property
    def watched(self) -> tuple[str, str]:
        return f"{PREFIX}-{self.run}-shared", f"{PREFIX}-{self.run}-admit"

    @property
    def other(self) -> str:
        return f"{PREFIX}-{self.run}-other"

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{self.system}:msgen-controller"

    def cluster_role(self) -> str:
        return f"msgen-controller-{self.run}"

    def documents(self, image: str, overlay: str = "controller-namespaces") -> list[dict[str, Any]]:
        """The overlay as kustomize builds it, moved into this run's namespaces."""
        binary = kustomize_binary()
        assert binary, "kustomize is needed (.ci/fetch-kustomize)"
        built = subprocess.run([binary, "build", str(ROOT / "overlays" / overlay)], capture_output=True,
                               text=True, check=True, timeout=120).stdout  # fmt: skip
        documents = [self._moved(d, image) for d in yaml.safe_load_all(without_admission_policies(built)) if d]
        text = json.dumps(documents)
        assert SYSTEM_NAMESPACE not in text and not any(n in text for n in EXAMPLE_NAMESPACES), text
        return documents

    def _moved(self, document: dict[str, Any], image: str) -> dict[str, Any]:
        text = json.dumps(document).replace(f"system:serviceaccount:{SYSTEM_NAMESPACE}:",
                                            f"system:serviceaccount:{self.system}:")
        document = json.loads(text)
        metadata, kind = document["metadata"], document["kind"]
        places = {SYSTEM_NAMESPACE: self.system, **dict(zip(EXAMPLE_NAMESPACES, self.watched, strict=True))}
        if kind == "Namespace":
            metadata["name"] = places[metadata["name"]]
        if "namespace" in metadata:
            metadata["namespace"] = places[metadata["namespace"]]
        for subject in document.get("subjects") or []:
            subject["namespace"] = places[subject["namespace"]]
        if document.get("roleRef", {}).get("kind") == "ClusterRole":
            document["roleRef"]["name"] = self.cluster_role()
        if kind == "ClusterRole":
            metadata["name"] = self.cluster_role()
        if kind.startswith("ValidatingAdmissionPolicy"):
            metadata["name"] += f"-{self.run}"
            if kind == "ValidatingAdmissionPolicyBinding":
                document["spec"]["policyName"] += f"-{self.run}"
        if kind == "Deployment":
            document["spec"]["replicas"] = 1
            container = document["spec"]["template"]["spec"]["containers"][0]
            container["image"] = image
            container["args"] = [",".join(self.watched) if a == ",".join(EXAMPLE_NAMESPACES) else a
                                 for a in container["args"]]
        return document

    def apply(self, documents: list[dict[str, Any]]) -> None:
        for namespace in (*self.watched, self.other):
            kubectl("create", "namespace", namespace)
        kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}))

    def delete(self, documents: list[dict[str, Any]]) -> None:
        kubectl("delete", "-f", "-", "--ignore-not-found", "--wait=false", check=False,
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}))
        for namespace in (*self.watched, self.other, self.system):
            kubectl("delete", "namespace", namespace, "--ignore-not-found", "--wait=false", check=False)

    def running(self, image: str) -> Iterator[Deployment]:
        """Applied, rolled out and leading for the life of a module's fixture; its log printed
        and everything removed after (the suites that deploy a scoped controller share it)."""
        documents = self.documents(image)
        self.apply(documents)
        try:
            kubectl("rollout", "status", "deployment/msgen-controller", "-n", self.system, "--timeout=240s", timeout=300)
            wait_for("the controller to lead", lambda: "leading (Lease" in self.logs(), timeout=120)
            yield self
        finally:
            print(f"\ncontroller log ({self.system}):\n{self.logs()}")
            self.delete(documents)

    def token_kubeconfig(self, path: Any) -> Any:
        """A kubeconfig holding a token of the controller's ServiceAccount: what a thief of it holds."""
        token = kubectl("create", "token", "msgen-controller", "-n", self.system, "--duration=1h").stdout.strip()
        config = json.loads(kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "stolen",
            "clusters": [{"name": "c", "cluster": config["clusters"][0]["cluster"]}],
            "users": [{"name": "stolen", "user": {"token": token}}],
            "contexts": [{"name": "stolen", "context": {"cluster": "c", "user": "stolen"}}],
        }))  # fmt: skip
        return path

    def logs(self) -> str:
        return kubectl("logs", "-n", self.system, "deployment/msgen-controller", "--tail=-1", check=False).stdout

    def restarts(self) -> int:
        found = json.loads(kubectl("get", "pods", "-n", self.system, "-o", "json").stdout)["items"]
        return sum(int(s.get("restartCount") or 0) for p in found
                   for s in (p.get("status") or {}).get("containerStatuses") or [])


class Thief:
    """msgen's own API client (msgen.reconcile.kube, as the controller writes) with a token of
    the controller's ServiceAccount; each call says "admitted" or the server's refusal."""

    def __init__(self, kubeconfig: Path, namespace: str) -> None:
        from msgen.reconcile import kube

        self.kube = kube
        self.client = kube.connect(str(kubeconfig), None)
        self.namespace = namespace

    def _outcome(self, action: Any) -> str:
        try:
            action()
        except self.kube.KubeError as exc:
            return str(exc)
        return "admitted"

    def patch(self, api_version: str, kind: str, name: str, body: Any, how: str = "merge") -> str:
        from lightkube.types import PatchType

        res = self.kube.resource(api_version, kind)
        kinds = {"merge": PatchType.MERGE, "json": PatchType.JSON}
        return self._outcome(lambda: self.kube.call(f"patching {kind} {name}", lambda: self.client.patch(
            res, name, body, namespace=self.namespace, patch_type=kinds[how]), self.client, "PATCH"))

    def delete(self, api_version: str, kind: str, name: str) -> str:
        obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": self.namespace}}
        return self._outcome(lambda: self.kube.delete(self.client, obj, wait_pods=False))

    def create(self, obj: dict[str, Any]) -> str:
        obj = {**obj, "metadata": {**obj["metadata"], "namespace": self.namespace}}
        return self._outcome(lambda: self.kube.create(self.client, obj))
