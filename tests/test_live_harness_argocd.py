"""The harness's Argo CD installation, without a cluster: the kustomization it builds from the
release's own `manifests/install.yaml` and `overlays/argocd` (as docs/gitops.md says), with
the harness's images and no image pulls.

The release's manifests are read from the Go module cache when `go` has the module (after
`tests/live/cluster up --with argocd` built it); without it, or without kubectl, those cases
skip.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ROOT

#: Spread over the Pythons CI runs: its time is the real kustomize's, run as Argo CD's plugin runs it (tests/python_share.py).
pytestmark = pytest.mark.spread

sys.path.insert(0, str(ROOT / "tests" / "live"))
argocd = importlib.import_module("harness.components.argocd")

IMAGES = {"argocd": "localhost/argocd:v0-test", "redis": "localhost/argocd-redis:bookworm",
          "cmp": "docker.io/library/msgen-cmp:src-test"}


def test_pull_policy_always_becomes_if_not_present() -> None:
    text = "        imagePullPolicy: Always\n        imagePullPolicy: Never\n  imagePullPolicy:   Always # pull\n"
    assert argocd.no_pulls(text) == ("        imagePullPolicy: IfNotPresent\n        imagePullPolicy: Never\n"
                                     "  imagePullPolicy:   IfNotPresent # pull\n")


def test_release_images_are_found_by_what_they_run() -> None:
    text = "        image: quay.io/argoproj/argocd:v3.6.1\n        image: ghcr.io/dexidp/dex:v2.46.0\n" \
           "        image: public.ecr.aws/docker/library/redis:8.10.1-alpine\n"
    assert argocd.release_images(text) == {"argocd": "quay.io/argoproj/argocd", "dex": "ghcr.io/dexidp/dex",
                                           "redis": "public.ecr.aws/docker/library/redis"}


def _release() -> Path:
    if not shutil.which("go") or not shutil.which("kubectl"):
        pytest.skip("go or kubectl is not on the PATH")
    try:
        info = subprocess.run(["go", "list", "-m", "-json", argocd.MODULE], cwd=ROOT / "tests" / "live" / "go" / "argocd",
                              capture_output=True, text=True, check=True, timeout=60,
                              env={**os.environ, **argocd.go_env(), "GOPROXY": "off"})
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        pytest.skip(f"go cannot list {argocd.MODULE} ({argocd.TOOLCHAIN} and the module come from the Go module proxy): {error}")
    directory = Path(json.loads(info.stdout).get("Dir") or "/nonexistent")
    if not (directory / "manifests" / "install.yaml").exists():
        pytest.skip(f"{argocd.MODULE} is not in the Go module cache (tests/live/cluster up --with argocd brings it)")
    return directory


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    release = (_release() / "manifests" / "install.yaml").read_text()
    work = tmp_path_factory.mktemp("argocd-install")
    (work / "install.yaml").write_text(release)
    component = os.path.relpath(ROOT / "overlays" / "argocd", work)
    (work / "kustomization.yaml").write_text(json.dumps(argocd.kustomization(
        "install.yaml", component, IMAGES["argocd"], IMAGES["redis"], IMAGES["cmp"], argocd.release_images(release))))
    built = subprocess.run(["kubectl", "kustomize", str(work)], capture_output=True, text=True, check=True, timeout=120)
    return [d for d in yaml.safe_load_all(argocd.no_pulls(built.stdout)) if d]


def _containers(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found = {}
    for doc in docs:
        if doc["kind"] in ("Deployment", "StatefulSet"):
            pod = doc["spec"]["template"]["spec"]
            for container in [*pod.get("initContainers", []), *pod["containers"]]:
                found[f"{doc['metadata']['name']}/{container['name']}"] = container
    return found


def test_the_repo_server_gets_the_msgen_sidecar_and_argocd_cm_the_health_checks(installed: list[dict[str, Any]]) -> None:
    containers = _containers(installed)
    sidecar = containers["argocd-repo-server/msgen"]
    assert sidecar["image"] == IMAGES["cmp"] and sidecar["command"] == ["/var/run/argocd/argocd-cmp-server"]
    cm = next(d for d in installed if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "argocd-cm")
    for kind in ("batch_Job", "jobset.x-k8s.io_JobSet", "batch.volcano.sh_Job"):
        assert f"resource.customizations.health.{kind}" in cm["data"]
    plugin = next(d for d in installed if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "msgen-cmp-plugin")
    spec = yaml.safe_load(plugin["data"]["plugin.yaml"])  # the Applications name it <name>-<version>
    assert f"{spec['metadata']['name']}-{spec['spec']['version']}" == "msgen-v1"


def test_every_image_is_one_the_harness_makes_and_none_is_pulled(installed: list[dict[str, Any]]) -> None:
    containers = _containers(installed)
    dex = {name for name in containers if name.startswith("argocd-dex-server/dex")}
    for name, container in containers.items():
        assert container.get("imagePullPolicy", "IfNotPresent") != "Always", name
        if name not in dex:
            assert container["image"] in IMAGES.values(), (name, container["image"])
    deployments = {d["metadata"]["name"]: d for d in installed if d["kind"] == "Deployment"}
    assert deployments["argocd-dex-server"]["spec"]["replicas"] == 0


def test_everything_namespaced_is_in_argocd(installed: list[dict[str, Any]]) -> None:
    cluster_scoped = {"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding"}
    for doc in installed:
        if doc["kind"] not in cluster_scoped:
            assert doc["metadata"].get("namespace") == argocd.NAMESPACE, (doc["kind"], doc["metadata"]["name"])
    for binding in (d for d in installed if d["kind"] == "ClusterRoleBinding"):
        assert {s.get("namespace") for s in binding["subjects"]} == {argocd.NAMESPACE}
