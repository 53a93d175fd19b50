"""Build the msgen controller's image without a registry or a container daemon, and import
it into a node's containerd: what overlays/controller/Dockerfile does, for a test cluster.

Given a root filesystem with Python 3 and pip (the Dockerfile's base image, unpacked), it
copies it, installs this checkout's wheel with the `apply` extra (pinned by
.ci/constraints.txt, downloaded by the host's pip, installed offline by the root's own pip),
turns it into a docker-archive with an image maker (`mkimage.py ROOTFS OUT.tar NAME` with
--entrypoint/--user/--workdir, as the test cluster kit's) and imports it with `ctr -n
k8s.io images import`. The image runs `msgen` as user 999 in /tmp, as the Dockerfile's.

    python -m tests.controller_image ROOTFS --mkimage PATH [--without DIR]... [--name REF]

The image also gets the tag `msgen-controller:src-<hash of the package's sources>`, so a
caller can tell whether the imported image is the checkout's (`source_tag`).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "docker.io/library/msgen-controller:0.1.0"


def source_tag() -> str:
    """`docker.io/library/msgen-controller:src-<12 hex>`: the sources the image was built from."""
    digest = hashlib.sha256()
    for path in sorted([*(ROOT / "msgen").rglob("*"), ROOT / "pyproject.toml"]):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return f"docker.io/library/msgen-controller:src-{digest.hexdigest()[:12]}"


def imported(ref: str) -> bool:
    done = subprocess.run(["ctr", "-n", "k8s.io", "images", "ls", "-q"], capture_output=True, text=True)
    return done.returncode == 0 and ref in done.stdout.split()


def build(rootfs: Path, mkimage: Path, *, without: list[str], name: str = NAME) -> str:
    """Build and import the image; returns its source tag."""
    tag = source_tag()
    with tempfile.TemporaryDirectory(prefix="msgen-image-") as scratch:
        work = Path(scratch)
        root = work / "rootfs"
        _copy(rootfs, root, without)
        wheels = root / "tmp" / "wheels"
        wheels.mkdir(parents=True, exist_ok=True)
        _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)])
        wheel = next(wheels.glob("msgen-*.whl"))
        _run([sys.executable, "-m", "pip", "download", "-q", "-d", str(wheels), "-c",
              str(ROOT / ".ci" / "constraints.txt"), f"{wheel}[apply]"])
        _run(["chroot", str(root), "python3", "-m", "pip", "install", "-q", "--no-index",
              "--break-system-packages", "--find-links", "/tmp/wheels", f"/tmp/wheels/{wheel.name}[apply]"])
        shutil.rmtree(wheels)
        _run(["chroot", str(root), "msgen", "--version"])
        archive = work / "image.tar"
        _run([sys.executable, str(mkimage), str(root), str(archive), name,
              "--entrypoint", '["msgen"]', "--user", "999:999", "--workdir", "/tmp"])
        _run(["ctr", "-n", "k8s.io", "images", "import", str(archive)])
        _run(["ctr", "-n", "k8s.io", "images", "tag", "--force", name, tag])
    return tag


def _copy(source: Path, target: Path, without: list[str]) -> None:
    """`source` into `target`, leaving out `without` (paths relative to the root)."""
    excluded = [arg for path in without for arg in ("--exclude", f"./{path.strip('/')}")]
    target.mkdir(parents=True)
    packed = subprocess.Popen(["tar", "-C", str(source), *excluded, "-cf", "-", "."], stdout=subprocess.PIPE)
    _run(["tar", "-C", str(target), "-xf", "-"], stdin=packed.stdout)
    if packed.wait() != 0:
        raise RuntimeError(f"copying {source} failed")


def _run(command: list[str], **kwargs: object) -> None:
    subprocess.run(command, check=True, **kwargs)  # type: ignore[call-overload]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rootfs", type=Path)
    parser.add_argument("--mkimage", type=Path, required=True)
    parser.add_argument("--without", action="append", default=[], help="a directory of the root to leave out")
    parser.add_argument("--name", default=NAME)
    args = parser.parse_args()
    print(build(args.rootfs, args.mkimage, without=args.without, name=args.name))


if __name__ == "__main__":
    main()
