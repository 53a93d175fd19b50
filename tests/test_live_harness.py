"""The live harness's parts that need no cluster: its pins agree with each other, its
configuration templates fill, its components have the interface `tests/live/cluster` calls.

(The harness itself runs on a machine by `tests/live/cluster up`; the live suites test it.)
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import ROOT

LIVE = ROOT / "tests" / "live"
GO = LIVE / "go"


def harness(module: str) -> ModuleType:
    """tests/live/harness/<module> (the package is the `cluster` script's, not on sys.path)."""
    name = "msgen_live_harness"
    if name not in sys.modules:
        init = LIVE / "harness" / "__init__.py"
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"{name}.{module}")


@pytest.mark.parametrize("module", sorted(p.name for p in GO.iterdir() if p.is_dir()))
def test_every_go_build_is_pinned(module: str) -> None:
    directory = GO / module
    text = (directory / "go.mod").read_text()
    if re.search(r"^(require|tool)\b", text, re.M):
        assert (directory / "go.sum").is_file(), f"{directory}: go.sum pins what go.mod requires"
    assert re.search(r"^go 1\.\d+", text, re.M), f"{directory}/go.mod names no Go version"
    assert not re.search(r"=>\s*\.{0,2}/", text), f"{directory}/go.mod replaces a module with a local directory"


@pytest.mark.parametrize("name", ["containerd.toml", "kubelet.yaml", "kube-proxy.yaml", "kube-dns.yaml", "Corefile"])
def test_configuration_templates_fill(name: str, tmp_path: Path) -> None:
    core, node = harness("core"), harness("node")
    h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
    path = node._config(h, name, kubeconfig="/k")
    text = path.read_text()
    assert "{" not in text.replace("{{", "") or name == "Corefile", text
    assert not re.search(r"\{[a-z_]+\}", text), f"an unfilled placeholder in {name}"
    if name == "Corefile":
        assert "bind 192.0.2.7" in text and "kubeconfig /k" in text


def test_the_command_line_names_its_commands_without_root() -> None:
    done = subprocess.run([sys.executable, str(LIVE / "cluster"), "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for command in ("up", "down", "status"):
        assert command in done.stdout


def test_every_component_has_the_interface() -> None:
    components = harness("components")
    for name in components.available():
        module = components.load(name)
        assert module.NAME == name
        for function in ("build", "up", "down", "status"):
            assert callable(getattr(module, function)), f"{name}.{function}"
    with pytest.raises(harness("core").HarnessError, match="no component 'no-such'"):
        components.load("no-such")


def test_feature_gates_reach_the_control_plane_and_the_api_versions_they_serve(tmp_path: Path) -> None:
    core, features = harness("core"), harness("features")
    h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
    assert [features.flags(h, c) for c in features.COMPONENTS] == [[], [], []], "none chosen: the defaults"
    features.choose(h, type("Args", (), {"feature_gates": "GenericWorkload=true"})())
    assert features.flags(h, "kube-apiserver") == [
        "--feature-gates=GenericWorkload=true", "--runtime-config=scheduling.k8s.io/v1beta1=true"]
    assert features.flags(h, "kube-scheduler") == features.flags(h, "kube-controller-manager") == [
        "--feature-gates=GenericWorkload=true"]
    assert features.flags(h, "kubelet") == []
    features.choose(h, type("Args", (), {"feature_gates": "GenericWorkload=false"})())
    assert features.flags(h, "kube-apiserver") == ["--feature-gates=GenericWorkload=false"], "off: no API"
    with pytest.raises(core.HarnessError, match="accepted: Name=true|false"):
        features.choose(h, type("Args", (), {"feature_gates": "GenericWorkload"})())
    features.choose(h, type("Args", (), {"feature_gates": ""})())
    assert features.flags(h, "kube-apiserver") == []


def test_the_mindspore_images_are_the_releases_msgen_knows() -> None:
    from msgen.model import mindspore_versions

    releases = harness("images").MINDSPORE_RELEASES
    known = {mindspore_versions.parse(r) for r in releases}
    assert known == set(mindspore_versions.KNOWN), "an image for every release msgen renders for"
    assert harness("images").MINDSPORE_RELEASE == mindspore_versions.show(mindspore_versions.NEWEST)
