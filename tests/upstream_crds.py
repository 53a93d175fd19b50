"""The upstream CRDs the tests validate against: from `../shared/crds`, else from the Go module
cache, where the live harness's pinned modules already are.

`../shared` is reference material a contributor's clone does not have. Several of its CRDs are
files of Go modules that `tests/live/go/<component>/go.mod` pins (the harness installs them
into its cluster from the same files): on a machine that built the harness, or ran `go mod
download` in those directories, the module cache holds them at the pinned version. They are
read from there only: nothing is downloaded (the default test run reaches no network), and
`go` itself is not run with a go.mod, whose toolchain line could make it fetch a toolchain.
A CRD found in neither place skips the test that needs it, naming both.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT, SHARED

GO_MODULES = ROOT / "tests" / "live" / "go"

#: CRD file (its name in ../shared/crds) -> (tests/live/go/<component> whose go.mod pins the
#: module, the module, the file's path in it).
FROM_MODULES: dict[str, tuple[str, str, str]] = {
    "jobset.x-k8s.io_jobsets.yaml": (
        "jobset", "sigs.k8s.io/jobset", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"),
    "batch.volcano.sh_jobs.yaml": (
        "volcano", "volcano.sh/volcano", "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml"),
    "scheduling.volcano.sh_podgroups.yaml": (
        "volcano", "volcano.sh/volcano", "config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml"),
    "scheduling.x-k8s.io_podgroups.yaml": (
        "trainer", "sigs.k8s.io/scheduler-plugins", "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml"),
    "trainer.kubeflow.org_trainjobs.yaml": (
        "trainer", "github.com/kubeflow/trainer/v2", "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"),
    "trainer.kubeflow.org_trainingruntimes.yaml": (
        "trainer", "github.com/kubeflow/trainer/v2", "manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml"),
    "trainer.kubeflow.org_clustertrainingruntimes.yaml": (
        "trainer", "github.com/kubeflow/trainer/v2",
        "manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml"),
}


def pinned_version(component: str, module: str) -> str | None:
    """The version `tests/live/go/<component>/go.mod` pins `module` at (a `replace` wins)."""
    go_mod = GO_MODULES / component / "go.mod"
    if not go_mod.is_file():
        return None
    text = go_mod.read_text()
    name = re.escape(module)
    replaced = re.search(rf"^\s*(?:replace\s+)?{name}(?:\s+v\S+)?\s+=>\s+{name}\s+(v\S+)\s*$", text, re.M)
    if replaced:
        return replaced.group(1)
    required = re.search(rf"^\s*(?:require\s+)?{name}\s+(v\S+)", text, re.M)
    return required.group(1) if required else None


def module_cache() -> Path:
    """`go env GOMODCACHE`, asked outside any module (no go.mod: no toolchain switch), else
    Go's default ($GOMODCACHE, $GOPATH/pkg/mod, ~/go/pkg/mod)."""
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    try:
        done = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, timeout=30,
                              cwd=tempfile.gettempdir(), env={**os.environ, "GOTOOLCHAIN": "local",
                                                              "GOFLAGS": "", "GOPROXY": "off"})
        if done.returncode == 0 and done.stdout.strip():
            return Path(done.stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        pass
    gopath = os.environ.get("GOPATH", "").split(os.pathsep)[0] or str(Path.home() / "go")
    return Path(gopath) / "pkg" / "mod"


def _escaped(module: str) -> str:
    """The module path as the module cache spells it (an upper-case letter is `!` + lower)."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group().lower(), module)


def from_module_cache(name: str) -> tuple[Path | None, str]:
    """The CRD `name` read from the module cache (None when it is not there), and where it was
    looked for."""
    if name not in FROM_MODULES:
        return None, "no Go module the harness pins holds it"
    component, module, inside = FROM_MODULES[name]
    version = pinned_version(component, module)
    if version is None:
        return None, f"tests/live/go/{component}/go.mod pins no {module}"
    cache = module_cache()
    where = f"{module}@{version}/{inside} in the Go module cache {cache}"
    extracted = cache / f"{_escaped(module)}@{version}" / inside
    if extracted.is_file():
        return extracted, where
    archive = cache / "cache" / "download" / _escaped(module) / "@v" / f"{version}.zip"
    if not archive.is_file():
        return None, where
    copy = Path(tempfile.gettempdir()) / "msgen-test-crds" / f"{_escaped(module)}@{version}" / inside
    if not copy.is_file():  # the downloaded zip, not yet extracted by a build: read from it
        try:
            with zipfile.ZipFile(archive) as opened:
                text = opened.read(f"{module}@{version}/{inside}")
        except (KeyError, zipfile.BadZipFile, OSError):
            return None, where
        copy.parent.mkdir(parents=True, exist_ok=True)
        partial = copy.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(text)
        partial.replace(copy)
    return copy, where


def crd_file(name: str) -> Path:
    """The upstream CRD `name`: ../shared/crds/NAME (or $MSGEN_SHARED's), else the Go module
    cache's copy at the harness's pinned version; otherwise the calling test skips, naming both."""
    found, reason = crd_file_or_reason(name)
    if found is None:
        pytest.skip(reason)
    return found


def crd_file_or_reason(name: str) -> tuple[Path | None, str]:
    shared = SHARED / "crds" / name
    if shared.is_file():
        return shared, ""
    cached, where = from_module_cache(name)
    if cached is not None:
        return cached, ""
    origin = "$MSGEN_SHARED" if "MSGEN_SHARED" in os.environ else "../shared"
    return None, (f"{shared} is missing (this test needs the reference material at {origin}, crds/{name}),"
                  f" and so is {where} (tests/live/cluster up builds the harness, which brings it)")



#: `namespace` is a CEL reserved word: an API server reads it as a field name in a CRD's rule
#: only from CEL compatibility version 1.31 (k8s.io/apiserver pkg/cel/environment,
#: SetRecognizeKeywordAsFieldName), which a server takes by default from Kubernetes 1.32 (its
#: own minor less one); an older one refuses the CRD: "undefined field 'namespace'".
_NAMESPACE_RULE = (
    "its volumeClaimPolicies rule `self.templates.all(t, !has(t.metadata.namespace) ...)` (JobSet 0.11 on) "
    "reads a field named `namespace`, a CEL reserved word that API servers read as a field only from "
    "Kubernetes 1.32 (CEL compatibility version 1.31)"
)
#: CRD file -> (the oldest Kubernetes minor whose API server accepts it, what an older one's
#: refusal says, why, as the add-on states it). An older release refusing one of these is a fact
#: about the add-on: the tests that need the CRD skip, saying so. Any other refusal fails them.
SERVED_FROM: dict[str, tuple[tuple[int, int], str, str]] = {
    "jobset.x-k8s.io_jobsets.yaml": ((1, 32), "undefined field 'namespace'", (
        f"{_NAMESPACE_RULE}; JobSet supports the last three Kubernetes minors at its release "
        "(v0.12.0: 1.32 to 1.34, its README)")),
    "trainer.kubeflow.org_trainingruntimes.yaml": ((1, 32), "undefined field 'namespace'", (
        f"the JobSet spec it holds carries JobSet's rule: {_NAMESPACE_RULE}; Kubeflow Trainer's "
        "installation guide asks for Kubernetes 1.31 or newer, and v2.3's end-to-end tests run 1.32 to 1.35")),
    "trainer.kubeflow.org_clustertrainingruntimes.yaml": ((1, 32), "undefined field 'namespace'", (
        f"the JobSet spec it holds carries JobSet's rule: {_NAMESPACE_RULE}")),
}


def refused_for_its_release(name: str, server: tuple[int, int], refusal: str) -> str | None:
    """Why an API server of Kubernetes `server` refusing the CRD `name` with `refusal` is the
    add-on's requirement (what a test skips with), or None: a refusal the test must fail on."""
    known = SERVED_FROM.get(name)
    if known is None:
        return None
    first, says, why = known
    if server >= first or says not in refusal:
        return None
    return (f"Kubernetes {server[0]}.{server[1]} cannot serve the CRD {name} (it refuses it: {says!r}), "
            f"served from {first[0]}.{first[1]}: {why}")
