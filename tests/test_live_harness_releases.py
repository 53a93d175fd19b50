"""The live harness's Kubernetes releases (`tests/live/cluster up --kube-version X.Y`), checked
without a cluster: each release's module pins that release whole, each release gets only the
configuration fields and feature gates it knows, a home keeps its release, and a home beside
another cluster moves every port and refuses one that is taken.

The fields each release knows are read from that release's own configuration types in the Go
module cache (the modules `tests/live/cluster up --kube-version` downloads); without them those
tests skip, saying so.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .test_live_harness import GO, harness


def _releases() -> list[str]:
    return list(harness("releases").available())


def _module_cache() -> Path:
    try:
        found = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        found = ""
    return Path(found or Path.home() / "go" / "pkg" / "mod")


def _staging(release: str) -> str:
    version: str = harness("binaries").kube_version(release)
    return "v0." + version.split(".", 1)[1]


def _json_fields(module: str, release: str, types: str) -> set[str]:
    path = _module_cache() / f"{module}@{_staging(release)}" / types
    if not path.is_file():
        pytest.skip(f"{path} is not in the Go module cache (tests/live/cluster up --kube-version {release} downloads it)")
    return set(re.findall(r'json:"(\w+)', path.read_text()))


def _top_level(text: str) -> set[str]:
    return {line.split(":", 1)[0] for line in text.splitlines() if re.match(r"^[a-zA-Z]\w*:", line)}


def test_the_default_release_and_at_least_two_others_are_pinned() -> None:
    releases = harness("releases")
    assert releases.DEFAULT in _releases()
    assert len(_releases()) >= 3, _releases()
    assert not set(_releases()) & set(releases.REFUSED), "a release is both buildable and refused"


@pytest.mark.parametrize("release", _releases())
def test_each_release_pins_kubernetes_and_its_staging_modules_at_that_release(release: str) -> None:
    directory = harness("releases").module_dir(release)
    version = harness("binaries").kube_version(release)
    assert version.startswith(f"v{release}."), f"{directory} pins {version}, not a {release}"
    text = (directory / "go.mod").read_text()
    replaced = re.findall(r"^\s*(k8s\.io/[\w-]+) => (k8s\.io/[\w-]+) (v\S+)$", text, re.M)
    assert len(replaced) > 20, "the staging modules' replace lines are missing"
    assert [(a, v) for a, b, v in replaced if a != b or v != _staging(release)] == []
    assert (directory / "go.sum").is_file() and (directory / "main.go").is_file()


@pytest.mark.parametrize("release", _releases())
def test_each_release_main_calls_that_release_kubelet_constructor(release: str) -> None:
    """`NewKubeletCommand` took a context from 1.31 on; each main.go follows its release."""
    source = _module_cache() / f"k8s.io/kubernetes@{harness('binaries').kube_version(release)}/cmd/kubelet/app/server.go"
    if not source.is_file():
        pytest.skip(f"{source} is not in the Go module cache")
    takes_context = "func NewKubeletCommand(ctx context.Context)" in source.read_text()
    main = (harness("releases").module_dir(release) / "main.go").read_text()
    assert ("kubelet.NewKubeletCommand(context.Background())" in main) == takes_context


@pytest.mark.parametrize("release", _releases())
def test_each_release_kubelet_gets_only_fields_its_configuration_knows(release: str, tmp_path: Path) -> None:
    known = _json_fields("k8s.io/kubelet", release, "config/v1beta1/types.go")
    text = _filled(tmp_path, release, "kubelet.yaml")
    assert _top_level(text) - {"apiVersion", "kind"} <= known, sorted(_top_level(text) - known)
    assert ("failCgroupV1" in _top_level(text)) == ("failCgroupV1" in known), "cgroup v1 allowed where it can be"


@pytest.mark.parametrize("release", _releases())
def test_each_release_kube_proxy_gets_only_fields_its_configuration_knows(release: str, tmp_path: Path) -> None:
    known = _json_fields("k8s.io/kube-proxy", release, "config/v1alpha1/types.go")
    text = _filled(tmp_path, release, "kube-proxy.yaml")
    assert _top_level(text) - {"apiVersion", "kind"} <= known, sorted(_top_level(text) - known)


def _filled(home: Path, release: str, template: str) -> str:
    core, node = harness("core"), harness("node")
    h = core.Harness(home=home, node_ip="192.0.2.7")
    (h.etc / "kube-version").write_text(release + "\n")
    return str(node._config(h, template).read_text())


def test_a_release_msgen_claims_but_cannot_be_built_here_is_refused_with_the_reason() -> None:
    releases, core = harness("releases"), harness("core")
    with pytest.raises(core.HarnessError, match=r"not buildable here \(k8s.io/kubernetes v1.25.16 needs .*403"):
        releases.check("1.25")
    with pytest.raises(core.HarnessError, match=r"accepted: MAJOR.MINOR"):
        releases.check("1.x")
    with pytest.raises(core.HarnessError, match=r"not buildable here; accepted: "):
        releases.check("1.99")
    assert releases.check("v1.30.14") == releases.check("1.30") == "1.30"


def test_every_minor_msgen_claims_is_built_or_refused_for_a_reason_down_to_the_oldest_built() -> None:
    from msgen.model import versions

    releases = harness("releases")
    oldest_built = min(releases.minor(r) for r in _releases())
    for minor in range(versions.OLDEST[1], oldest_built[1]):
        assert f"1.{minor}" in releases.REFUSED, f"1.{minor} is older than every release built and no reason says why"


def test_a_home_keeps_its_release(tmp_path: Path) -> None:
    releases, core = harness("releases"), harness("core")
    h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
    assert releases.recorded(h) == releases.DEFAULT and releases.choose(h, None) == releases.DEFAULT
    assert releases.choose(h, "1.30") == "1.30" and releases.recorded(h) == "1.30"
    with pytest.raises(core.HarnessError, match=r"runs Kubernetes 1.30: run 1.37 from a home of its own"):
        releases.choose(h, "1.37")
    other = core.Harness(home=tmp_path / "other", node_ip="192.0.2.7")
    (other.data / "etcd").mkdir()
    with pytest.raises(core.HarnessError, match=r"holds etcd data of Kubernetes 1.37"):
        releases.choose(other, "1.28")


def test_a_release_other_than_the_default_runs_from_its_own_home(monkeypatch: pytest.MonkeyPatch) -> None:
    cli, releases = harness("cli"), harness("releases")
    monkeypatch.delenv("MSGEN_HARNESS_HOME", raising=False)
    assert cli.home(None) is None
    assert cli.home("1.30") == Path("/root/.cache/msgen-harness-1.30") != releases.DEFAULT_HOME
    assert cli.home(releases.DEFAULT) == releases.DEFAULT_HOME
    monkeypatch.setenv("MSGEN_HARNESS_HOME", "/elsewhere")
    assert cli.home("1.30") is None, "MSGEN_HARNESS_HOME decides"


def test_the_build_of_a_release_uses_its_module_and_reports_its_version(tmp_path: Path) -> None:
    core, binaries = harness("core"), harness("binaries")
    h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
    release = next(r for r in _releases() if r != harness("releases").DEFAULT)
    (h.etc / "kube-version").write_text(release + "\n")
    built: list[tuple[Path, list[str], tuple[str, ...]]] = []

    def go_build(module: Path, package: str, out: Path, ldflags: tuple[str, ...] = (),
                 tags: tuple[str, ...] = ()) -> Path:
        built.append((module, list(ldflags), tuple(tags)))
        return out

    h.go_build = go_build
    binaries.build_kube(h)
    [(module, flags, tags)] = built
    assert module == GO / f"kube-{release}"
    assert tags == (("providerless",) if harness("releases").minor(release) <= (1, 30) else ()), "no cloud SDKs"
    version = binaries.kube_version(release)
    assert f"-X k8s.io/component-base/version.gitVersion={version}" in flags
    assert f"-X k8s.io/component-base/version.gitMinor={release.split('.')[1]}" in flags
    assert os.readlink(h.bin / "kubelet") == "kube"


def test_a_gate_is_refused_below_the_release_that_serves_it(tmp_path: Path) -> None:
    from msgen.model import versions

    core, features = harness("core"), harness("features")
    h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
    for gate, since in features.SINCE.items():
        assert versions.GATES[gate][1] == since, f"{gate}: the harness and msgen disagree on its beta"
    args = type("Args", (), {"feature_gates": "GenericWorkload=true"})()
    with pytest.raises(core.HarnessError, match=r"Kubernetes 1.30 does not serve GenericWorkload \(from 1.37\)"):
        features.choose(h, args, "1.30")
    assert features.chosen(h) == "", "nothing kept"
    features.choose(h, type("Args", (), {"feature_gates": "GenericWorkload=false"})(), "1.30")
    features.choose(h, args, "1.37")
    with pytest.raises(core.HarnessError, match=r"etc/feature-gates\): Kubernetes 1.28 does not serve"):
        features.choose(h, type("Args", (), {"feature_gates": None})(), "1.28")


class _Recording:
    """A Harness whose processes are recorded, not started."""

    def __init__(self, h: Any) -> None:
        self.h = h
        self.argv: dict[str, list[str]] = {}
        self.stopped: list[str] = []
        h.spawn = lambda name, argv, env=None, netns=None: self.argv.setdefault(name, argv) and 1
        h.wait_for = lambda what, check, timeout=120, every=1.0: True
        h.stop = lambda name, grace=20: self.stopped.append(name)
        h.alive = lambda name: False


def _ports_in(argv: list[str]) -> set[int]:
    return {int(port) for arg in argv for port in re.findall(r"(?:port=|:)(\d{4,5})\b", arg)}


def test_a_home_with_a_port_offset_moves_every_control_plane_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    core, node, pki = harness("core"), harness("node"), harness("pki")
    monkeypatch.setattr(node, "_answers", lambda port: False)  # the machine's own cluster may run
    usual = {port for ports in node.PORTS.values() for port in ports}
    for offset in (0, 10000):
        home = tmp_path / str(offset)
        (home / "etc").mkdir(parents=True)
        if offset:
            (home / "etc" / "port-offset").write_text(f"{offset}\n")
        h = core.Harness(home=home, node_ip="192.0.2.7")
        recording = _Recording(h)
        node._control_plane(h)
        assert list(recording.argv) == list(node.CONTROL_PLANE)
        ports = set().union(*(_ports_in(argv) for argv in recording.argv.values()))
        expected = {h.port(p) for name in node.CONTROL_PLANE for p in node.PORTS[name]}
        assert ports == expected, (offset, sorted(ports))
        assert node.control_plane_only(h) == bool(offset)
        if offset:
            assert not ports & usual, "a usual port in the offset home"
            (h.pki / "ca.crt").write_text("ca")
            (h.pki / "admin.crt").write_text("c")
            (h.pki / "admin.key").write_text("k")
            pki.kubeconfig(h, h.kubeconfig, "admin", "kubernetes-admin", f"https://{h.node_ip}:{h.port(6443)}")
            pki.kubeconfig(h, h.etc / "admin.kubeconfig", "admin", "kubernetes-admin")
            assert "server: https://192.0.2.7:16443" in h.kubeconfig.read_text()
            assert "server: https://127.0.0.1:16443" in (h.etc / "admin.kubeconfig").read_text()


def test_a_port_another_cluster_answers_on_is_refused_before_anything_starts(tmp_path: Path) -> None:
    core, node = harness("core"), harness("node")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        taken = listener.getsockname()[1]
        (tmp_path / "etc").mkdir()
        (tmp_path / "etc" / "port-offset").write_text(f"{taken - 6443}\n")
        h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
        recording = _Recording(h)
        with pytest.raises(core.HarnessError, match=rf"ports in use, not by .*: {taken} \(kube-apiserver\)"):
            node._control_plane(h)
        assert recording.argv == {}, "nothing started"


def test_a_home_with_a_port_offset_stops_only_its_control_plane(tmp_path: Path) -> None:
    core, node = harness("core"), harness("node")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "port-offset").write_text("10000\n")
    h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
    recording = _Recording(h)
    node.down(h)
    assert recording.stopped == list(reversed(node.CONTROL_PLANE))


def _argv_of_every_process(tmp_path: Path, release: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """What the harness starts each Kubernetes process of `release` with (nothing started):
    the control plane's, and each node's kubelet and kube-proxy (node 1's, an extra node's)."""
    core, node, node_runtime = harness("core"), harness("node"), harness("node_runtime")
    h = core.Harness(home=tmp_path, node_ip="192.0.2.7")
    (h.etc / "kube-version").write_text(release + "\n")
    recording = _Recording(h)
    h.kubectl = lambda *args, input=None, check=True: ""
    monkeypatch.setattr(node, "_answers", lambda port: False)
    node._control_plane(h)
    for each in h.nodes(2):
        recording.argv[each.process("kubelet")] = node_runtime.kubelet_argv(h, each, node._config)
        recording.argv[each.process("kube-proxy")] = node_runtime.kube_proxy_argv(h, each, node._config)
    return recording.argv


@pytest.mark.parametrize("release", _releases())
def test_each_built_release_knows_every_flag_the_harness_gives_it(release: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Run against the release's own binary (`<home>/bin/kube <component> --help`), where
    `tests/live/cluster up --kube-version` built it."""
    binary = harness("releases").home(release) / "bin" / "kube"
    if not binary.is_file():
        pytest.skip(f"{binary} is not built (tests/live/cluster up --kube-version {release})")
    for name, argv in _argv_of_every_process(tmp_path, release, monkeypatch).items():
        if name == "etcd":
            continue
        name = name.rsplit(".", 1)[-1]  # an extra node's process: <node>.<component>
        done = subprocess.run([str(binary), name, "--help"], capture_output=True, text=True, timeout=120)
        known = set(re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", done.stdout + done.stderr, re.M))
        assert len(known) > 10, f"{name} --help: {done.stderr[-500:]}"
        given = {arg.split("=", 1)[0] for arg in argv[1:] if arg.startswith("--")}
        assert given <= known, f"{name} {release} does not know {sorted(given - known)}"
