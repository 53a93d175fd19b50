"""Argo CD (`github.com/argoproj/argo-cd/v3`) with msgen's Config Management Plugin, and a Git
server for the Applications the live tests create.

Unlike the other add-ons, Argo CD runs as pods, from the release's own `manifests/install.yaml`
(read from the module in the Go module cache at install time): `overlays/argocd` is a patch of
the `argocd-repo-server` Deployment (the msgen sidecar runs the `argocd-cmp-server` that the
release's init container copies into a shared volume), so the plugin runs as users run it only
inside that pod. Installed as `docs/gitops.md` says: a kustomization with the release's
manifests as a resource and `overlays/argocd` as a component, built by `kubectl kustomize`,
in the namespace `argocd` the manifests' RBAC expects. The harness adds what no registry can
give here:

- images: `quay.io/argoproj/argocd` is the `argocd` multi-call binary built from the pinned
  module (Go 1.27: `GOTOOLCHAIN`, see below) on the Debian base (`containerfiles/argocd`);
  Redis is Debian's `redis-server` (`containerfiles/redis`); the msgen sidecar is
  `overlays/argocd/Dockerfile` built by `images.cmp`. The kustomization renames the
  release's images to these with `images:` (an entry per image, as docs/gitops.md allows);
- `imagePullPolicy: Always` in the release's Deployments becomes `IfNotPresent`: a pull of
  any image fails on this machine, even of one containerd holds;
- Dex has no image (another project's release, and no login is needed): 0 replicas.

Git: `git daemon` (Debian's git) serves the bare repositories under `<home>/git` read-only on
the node IP, where the repo server's pod reaches it; the tests write there directly and Argo
CD clones `git://<node IP>:19418/<name>.git`. `up` prints them as `MSGEN_TEST_GIT_ROOT` and
`MSGEN_TEST_GIT_URL`.

Go: the release's go.mod says `go 1.27.0`; the machine's Go is 1.26, and the Go module proxy
serves the toolchain `go1.27.3`, which this build (and every `go` command run on this module)
selects with `GOTOOLCHAIN`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from .. import addons, images

NAME = "argocd"
MODULE = "github.com/argoproj/argo-cd/v3"
TOOLCHAIN = "go1.27.3"
NAMESPACE = "argocd"
BINARY = "argocd"
GIT_PORT = 19418
ARGOCD_IMAGE = "localhost/argocd"
REDIS_IMAGE = "localhost/argocd-redis:bookworm"
CONTAINERFILES = Path(__file__).resolve().parents[1] / "containerfiles"
#: The workloads the tests need ready; the others (server, notifications, ApplicationSets)
#: start too but nothing here waits for them.
NEEDED = (("deployment", "argocd-redis"), ("deployment", "argocd-repo-server"),
          ("statefulset", "argocd-application-controller"))


def go_env() -> dict[str, str]:
    return {"GOTOOLCHAIN": TOOLCHAIN, "GOFLAGS": "-trimpath -mod=readonly", "CGO_ENABLED": "0"}


def module() -> tuple[Path, str]:
    """The release's directory in the Go module cache and its version, as go.mod pins them."""
    where = addons.GO_DIR / NAME
    env = {**os.environ, **go_env()}
    subprocess.run(["go", "mod", "download", MODULE], cwd=where, env=env, check=True, capture_output=True, text=True)
    info = json.loads(subprocess.run(["go", "list", "-m", "-json", MODULE], cwd=where, env=env, check=True,
                                     capture_output=True, text=True).stdout)
    return Path(info["Dir"]), str(info["Version"])


