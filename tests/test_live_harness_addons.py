"""The live harness's add-on components, without a cluster: how they read the releases'
manifests (YAML documents, the Deployments' arguments), the Services that lead the API server
to webhooks served on the host, and that each component module has the harness's interface.

The release files themselves are read from the Go module cache when `go` has them (after
`tests/live/cluster up --with ...` built the components); without them those cases skip.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .conftest import ROOT

# `tests/live/cluster` runs the harness as the package `harness` of tests/live (tests/live.py
# holds the name `tests.live`), and so does this test.
sys.path.insert(0, str(ROOT / "tests" / "live"))
addons = importlib.import_module("harness.addons")
volcano = importlib.import_module("harness.components.volcano")
releases = importlib.import_module("harness.releases")

COMPONENTS = ["jobset", "kueue", "volcano", "trainer", "kwok", "argocd"]
STREAM = """# a comment before the first document
---
apiVersion: v1
kind: Namespace
metadata:
  labels:
    name: x
  name: jobset-system
---
# only a comment
---
apiVersion: apps/v1
kind: Deployment
metadata:
  # the name comes after a comment and a nested map
  annotations:
    a: b
  name: "manager"
  namespace: jobset-system
spec:
  template:
    spec:
      containers:
        - args:
            - --enable-healthz=true
            - --port=8443
            - --tls-cert-file=/admission.local.config/certificates/tls.crt
            - --logtostderr
          name: manager
