"""The Argo CD sidecar is hardened like the controller, bounded, and built from what CI tests.

It renders every application's repository, so a flaw there reaches every application: it runs
as a non-root user without privilege escalation, capabilities or a writable root filesystem,
under the runtime's seccomp profile, with CPU and memory limits. Both images install msgen
with the versions CI tests (.ci/constraints.txt), and the sidecar carries the kustomize the
tests build with.
"""

from __future__ import annotations

import re

import yaml

from .conftest import ROOT

HARDENED = {
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def sidecar() -> dict[str, object]:
    patch = yaml.safe_load((ROOT / "overlays" / "argocd" / "repo-server-patch.yaml").read_text())
    containers = patch["spec"]["template"]["spec"]["containers"]
    found: dict[str, object] = next(c for c in containers if c["name"] == "msgen")
    return found


def test_the_sidecar_is_hardened_and_bounded() -> None:
    container = sidecar()
    security = container["securityContext"]
    assert isinstance(security, dict)
    assert {k: security.get(k) for k in HARDENED} == HARDENED
    resources = container["resources"]
    assert isinstance(resources, dict)
    assert {"cpu", "memory"} <= set(resources["limits"]) and {"cpu", "memory"} <= set(resources["requests"])


def test_the_controller_is_hardened_alike() -> None:
    deployment = yaml.safe_load((ROOT / "overlays" / "controller" / "deployment.yaml").read_text())
    pod = deployment["spec"]["template"]["spec"]
    merged = {**pod["securityContext"], **pod["containers"][0]["securityContext"]}
    assert {k: merged.get(k) for k in HARDENED} == HARDENED


def test_images_install_the_versions_ci_tests() -> None:
    for image in ("argocd", "controller"):
        text = (ROOT / "overlays" / image / "Dockerfile").read_text()
        installs = [line for line in text.replace("\\\n", " ").splitlines() if "pip install" in line]
        assert installs and all(re.search(r"-c \S*constraints\.txt", line) for line in installs), image


def test_the_sidecar_carries_the_kustomize_the_tests_use() -> None:
    fetched = re.search(r"readonly VERSION=(\S+)", (ROOT / ".ci" / "fetch-kustomize").read_text())
    assert fetched is not None
    image = re.search(r"kustomize/kustomize:v(\S+)", (ROOT / "overlays" / "argocd" / "Dockerfile").read_text())
    assert image is not None and image.group(1).split("@")[0] == fetched.group(1)
