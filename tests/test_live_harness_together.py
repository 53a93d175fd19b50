"""The live harness's options of `up` together, without a cluster: `--nodes`, `--kube-version`,
`--port-offset`, `--mindspore-version` and `--feature-gates` in one home, and two homes beside
each other. What one home's nodes would share with another's is refused or left alone: a home
with a port offset runs no node, a release whose kubelet cannot keep its pod logs apart runs
no extra node, and the extra nodes' network (named by the node's index, not by the home) is
held by one home at a time. Nothing here starts a process or touches the machine's network:
each call that would is recorded instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from .test_live_harness import harness

cli, core, images, network = harness("cli"), harness("core"), harness("images"), harness("network")
node, node_runtime, releases, topology = harness("node"), harness("node_runtime"), harness("releases"), harness("topology")


def home(tmp_path: Path, name: str, nodes: int = 1, offset: int = 0) -> Any:
    h = core.Harness(home=tmp_path / name, node_ip="192.0.2.7")
    h.topology_file.write_text(topology.Topology(nodes, {}).to_json())
    if offset:
        (h.etc / "port-offset").write_text(f"{offset}\n")
        h.port_offset = offset
    return h


def up_args(**given: Any) -> argparse.Namespace:
    values = {"with_": "", "nodes": None, "node_resources": None, "mindspore_version": "", "port_offset": None,
              "feature_gates": None, "kube_version": None}
    return argparse.Namespace(**{**values, **given})


@pytest.fixture()
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The machine's network namespaces and the extra nodes' holder, in `tmp_path`."""
    netns = tmp_path / "netns"
    netns.mkdir()
    monkeypatch.setattr(network, "NETNS", netns)
    monkeypatch.setattr(network, "OWNER", tmp_path / "run" / "extra-nodes-home")
    return netns


def test_a_home_with_a_port_offset_refuses_what_needs_a_node_before_anything_is_written(tmp_path: Path) -> None:
    h = home(tmp_path, "beside")
    written = sorted(p.relative_to(h.home) for p in h.home.rglob("*"))
    for given, named in (({"nodes": 3}, "--nodes 3"), ({"node_resources": "cpu=1"}, "--node-resources"),
                         ({"with_": "volcano"}, "--with"), ({"mindspore_version": "2.8.0"}, "--mindspore-version")):
        with pytest.raises(core.HarnessError, match=rf"^{named}: a home with a port offset \(20000\) runs its control "
                                                    "plane only"):
            cli.check_up(h, up_args(port_offset=20000, **given))
        assert sorted(p.relative_to(h.home) for p in h.home.rglob("*")) == written, "nothing written"
    assert cli.check_up(h, up_args(port_offset=20000, nodes=1)) == ([], None)
    # The offset kept in the home refuses them as well; `--port-offset 0` in the same `up` lifts it.
    kept = home(tmp_path, "kept", offset=20000)
    with pytest.raises(core.HarnessError, match=r"--nodes 2.*port offset \(20000\)"):
        cli.check_up(kept, up_args(nodes=2))
    assert cli.check_up(kept, up_args(nodes=3, node_resources="cpu=1", mindspore_version="2.8.0", port_offset=0,
                                      feature_gates="GenericWorkload=true")) == (["2.8.0"], {"cpu": "1"})


def test_extra_nodes_run_on_the_releases_whose_kubelet_keeps_its_pod_logs_apart(tmp_path: Path) -> None:
    """Two kubelets sharing /var/log/pods delete each other's pods' logs: `--nodes` above 1
    needs `podLogsDir`, which the harness writes for exactly the releases that know it."""
    for release in releases.available():
        h = core.Harness(home=tmp_path / release, node_ip="192.0.2.7")
        (h.etc / "kube-version").write_text(release + "\n")
        extra = h.nodes(2)[1]
        config = node._config(h, "kubelet.yaml", node=extra).read_text()
        separate = f"podLogsDir: {extra.pod_logs_dir}\n" in config
        releases.check_nodes(release, 1)
        if separate:
            releases.check_nodes(release, topology.MAX_NODES)
        else:
            with pytest.raises(core.HarnessError, match=rf"--nodes 3 on Kubernetes {release}: extra nodes need"):
                releases.check_nodes(release, 3)
    assert releases.minor(releases.available()[0]) < releases.EXTRA_NODES_SINCE <= releases.minor(releases.DEFAULT)


def test_the_extra_nodes_network_is_held_by_one_home_at_a_time(tmp_path: Path, machine: Path) -> None:
    first, second = home(tmp_path, "first", nodes=3), home(tmp_path, "second", nodes=3)
    assert network.holder() is None and network.holds(first) and network.holds(second)
    network.claim(first)
    assert network.holder() == str(first.home) and network.holds(first) and not network.holds(second)
    network.held_elsewhere(first)
    with pytest.raises(core.HarnessError, match=rf"held by the cluster of {first.home}: `down` it first"):
        network.claim(second)
    network.release(second)  # not its to release
    assert network.holder() == str(first.home)
    network.release(first)
    assert network.holder() is None
    # Namespaces made before homes claimed the network: the home that started extra nodes holds it.
    (machine / "msgen-node-2").touch()
    assert network.holds(first) and not network.holds(home(tmp_path, "single"))


