"""Helm 3 and Helm 4, built from the Go module proxy, for msgen's Helm post-renderer tests.

`tests/live/cluster up --with helm` builds them into the harness's `bin/` and prints
`MSGEN_TEST_HELM=<helm 3>` and `MSGEN_TEST_HELM4=<helm 4>`; without the harness,
`python tests/live/harness/components/helm.py build [BIN_DIR]` builds the same two binaries
(default `$MSGEN_HARNESS_HOME/bin`, else `/root/.cache/msgen-harness/bin`), which is where
`tests/test_helm.py` looks for them. Each is `go build` of the module's own `cmd/helm` in a
module directory that pins it and every dependency (`tests/live/go/helm`: helm.sh/helm/v3;
`tests/live/go/helm4`: helm.sh/helm/v4), with the version Helm's release build writes in
(`-X .../internal/version.version`), so `helm version` says what was built. About 2 CPU
minutes each; a stamp beside a binary skips a build whose inputs did not change.

Self-contained: it uses the harness's `go_build` and `log` when `h` has them (the harness
core), and builds the same way itself otherwise.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

NAME = "helm"
REPO = Path(__file__).resolve().parents[4]
GO_MODULES = REPO / "tests" / "live" / "go"
#: binary name → (module directory, Go module, package)
BUILDS = {
    "helm": (GO_MODULES / "helm", "helm.sh/helm/v3", "helm.sh/helm/v3/cmd/helm"),
    "helm4": (GO_MODULES / "helm4", "helm.sh/helm/v4", "helm.sh/helm/v4/cmd/helm"),
}
DEFAULT_BIN = Path(os.environ.get("MSGEN_HARNESS_HOME", "/root/.cache/msgen-harness")) / "bin"


def pinned(module_dir: Path, module: str) -> str:
    """The version the module directory's go.mod requires of `module`."""
    found = re.search(rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)", (module_dir / "go.mod").read_text(), re.M)
    if not found:
        raise ValueError(f"{module_dir}/go.mod does not require {module}")
    return found.group(1)


def _bin(h: Any) -> Path:
    return Path(getattr(h, "bin", None) or DEFAULT_BIN)


def _log(h: Any, message: str) -> None:
    log = getattr(h, "log", None)
    if callable(log):
        log(message)
    else:
        print(f"[helm] {message}", file=sys.stderr, flush=True)


def build_one(h: Any, name: str) -> Path:
    module_dir, module, package = BUILDS[name]
    version = pinned(module_dir, module)
    flags = [f"-X {module}/internal/version.version={version}", f"-X {module}/internal/version.gitTreeState=clean"]
    out = _bin(h) / name
    go_build = getattr(h, "go_build", None)
    if callable(go_build):
        return Path(go_build(module_dir, package, out, flags))
    return _go_build(h, module_dir, package, out, flags)


def _go_build(h: Any, module_dir: Path, package: str, out: Path, ldflags: list[str]) -> Path:
    """`go build` as the harness core does it: pinned module, read-only, stamped."""
    flags = ["-s", "-w", *ldflags]
    digest = hashlib.sha256(f"{package}\0{' '.join(flags)}".encode())
    for path in sorted(module_dir.iterdir()):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    stamp = out.with_name(out.name + ".stamp")
    if out.exists() and stamp.exists() and stamp.read_text() == digest.hexdigest():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    _log(h, f"building {out} ({package} as {module_dir.name}/go.mod pins it)")
    env = {**os.environ, "GOFLAGS": "-trimpath -mod=readonly", "CGO_ENABLED": "0", "GOTOOLCHAIN": "local"}
    subprocess.run(["nice", "-n", "5", "go", "build", "-ldflags", " ".join(flags), "-o", f"{out}.new", package],
                   cwd=module_dir, env=env, check=True)
    os.replace(f"{out}.new", out)
    stamp.write_text(digest.hexdigest())
    return out


def build(h: Any) -> None:
    for name in BUILDS:
        build_one(h, name)


def up(h: Any) -> dict[str, str]:
    """Helm talks to the cluster through the kubeconfig it is given: nothing to install."""
    build(h)
    return {"MSGEN_TEST_HELM": str(_bin(h) / "helm"), "MSGEN_TEST_HELM4": str(_bin(h) / "helm4")}


def down(h: Any) -> None:
    """Nothing runs: the binaries stay for the next `up`."""


def status(h: Any) -> str:
    found = []
    for name in BUILDS:
        path = _bin(h) / name
        if path.exists():
            shown = subprocess.run([str(path), "version", "--short"], capture_output=True, text=True).stdout.strip()
            found.append(f"{name} {shown or '?'}")
        else:
            found.append(f"{name} not built")
    return ", ".join(found)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[1] != "build":
        raise SystemExit("usage: python tests/live/harness/components/helm.py build [BIN_DIR]")

    class _Standalone:
        bin = Path(sys.argv[2]) if len(sys.argv) == 3 else DEFAULT_BIN

    build(_Standalone())
    print(status(_Standalone()))