"""


def test_documents_are_split_and_named_by_kind_and_metadata_name() -> None:
    docs = addons.documents(STREAM)
    assert [addons.kind_and_name(d) for d in docs] == [("Namespace", "jobset-system"), ("Deployment", "manager")]
    assert addons.select(STREAM, lambda kind, name: kind == "Deployment") == docs[:1]


def test_release_arguments_keep_the_release_settings_and_drop_what_the_host_sets() -> None:
    deployment = addons.documents(STREAM)[1]
    assert volcano.release_args(deployment) == ["--enable-healthz=true", "--logtostderr"]


def test_a_host_service_leads_each_named_port_to_the_node() -> None:
    service, endpoints = (json.loads(d) for d in addons.host_service(
        "hook", "ns", "192.0.2.7", {"webhook": (443, 19445), "status": (10443, 18447)}))
    assert "selector" not in service["spec"], "a Service with a selector would get the cluster's own endpoints"
    assert service["spec"]["ports"] == [
        {"name": "webhook", "port": 443, "protocol": "TCP", "targetPort": 19445},
        {"name": "status", "port": 10443, "protocol": "TCP", "targetPort": 18447}]
    assert endpoints["metadata"]["labels"]["kubernetes.io/service-name"] == "hook"
    assert endpoints["endpoints"] == [{"addresses": ["192.0.2.7"], "conditions": {"ready": True}}]
    assert [(p["name"], p["port"]) for p in endpoints["ports"]] == [("webhook", 19445), ("status", 18447)]


def test_a_host_service_has_v1_endpoints_for_a_release_whose_api_server_reads_them() -> None:
    """Kubernetes 1.30's API server found no webhook behind a Service with an EndpointSlice
    alone ('endpoints "volcano-admission-service" not found'); 1.34 on read the slices."""
    assert releases.resolves_services_by_endpoints("1.30") and releases.resolves_services_by_endpoints("1.33")
    assert not releases.resolves_services_by_endpoints("1.34") and not releases.resolves_services_by_endpoints("1.37")
    *_, endpoints = (json.loads(d) for d in addons.host_service(
        "hook", "ns", "192.0.2.7", {"webhook": (443, 19445)}, endpoints=True))
    assert (endpoints["kind"], endpoints["metadata"]["name"]) == ("Endpoints", "hook")
    assert endpoints["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    assert endpoints["subsets"] == [{"addresses": [{"ip": "192.0.2.7"}],
                                     "ports": [{"name": "webhook", "port": 19445, "protocol": "TCP"}]}]


class _RecordingHarness:
    """The parts of the harness `install_with_host_webhook` uses, recording what it applies."""

    node_ip = "192.0.2.7"

    def __init__(self, release: str | None = None) -> None:
        self.applied: list[list[tuple[str, str]]] = []
        self.etc = Path(tempfile.mkdtemp())
        if release is not None:
            (self.etc / "kube-version").write_text(release)

    def kubectl(self, *args: str, input: str = "") -> str:
        if args[0] == "apply":
            self.applied.append([addons.kind_and_name(d) for d in addons.documents(input)])
            return ""
        if args[:2] == ("get", "crd"):
            established = {"status": {"conditions": [{"type": "Established", "status": "True"}]}}
            return json.dumps({"kind": "List", "items": [established for _ in args[2:-2]]})
        return ""  # `get service`: none yet

    def wait_for(self, what: str, check: object, timeout: float) -> None:
        assert callable(check) and check(), what


def test_a_release_is_applied_namespaces_and_crds_first_then_with_its_webhook_led_to_the_host() -> None:
    h = _RecordingHarness()
    # As a release writes them (YAML) and as the harness does (JSON).
    docs = ["apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: jobs.example.org\n",
            addons.as_document({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "example-system"}})]
    addons.install_with_host_webhook(h, docs, ("jobs.example.org",), "hook", "example-system",
                                     {"https": (443, 19443)})
    first, second = h.applied
    assert first == [("CustomResourceDefinition", "jobs.example.org"), ("Namespace", "example-system")]
    assert second == [("ConfigMap", "settings"), ("CustomResourceDefinition", "jobs.example.org"),
                      ("Namespace", "example-system"), ("Service", "hook"), ("EndpointSlice", "hook-host")]
    older = _RecordingHarness("1.30")
    addons.install_with_host_webhook(older, docs, ("jobs.example.org",), "hook", "example-system",
                                     {"https": (443, 19443)})
    assert older.applied[1][-3:] == [("Service", "hook"), ("EndpointSlice", "hook-host"), ("Endpoints", "hook")]


@pytest.mark.parametrize("component", ["jobset", "kueue", "trainer"])
def test_a_controller_runtime_configuration_uses_the_harness_ports_and_one_replica(component: str) -> None:
    settings = addons.controller_settings(component)
    ports = addons.PORTS[component]
    assert settings["leaderElection"] == {"leaderElect": False}
    assert settings["webhook"]["port"] == ports["webhook"]
    assert settings["metrics"]["bindAddress"] == f":{ports['metrics']}"
    assert settings["health"]["healthProbeBindAddress"] == f":{ports['health']}"


def test_host_ports_do_not_collide() -> None:
    ports = [port for component in addons.PORTS.values() for port in component.values()]
    assert len(ports) == len(set(ports)), addons.PORTS
    control_plane = {2379, 2380, 6443, 10248, 10249, 10250, 10256, 10257, 10259}
    assert not control_plane & set(ports)


@pytest.mark.parametrize("name", COMPONENTS)
def test_each_component_has_the_harness_interface_and_a_go_module(name: str) -> None:
    component = importlib.import_module(f"harness.components.{name}")
    assert component.NAME == name
    for function in ("build", "up", "down", "status"):
        assert callable(getattr(component, function)), f"{name}.{function}"
    go_mod = addons.GO_DIR / name / "go.mod"
    assert go_mod.exists() and (addons.GO_DIR / name / "go.sum").exists()
    assert f"tool {component.MODULE}" in go_mod.read_text() or f"\t{component.MODULE}" in go_mod.read_text()


def _release(component: str, module: str) -> Path:
    if not shutil.which("go"):
        pytest.skip("go is not on the PATH")
    try:
        info = subprocess.run(["go", "list", "-m", "-json", module], cwd=addons.GO_DIR / component,
                              capture_output=True, text=True, check=True, timeout=60,
                              env={**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod"})
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        pytest.skip(f"go cannot list {module}: {error}")
    directory = json.loads(info.stdout).get("Dir")
    if not directory or not Path(directory).exists():
        pytest.skip(f"{module} is not in the Go module cache (tests/live/cluster up --with {component} brings it)")
    return Path(directory)


def test_volcano_release_manifest_has_what_the_harness_replaces() -> None:
    directory = _release("volcano", volcano.MODULE)
    docs = addons.documents((directory / "installer" / "volcano-development.yaml").read_text())
    named = {addons.kind_and_name(d) for d in docs}
    for deployment in volcano.DEPLOYMENTS:
        assert ("Deployment", deployment) in named
    assert ("Service", volcano.WEBHOOK_SERVICE) in named
    assert ("ConfigMap", "volcano-scheduler-configmap") in named and ("ConfigMap", "volcano-admission-configmap") in named
    scheduler = next(d for d in docs if addons.kind_and_name(d) == ("Deployment", "volcano-scheduler"))
    assert "--leader-elect=false" in volcano.release_args(scheduler)
