"""Tests that need the reference material skip, naming it, when a clone has none."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

import pytest
import yaml

from . import upstream_crds
from .conftest import SHARED, shared, shared_glob


def test_missing_reference_material_skips_with_its_name() -> None:
    with pytest.raises(pytest.skip.Exception, match=r"crds/no-such-crd\.yaml is missing"):
        shared("crds/no-such-crd.yaml")


def test_missing_reference_file_pattern_skips_with_its_name() -> None:
    if not SHARED.exists():
        pytest.skip(f"{SHARED} is missing")
    with pytest.raises(pytest.skip.Exception, match=r"no 999_\* in"):
        shared_glob("seeds", "999_*")


def _module_dir(module: str) -> str:
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in module)


def test_without_shared_a_crd_comes_from_the_go_module_cache_at_the_pinned_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh clone has no ../shared; a machine that built the harness has its modules. The
    CRD is read from the extracted module, or from its downloaded zip, at the version
    tests/live/go/<component>/go.mod pins; never downloaded."""
    monkeypatch.setattr(upstream_crds, "SHARED", tmp_path / "no-shared")
    cache = tmp_path / "gomodcache"
    monkeypatch.setenv("GOMODCACHE", str(cache))
    component, module, inside = upstream_crds.FROM_MODULES["jobset.x-k8s.io_jobsets.yaml"]
    version = upstream_crds.pinned_version(component, module)
    assert version is not None and version.startswith("v"), (component, module)
    extracted = cache / f"{_module_dir(module)}@{version}" / inside
    extracted.parent.mkdir(parents=True)
    extracted.write_text("kind: CustomResourceDefinition\nmetadata: {name: jobsets.jobset.x-k8s.io}\n")
    assert upstream_crds.crd_file("jobset.x-k8s.io_jobsets.yaml") == extracted
    # Only downloaded (a zip in cache/download), as `go mod download` leaves it.
    component, module, inside = upstream_crds.FROM_MODULES["trainer.kubeflow.org_trainjobs.yaml"]
    version = upstream_crds.pinned_version(component, module)
    assert version is not None
    archive = cache / "cache" / "download" / _module_dir(module) / "@v" / f"{version}.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr(f"{module}@{version}/{inside}", "kind: CustomResourceDefinition\n")
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    found = upstream_crds.crd_file("trainer.kubeflow.org_trainjobs.yaml")
    assert found.read_text() == "kind: CustomResourceDefinition\n"
    # Neither: the test skips, naming both places.
    with pytest.raises(pytest.skip.Exception, match=r"crds/batch\.volcano\.sh_jobs\.yaml.*Go module cache"):
        upstream_crds.crd_file("batch.volcano.sh_jobs.yaml")
    with pytest.raises(pytest.skip.Exception, match=r"no Go module the harness pins holds it"):
        upstream_crds.crd_file("mindspore.gitee.com_msjobs.yaml")


def test_the_pinned_versions_are_read_from_the_harness_go_mod_files() -> None:
    for name, (component, module, _inside) in upstream_crds.FROM_MODULES.items():
        version = upstream_crds.pinned_version(component, module)
        assert version is not None and version.startswith("v"), (name, component, module)
    assert upstream_crds.pinned_version("volcano", "volcano.sh/apis") == "v1.14.0"  # its replace wins


@pytest.mark.parametrize("name", sorted(upstream_crds.SERVED_FROM))
def test_a_crd_older_releases_refuse_holds_the_rule_they_refuse(name: str) -> None:
    """The live tests skip a CRD an older release refuses only for the reason its entry gives:
    the CRD must hold the rule that reason names."""
    # libyaml's loader where PyYAML has it: these CRDs run to megabytes, which the pure-Python
    # loader takes seconds over; both build the same tree.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    rules = [rule["rule"] for rule in _rules(yaml.load(upstream_crds.crd_file(name).read_text(), Loader=loader))]
    assert any("t.metadata.namespace" in rule for rule in rules), rules


def test_an_older_release_refusing_for_another_reason_or_a_newer_one_refusing_is_no_skip() -> None:
    refusal = "ERROR: <input>:1:68: undefined field 'namespace'"
    why = upstream_crds.refused_for_its_release("jobset.x-k8s.io_jobsets.yaml", (1, 30), refusal)
    assert why is not None and "Kubernetes 1.30 cannot serve the CRD jobset.x-k8s.io_jobsets.yaml" in why
    assert upstream_crds.refused_for_its_release("jobset.x-k8s.io_jobsets.yaml", (1, 32), refusal) is None
    assert upstream_crds.refused_for_its_release("jobset.x-k8s.io_jobsets.yaml", (1, 30), "forbidden") is None
    assert upstream_crds.refused_for_its_release("batch.volcano.sh_jobs.yaml", (1, 28), refusal) is None


def _rules(node: object) -> list[dict[str, str]]:
    if isinstance(node, dict):
        return list(node.get("x-kubernetes-validations") or []) + [r for v in node.values() for r in _rules(v)]
    if isinstance(node, list):
        return [r for v in node for r in _rules(v)]
    return []