class Recorder:
    """What node.up, node.down and `node stop|start` would do to the machine, recorded."""

    def __init__(self, h: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        for module, names in ((node, ("remove_node", "_control_plane", "check_ports", "_dns", "_check_host",
                                      "_host_settings")),
                              (network, ("host_rules", "remove_host_rules")),
                              (node_runtime, ("start", "lose", "remove_containers")),
                              (node.pki, ("make", "node_certificates")), (images, ("controller", "cmp"))):
            for name in names:
                monkeypatch.setattr(module, name, lambda *args, _name=name, **kwargs: self.calls.append(_name))
        # Answered as if a containerd served: down then leaves /run/containerd's mounts alone.
        monkeypatch.setattr(node_runtime, "containerd_answers", lambda n: True)
        monkeypatch.setattr(node_runtime, "patch_devices", lambda *args: None)
        h.stop = lambda name, grace=20: self.calls.append(f"stop {name}")
        h.alive = lambda name: False


def test_a_home_that_does_not_hold_the_extra_nodes_leaves_them_alone(
        tmp_path: Path, machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    holder, other = home(tmp_path, "holder", nodes=3), home(tmp_path, "other", nodes=3)
    network.claim(holder)
    recorded = Recorder(other, monkeypatch)
    node.down(other)
    assert not {"remove_node", "remove_host_rules"} & set(recorded.calls), recorded.calls
    assert network.holder() == str(holder.home)
    for action in (node.stop_node, node.start_node):
        with pytest.raises(core.HarnessError, match=rf"msgen-node-2 is another home's: the cluster of {holder.home}"):
            action(other, "msgen-node-2")
    recorded.calls.clear()
    with pytest.raises(core.HarnessError, match="held by the cluster of"):
        node.up(other, 3)
    assert recorded.calls == ["_check_host", "_host_settings"], "refused before anything starts"
    recorded.calls.clear()
    node.up(other, 1)  # its single node, beside the holder's extra nodes: they stay
    assert not {"remove_node", "remove_host_rules"} & set(recorded.calls), recorded.calls
    # The holder's `down` removes them, and gives the network up.
    mine = Recorder(holder, monkeypatch)
    node.down(holder)
    assert [c for c in mine.calls if c in ("remove_node", "remove_host_rules")] == [
        "remove_node", "remove_node", "remove_host_rules"]
    assert network.holder() is None


def test_a_home_with_a_port_offset_never_touches_the_extra_nodes(
        tmp_path: Path, machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    beside = home(tmp_path, "beside", nodes=3, offset=20000)
    recorded = Recorder(beside, monkeypatch)
    assert node.up(beside) == {"MSGEN_TEST_KUBECONFIG": str(beside.kubeconfig)}
    node.down(beside)
    assert [c for c in recorded.calls if not c.startswith("stop ")] == ["_check_host", "make", "_control_plane"]
    assert [c for c in recorded.calls if c.startswith("stop ")] == [f"stop {n}" for n in reversed(node.CONTROL_PLANE)]
    assert network.holder() is None
    with pytest.raises(core.HarnessError, match=r"runs a control plane only \(port offset 20000\): it has no msgen-node-2"):
        node.stop_node(beside, "msgen-node-2")
    assert "msgen-node-2" not in node.status(beside)


def test_the_mindspore_releases_asked_for_go_into_every_running_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`up --nodes 3 --mindspore-version 2.8.0`: a suite run with MSGEN_LIVE_MINDSPORE=2.8.0
    places pods on the extra nodes too; a node that is lost gets them at the next `up`."""
    h = home(tmp_path, "nodes", nodes=3)
    lost = h.nodes()[2]
    imported: list[tuple[str, str]] = []
    shared: list[str] = []
    monkeypatch.setattr(images, "mindspore", lambda h, release: tmp_path / f"mindspore-{release}.tar")
    monkeypatch.setattr(node_runtime, "containerd_answers", lambda n: n != lost)
    def share_content(first: Any, extra: Any) -> int:
        shared.append(extra.name)
        return 0

    monkeypatch.setattr(node_runtime, "share_content", share_content)
    h.image_present = lambda ref, socket=core.CONTAINERD_SOCKET: False
    h.import_image = lambda tarball, socket=core.CONTAINERD_SOCKET: imported.append((tarball.name, socket))
    assert node.mindspore_releases(h, ["2.8.0"]) == "localhost/mindspore-cpu:2.8.0"
    assert imported == [("mindspore-2.8.0.tar", core.CONTAINERD_SOCKET),
                        ("mindspore-2.8.0.tar", str(h.nodes()[1].containerd_socket))]
    assert shared == ["msgen-node-2"]
