"""The images the node runs, made here since no image registry is reachable.

- the pod sandbox (`registry.k8s.io/pause:<v>`): our own pause program (tests/live/go/pause);
- `localhost/msgen-debian:bookworm`: a Debian root filesystem from debootstrap, with Python 3
  and pip, the base of the others (it stands in for `python:3.11-slim`: Python 3.11 with pip,
  installing into the system Python allowed);
- `localhost/mindspore-cpu:2.10.0`: MindSpore 2.10.0's CPU wheel from PyPI with numpy<2
  (its C++ extension is built against NumPy 1.x's C API and fails to start with numpy 2), also
  tagged under the image names the samples use, so they run unchanged; and
  `localhost/mindspore-cpu:<release>` for each other release `up --mindspore-version` names
  (every release 2.7.0 to 2.10.0 the package index serves; 2.7 also needs numpy<2), made the
  same way from that release's wheels, for the training suite's `MSGEN_LIVE_MINDSPORE`;
- msgen's own images, built by buildah from `overlays/controller/Dockerfile` and
  `overlays/argocd/Dockerfile` exactly as a user builds them, on the base above.

Each is built once (its tarball under images/ kept) and imported into containerd when missing.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from .core import CONTAINERD_SOCKET, GO_MODULES, Harness, HarnessError

PAUSE = "registry.k8s.io/pause:3.10.1"
DEBIAN = "localhost/msgen-debian:bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
DEBIAN_PACKAGES = "python3,python3-pip,python-is-python3,ca-certificates,procps,iproute2,libgomp1"
LOCAL_CAS = "/usr/local/share/ca-certificates"
MINDSPORE_RELEASE = "2.10.0"
MINDSPORE = f"localhost/mindspore-cpu:{MINDSPORE_RELEASE}"
#: The releases `up --mindspore-version` builds an image of (the package index's, Python 3.11).
MINDSPORE_RELEASES = ("2.7.0", "2.7.1", "2.7.1.post1", "2.7.2", "2.8.0", "2.9.0", "2.10.0")
#: The names the samples (and tests/live_cluster.py) use for a MindSpore image.
MINDSPORE_ALIASES = (
    "docker.io/mindspore/mindspore-cpu:2.2.14",
    "docker.io/mindspore/mindspore-gpu-cuda11.6:2.2.14",
    "swr.cn-south-1.myhuaweicloud.com/mindspore/mindspore:2.2.14-ascend",
    "swr.cn-south-1.myhuaweicloud.com/mindspore/mindspore:2.3.0-ascend",
    "swr.cn-south-1.myhuaweicloud.com/mindspore/mindspore:2.4.0-ascend",
)
CONTROLLER = "docker.io/library/msgen-controller:0.1.0"
CMP = "docker.io/library/msgen-cmp:0.1.0"
CONTAINERFILES = Path(__file__).resolve().parent / "containerfiles"


def _buildah_has(ref: str) -> bool:
    return subprocess.run(["buildah", "inspect", "--type", "image", ref], capture_output=True).returncode == 0


def _from_scratch(h: Harness, ref: str, content: list[tuple[Path, str]], config: list[str],
                  run: list[str] | None = None) -> None:
    """An image of `content` ((host path, image path); a .tar is unpacked) committed into buildah,
    after `run` ran in it."""
    container = h.sh(["buildah", "from", "scratch"]).strip()
    try:
        for source, target in content:
            verb = "add" if source.suffix == ".tar" else "copy"
            h.sh(["buildah", verb, container, str(source), target], log="buildah")
        if run:
            h.sh(["buildah", "run", "--isolation", "chroot", container, "--", *run], log="buildah")
        h.sh(["buildah", "config", *config, container], log="buildah")
        h.sh(["buildah", "commit", "--quiet", container, ref], log="buildah")
    finally:
        h.sh(["buildah", "rm", container], check=False)


def _save(h: Harness, ref: str) -> Path:
    tarball = h.images / (ref.rsplit("/", 1)[-1].replace(":", "-") + ".tar")
    if not tarball.exists():
        h.sh(["buildah", "push", ref, f"docker-archive:{tarball}.new:{ref}"], log="buildah")
        (h.images / f"{tarball.name}.new").rename(tarball)
    return tarball


def pause(h: Harness) -> Path:
    binary = h.go_build(GO_MODULES / "pause", ".", h.bin / "pause")
    if _binary_image(h, PAUSE, binary, "/pause", ["--entrypoint", '["/pause"]', "--user", "65535:65535"]):
        (h.images / (PAUSE.rsplit("/", 1)[-1].replace(":", "-") + ".tar")).unlink(missing_ok=True)
    return _save(h, PAUSE)


def _binary_image(h: Harness, ref: str, binary: Path, path: str, config: list[str]) -> bool:
    """A one-binary image `ref` in buildah's storage, remade when the binary changed; True then."""
    stamp = h.images / (ref.rsplit("/", 1)[-1].replace(":", "-") + ".binary")
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()
    if _buildah_has(ref) and stamp.exists() and stamp.read_text() == digest:
        return False
    h.sh(["buildah", "rmi", "--force", ref], check=False)
    _from_scratch(h, ref, [(binary, path)], config)
    stamp.write_text(digest)
    return True


