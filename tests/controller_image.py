"""The msgen controller's image for the live tests: overlays/controller/Dockerfile built from
this checkout by the live harness (`tests/live/cluster`, buildah on its own Debian base, no
registry, no container daemon) and imported into the node's containerd.

The image is `docker.io/library/msgen-controller:0.1.0` (the name overlays/controller deploys)
and also `msgen-controller:src-<digest of the sources>`, so a test can tell whether the
imported image is the checkout's (`source_tag`) and build it only when it is not.

    python -m tests.controller_image      (as root on the node; prints the source tag)
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _harness() -> ModuleType:
    """tests/live/harness as the package `msgen_live_harness` (tests/live.py takes the name
    tests.live, and the harness is not on sys.path: it is a script's package)."""
    name = "msgen_live_harness"
    if name not in sys.modules:
        init = ROOT / "tests" / "live" / "harness" / "__init__.py"
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return importlib.import_module(f"{name}.images")


images = _harness()

NAME = images.CONTROLLER


def source_tag() -> str:
    """`docker.io/library/msgen-controller:src-<12 hex>`: the sources the image is built from."""
    return f"{NAME.rsplit(':', 1)[0]}:src-{images.source_digest(ROOT)}"


def imported(ref: str) -> bool:
    done = subprocess.run(["ctr", "-n", "k8s.io", "images", "ls", "-q"], capture_output=True, text=True)
    return done.returncode == 0 and ref in done.stdout.split()


def buildable() -> str:
    """Why the image cannot be built here, or "" when it can."""
    done = subprocess.run(["buildah", "inspect", "--type", "image", images.DEBIAN], capture_output=True)
    if done.returncode != 0:
        return f"no base image {images.DEBIAN} in buildah's storage: start the harness (tests/live/cluster up)"
    return ""


def build() -> str:
    """Build and import the image; returns its source tag."""
    return str(images.controller(importlib.import_module("msgen_live_harness.core").Harness()))


if __name__ == "__main__":
    print(build())