def _ldflags(version: str) -> list[str]:
    """The release's own version variables (its Makefile's LDFLAGS), so `argocd version` and the
    Application's reconciler report v3.x, not v99.99.99."""
    client_go = subprocess.run(["go", "list", "-m", "k8s.io/client-go"], cwd=addons.GO_DIR / NAME,
                               env={**os.environ, **go_env()}, check=True, capture_output=True,
                               text=True).stdout.split()[-1]
    package = f"{MODULE}/common"
    return ["-s", "-w", *(f"-X {package}.{key}={value}" for key, value in (
        ("version", version.lstrip("v")), ("gitTag", version), ("gitTreeState", "clean"),
        ("buildDate", "1970-01-01T00:00:00Z"), ("gitCommit", version), ("kubectlVersion", client_go)))]


def build_binary(h: Any) -> tuple[Path, str]:
    """`bin/argocd`, unless built from the same go.mod, go.sum, flags and toolchain; returns it
    and 12 hex digits of what it was built from (the image's tag)."""
    _, version = module()
    flags = _ldflags(version)
    digest = hashlib.sha256(f"{TOOLCHAIN}\0{' '.join(flags)}".encode())
    for path in sorted((addons.GO_DIR / NAME).iterdir()):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    out = Path(h.bin) / BINARY
    stamp = out.with_name(out.name + ".stamp")
    if not (out.exists() and stamp.exists() and stamp.read_text() == digest.hexdigest()):
        h.log(f"building {BINARY} {version} with {TOOLCHAIN} (log {h.logs}/build-{BINARY}.log; about an hour the first time)")
        began = time.monotonic()
        h.sh(["nice", "-n", "15", "go", "build", "-ldflags", " ".join(flags), "-o", f"{out}.new", f"{MODULE}/cmd"],
             cwd=addons.GO_DIR / NAME, env=go_env(), log=f"build-{BINARY}")
        os.replace(f"{out}.new", out)
        stamp.write_text(digest.hexdigest())
        h.log(f"built {BINARY} in {time.monotonic() - began:.0f}s")
    return out, digest.hexdigest()[:12]


def argocd_image(h: Any) -> str:
    """The Argo CD image, tagged `<version>-<build digest>`: a new build is a new tag, so the
    Deployments roll when it changes."""
    binary, digest = build_binary(h)
    directory, version = module()
    ref = f"{ARGOCD_IMAGE}:{version}-{digest}"
    if h.image_present(ref):
        return ref
    images.debian(h)
    context = Path(h.images) / "argocd-context"
    shutil.rmtree(context, ignore_errors=True)
    context.mkdir(parents=True)
    shutil.copy2(binary, context / BINARY)
    for wrapper in ("gpg-wrapper.sh", "git-verify-wrapper.sh"):
        shutil.copy2(directory / "hack" / wrapper, context / wrapper)
        (context / wrapper).chmod(0o755)
    h.build_image(ref, CONTAINERFILES / "argocd", context, {"BASE": images.DEBIAN})
    shutil.rmtree(context, ignore_errors=True)
    return ref


def redis_image(h: Any) -> str:
    if not h.image_present(REDIS_IMAGE):
        images.debian(h)
        h.build_image(REDIS_IMAGE, CONTAINERFILES / "redis", CONTAINERFILES, {"BASE": images.DEBIAN})
    return REDIS_IMAGE


def build(h: Any) -> None:
    argocd_image(h)
    redis_image(h)
    images.cmp(h)


# --- Git ------------------------------------------------------------------------------------

def git_root(h: Any) -> Path:
    root = Path(h.home) / "git"
    root.mkdir(parents=True, exist_ok=True)
    return root


def git_url(h: Any) -> str:
    return f"git://{h.node_ip}:{GIT_PORT}/"


def start_git(h: Any) -> None:
    root = git_root(h)
    h.spawn("git-daemon", ["git", "daemon", "--reuseaddr", "--export-all", "--informative-errors",
                           f"--base-path={root}", f"--listen={h.node_ip}", f"--port={GIT_PORT}", str(root)])
    h.wait_for("git daemon", lambda: addons.port_open(GIT_PORT, h.node_ip), 30)


# --- install --------------------------------------------------------------------------------