def debian(h: Harness) -> None:
    """`localhost/msgen-debian:bookworm` in buildah's storage (debootstrap's root, as a tarball)."""
    if _buildah_has(DEBIAN):
        return
    root = h.images / "debian-bookworm"
    tarball = h.images / "debian-bookworm-rootfs.tar"
    if not tarball.exists():
        shutil.rmtree(root, ignore_errors=True)
        h.log("debootstrap bookworm (a few minutes)")
        h.sh(["debootstrap", "--variant=minbase", f"--include={DEBIAN_PACKAGES}", "bookworm", str(root), DEBIAN_MIRROR],
             log="debootstrap")
        # pip installs into the system Python, as in the python:3.11-slim image the Dockerfiles name
        (root / "usr/lib/python3.11/EXTERNALLY-MANAGED").unlink(missing_ok=True)
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for item in (root / cache).glob("*"):
                if item.is_file():
                    item.unlink()
        h.sh(["tar", "-C", str(root), "--numeric-owner", "-cf", f"{tarball}.new", "."])
        Path(f"{tarball}.new").rename(tarball)
        shutil.rmtree(root)
    # The machine's own CA certificates (a TLS-inspecting proxy's, as on msgen's build machines)
    # go in too: pip in a Dockerfile's RUN reaches PyPI through the same network as the host.
    local_cas = sorted(Path(LOCAL_CAS).glob("*.crt"))
    _from_scratch(h, DEBIAN, [(tarball, "/"), *((ca, f"{LOCAL_CAS}/{ca.name}") for ca in local_cas)],
                  ["--cmd", '["python3"]', "--env", "LANG=C.UTF-8"],
                  ["update-ca-certificates"] if local_cas else None)


def mindspore_image(release: str) -> str:
    return f"localhost/mindspore-cpu:{release}"


def mindspore(h: Harness, release: str = MINDSPORE_RELEASE) -> Path:
    """MindSpore's CPU image of `release`: its wheels downloaded by the host's pip, installed
    offline (`containerfiles/mindspore`)."""
    if release not in MINDSPORE_RELEASES:
        raise HarnessError(f"MindSpore {release}: accepted: {', '.join(MINDSPORE_RELEASES)}")
    ref = mindspore_image(release)
    tarball = h.images / (ref.rsplit("/", 1)[-1].replace(":", "-") + ".tar")
    if tarball.exists():
        return tarball
    debian(h)
    # the default's directory keeps its first name, so a harness built before keeps its wheels
    name = "wheels-mindspore" if release == MINDSPORE_RELEASE else f"wheels-mindspore-{release}"
    wheels = h.images / name
    wheels.mkdir(exist_ok=True)
    h.log(f"downloading MindSpore {release}'s wheels from PyPI")
    h.sh(["python3", "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--python-version", "3.11",
          "--implementation", "cp", "--abi", "cp311", "--platform", "manylinux2014_x86_64",
          "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux_2_28_x86_64", "--platform", "linux_x86_64",
          "-d", str(wheels), f"mindspore=={release}", "numpy<2"], log=name)
    h.sh(["buildah", "bud", "--isolation", "chroot", "--pull=never", "--layers=false",
          "--build-arg", f"BASE={DEBIAN}", "--build-arg", f"WHEELS={name}", "--build-arg", f"MINDSPORE={release}",
          "-f", str(CONTAINERFILES / "mindspore"), "-t", ref, str(h.images)], log=f"image-mindspore-{release}")
    h.sh(["buildah", "push", ref, f"docker-archive:{tarball}.new:{ref}"], log=f"image-mindspore-{release}")
    Path(f"{tarball}.new").rename(tarball)
    return tarball