_IMAGE = re.compile(r"^\s*image:\s*(\S+)\s*$", re.MULTILINE)


def release_images(manifests: str) -> dict[str, str]:
    """The release's images by what they run: `argocd`, `redis`, `dex` -> repository."""
    found: dict[str, str] = {}
    for image in _IMAGE.findall(manifests):
        repository = image.rsplit(":", 1)[0]
        for role in ("argocd", "redis", "dex"):
            if repository.rsplit("/", 1)[-1] == role:
                found[role] = repository
    return found


def kustomization(install: str, component: str, argocd: str, redis: str, cmp: str,
                  release: dict[str, str]) -> dict[str, Any]:
    """What a user writes to install Argo CD with msgen (docs/gitops.md, step 2), plus the
    harness's images."""
    def rename(repository: str, ref: str) -> dict[str, str]:
        name, tag = ref.rsplit(":", 1)
        return {"name": repository, "newName": name, "newTag": tag}

    cmp_name, cmp_tag = cmp.rsplit(":", 1)
    return {
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "namespace": NAMESPACE,
        "resources": [install],
        "components": [component],
        "images": [rename(release["argocd"], argocd), rename(release["redis"], redis),
                   {"name": "msgen-cmp", "newName": cmp_name, "newTag": cmp_tag}],
        "replicas": [{"name": "argocd-dex-server", "count": 0}],
    }


def no_pulls(manifests: str) -> str:
    return re.sub(r"(imagePullPolicy:\s*)Always\b", r"\1IfNotPresent", manifests)


def ready(h: Any, kind: str, name: str) -> bool:
    found = json.loads(h.kubectl("get", kind, name, "-n", NAMESPACE, "-o", "json"))
    status, spec = found.get("status") or {}, found.get("spec") or {}
    wanted = int(spec.get("replicas", 1))
    return (status.get("observedGeneration") == found["metadata"]["generation"]
            and int(status.get("updatedReplicas") or 0) == wanted and int(status.get("readyReplicas") or 0) == wanted)


def up(h: Any) -> dict[str, str]:
    start_git(h)
    directory, version = module()
    argocd, redis, cmp = argocd_image(h), redis_image(h), images.cmp(h)
    work = Path(h.home) / "addons" / NAME / "install"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    release = (directory / "manifests" / "install.yaml").read_text()
    (work / "install.yaml").write_text(release)
    component = os.path.relpath(h.repo / "overlays" / "argocd", work)
    (work / "kustomization.yaml").write_text(json.dumps(
        kustomization("install.yaml", component, argocd, redis, cmp, release_images(release)), indent=1))
    manifests = no_pulls(h.kubectl("kustomize", str(work)))
    h.kubectl("create", "namespace", NAMESPACE, check=False)
    docs = addons.documents(manifests)
    addons.apply(h, [d for d in docs if addons.kind_and_name(d)[0] == "CustomResourceDefinition"])
    addons.crds_established(h, "applications.argoproj.io", "appprojects.argoproj.io")
    addons.apply(h, docs)
    for kind, name in NEEDED:
        h.wait_for(f"{NAMESPACE}/{name}", lambda kind=kind, name=name: ready(h, kind, name), 600, every=3)
    return {"MSGEN_TEST_ARGOCD_NAMESPACE": NAMESPACE, "MSGEN_TEST_ARGOCD_VERSION": version,
            "MSGEN_TEST_GIT_ROOT": str(git_root(h)), "MSGEN_TEST_GIT_URL": git_url(h)}


def down(h: Any) -> None:
    h.stop("git-daemon")


def status(h: Any) -> str:
    states = []
    for kind, name in NEEDED:
        try:
            states.append(f"{name}: {'ready' if ready(h, kind, name) else 'not ready'}")
        except Exception:  # the harness's error, or no such object
            states.append(f"{name}: absent")
    states.append(f"git daemon: {'serving ' + git_url(h) if h.alive('git-daemon') else 'not running'}")
    return ", ".join(states)