def mindspore_releases(h: Harness, releases: list[str], sockets: list[str] | None = None) -> str:
    """The images of `releases` built and imported into node 1's containerd (or each one at
    `sockets`: `up --mindspore-version`, node.mindspore_releases); their names, comma-separated,
    for MSGEN_TEST_MINDSPORE_IMAGES."""
    refs = []
    for release in releases:
        tarball = mindspore(h, release)
        ref = mindspore_image(release)
        for socket in sockets or [CONTAINERD_SOCKET]:
            if not h.image_present(ref, socket):
                h.import_image(tarball, socket)
        refs.append(ref)
    return ",".join(refs)


KUSTOMIZE = "localhost/kustomize:v5.5.0"


def kustomize(h: Harness) -> bool:
    """The image overlays/argocd/Dockerfile's first stage copies /app/kustomize from (KUSTOMIZE
    build argument), as registry.k8s.io's kustomize image holds it: our build of the same release."""
    version = KUSTOMIZE.rsplit(":", 1)[1]
    binary = h.go_build(GO_MODULES / "kustomize", "sigs.k8s.io/kustomize/kustomize/v5", h.bin / "kustomize-v5",
                        [f"-X sigs.k8s.io/kustomize/api/provenance.version={version}"])
    return _binary_image(h, KUSTOMIZE, binary, "/app/kustomize", ["--entrypoint", '["/app/kustomize"]'])


def source_digest(repo: Path) -> str:
    """12 hex digits of what an image of msgen is built from: the package, its samples, pyproject
    and the pins (a changed checkout gets a new image)."""
    digest = hashlib.sha256()
    paths = [*(repo / "msgen").rglob("*"), *(repo / "samples").rglob("*"), repo / "pyproject.toml",
             repo / ".ci" / "constraints.txt", *(repo / "overlays").glob("*/Dockerfile")]
    for path in sorted(paths):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def msgen_image(h: Harness, ref: str, dockerfile: Path, build_args: dict[str, str], also: str = "") -> str:
    """One of msgen's Dockerfiles built by buildah from the checkout, as a user builds it, on the
    harness's base images, and imported into containerd as `ref` and `<ref's name>:src-<digest>`
    (the tag says which sources an imported image has; an image of the same sources is reused)."""
    digest = source_digest(h.repo)
    if also:
        digest = hashlib.sha256(f"{digest}\0{also}".encode()).hexdigest()[:12]
    source_ref = f"{ref.rsplit(':', 1)[0]}:src-{digest}"
    if h.image_present(source_ref):
        h.tag_image(source_ref, ref)
        return source_ref
    debian(h)
    name = ref.rsplit("/", 1)[-1].split(":")[0]
    tarball = h.images / f"{name}.tar"
    argv = ["buildah", "bud", "--isolation", "chroot", "--pull=never", "--layers=false", "-f", str(dockerfile), "-t", ref]
    for key, value in {"BASE": DEBIAN, **build_args}.items():
        argv += ["--build-arg", f"{key}={value}"]
    h.log(f"building {ref} from {dockerfile.relative_to(h.repo)} (log {h.logs}/image-{name}.log)")
    h.sh([*argv, str(h.repo)], log=f"image-{name}")
    tarball.unlink(missing_ok=True)
    h.sh(["buildah", "push", ref, f"docker-archive:{tarball}:{ref}"], log=f"image-{name}")
    h.import_image(tarball)
    h.tag_image(ref, source_ref)
    return source_ref


def controller(h: Harness) -> str:
    return msgen_image(h, CONTROLLER, h.repo / "overlays" / "controller" / "Dockerfile", {})


def cmp(h: Harness) -> str:
    kustomize(h)
    binary = (h.images / (KUSTOMIZE.rsplit("/", 1)[-1].replace(":", "-") + ".binary")).read_text()
    return msgen_image(h, CMP, h.repo / "overlays" / "argocd" / "Dockerfile", {"KUSTOMIZE": KUSTOMIZE},
                       also=binary)  # a new kustomize makes a new image of the same msgen sources


def build(h: Harness) -> None:
    pause(h)
    mindspore(h)
    kustomize(h)


def load(h: Harness, socket: str = CONTAINERD_SOCKET) -> None:
    """Import what a node's containerd (node 1's, or the one at `socket`) is missing (after a
    `ctr images rm`, or a fresh containerd)."""
    for ref, tarball, aliases in ((PAUSE, pause(h), ()), (MINDSPORE, mindspore(h), MINDSPORE_ALIASES)):
        if not h.image_present(ref, socket):
            h.import_image(tarball, socket)
        missing = [alias for alias in aliases if not h.image_present(alias, socket)]
        if missing:
            h.tag_image(ref, *missing, socket=socket)
