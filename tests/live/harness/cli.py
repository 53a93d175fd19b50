"""`tests/live/cluster up [--kube-version X.Y] [--port-offset N] [--nodes N] [--with a,b]
[--mindspore-version X,Y] [--feature-gates G=true] | node stop|start NAME | down | status`
(each `--kube-version X.Y` too): the command line of the harness.

`--kube-version` picks the Kubernetes release and with it the harness home (`releases.py`):
`/root/.cache/msgen-harness-X.Y` for a release other than the default, unless
`MSGEN_HARNESS_HOME` names one. `--port-offset` runs that home's control plane only, beside a
cluster on the usual ports (`node.py`): no node there, so `--nodes` above 1, `--node-resources`,
`--with` and `--mindspore-version` are refused, before anything is written. The other options
go together in any home: `--nodes` of any release from 1.30 on (`releases.EXTRA_NODES_SINCE`),
`--mindspore-version` images on every node, `--feature-gates` on the control plane. The extra
nodes' network is the machine's: one home at a time holds it (`network.claim`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import components, features, images, node, releases, topology
from .core import Harness, HarnessError


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tests/live/cluster", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="build what is missing, start the cluster and the named components")
    up.add_argument("--with", dest="with_", default="", metavar="A,B,C",
                    help=f"components to install as well: {', '.join(components.available()) or '(none yet)'}")
    up.add_argument("--nodes", type=int, default=None, metavar="N",
                    help=f"how many nodes (1 to {topology.MAX_NODES}; default: as many as now, 1 at first); "
                    f"more than 1 from Kubernetes {'.'.join(map(str, releases.EXTRA_NODES_SINCE))} on, "
                    "not with a port offset, and in one home at a time (the extra nodes' network is the machine's)")
    up.add_argument("--node-resources", default=None, metavar="NAME=Q,...",
                    help="what each node advertises: cpu and memory (at most the machine's), devices "
                         f"(default {','.join(f'{k}={v}' for k, v in topology.DEVICES.items())}; NAME=0 removes one); "
                         "default: as now")
    up.add_argument("--mindspore-version", default="", metavar="X,Y",
                    help="MindSpore images to build and import as well, into every node, "
                    f"localhost/mindspore-cpu:<release>: {', '.join(images.MINDSPORE_RELEASES)}")
    up.add_argument("--port-offset", type=int, default=None, metavar="N",
                    help="run etcd and the control plane only (no node: --nodes, --node-resources, --with and "
                    "--mindspore-version are refused), every port moved up by N, beside a cluster on the usual "
                    "ports; kept for later `up`s of the home (0: the whole cluster)")
    features.arguments(up)
    lifecycle = commands.add_parser("node", help="lose an extra node (stop) or bring it back (start)")
    lifecycle.add_argument("action", choices=("stop", "start"))
    lifecycle.add_argument("name", help="an extra node: msgen-node-2 ...")
    down = commands.add_parser("down", help="stop what up started and remove its containers")
    status = commands.add_parser("status", help="say what runs")
    for command in (up, lifecycle, down, status):
        command.add_argument("--kube-version", default=None, metavar="X.Y",
                             help=f"the Kubernetes release, and its harness home: {', '.join(releases.available())} "
                             f"(default {releases.DEFAULT}; home {releases.home('X.Y')} unless MSGEN_HARNESS_HOME)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("tests/live/cluster: run as root (it starts containerd, a kubelet and iptables rules)", file=sys.stderr)
        return 1
    try:
        h = Harness(home=home(args.kube_version))
        if h.home != releases.DEFAULT_HOME and (releases.DEFAULT_HOME / "images").is_dir():
            h.images = releases.DEFAULT_HOME / "images"  # the images do not depend on the release: built once
        if args.command == "up":
            chosen, resources = check_up(h, args)  # before anything is written
            release = releases.check(args.kube_version) if args.kube_version else releases.recorded(h)
            if not (h.port_offset if args.port_offset is None else args.port_offset):
                releases.check_nodes(release, topology.load(h.topology_file).count if args.nodes is None else args.nodes)
            release = releases.choose(h, args.kube_version)
            port_offset(h, args.port_offset)
            features.choose(h, args, release)
            h.log(f"Kubernetes {release} ({h.home})")
            return _up(h, [name for name in args.with_.split(",") if name.strip()], chosen, args.nodes, resources)
        if args.command == "node":
            began = time.monotonic()
            (node.stop_node if args.action == "stop" else node.start_node)(h, args.name)
            h.log(f"{args.name} {'lost' if args.action == 'stop' else 'back and Ready'} in {time.monotonic() - began:.1f}s")
            return 0
        if args.command == "down":
            return _down(h)
        print(_status(h))
        return 0
    except HarnessError as error:
        print(f"tests/live/cluster: {error}", file=sys.stderr)
        return 1


def check_up(h: Harness, args: argparse.Namespace) -> tuple[list[str], dict[str, str] | None]:
    """`up`'s options checked together, nothing written: the MindSpore releases and the
    nodes' resources asked for. A home with a port offset (asked now, or kept) runs no node,
    so what needs one is refused there."""
    chosen = [release.strip() for release in args.mindspore_version.split(",") if release.strip()]
    unknown = [release for release in chosen if release not in images.MINDSPORE_RELEASES]
    if unknown:
        raise HarnessError(f"--mindspore-version {','.join(unknown)}: accepted: {', '.join(images.MINDSPORE_RELEASES)}")
    try:
        resources = None if args.node_resources is None else topology.parse_resources(args.node_resources)
        if args.nodes is not None:
            topology.plan(args.nodes, h.home, h.data, h.etc, h.node_ip)
    except ValueError as error:
        raise HarnessError(str(error)) from None
    offset = h.port_offset if args.port_offset is None else args.port_offset
    needing = [flag for flag, asked in (("--with", args.with_.strip()), ("--mindspore-version", chosen),
                                        (f"--nodes {args.nodes}", (args.nodes or 1) > 1),
                                        ("--node-resources", resources is not None)) if asked]
    if offset and needing:
        raise HarnessError(f"{', '.join(needing)}: a home with a port offset ({offset}) runs its control plane "
                           "only, no node (`--port-offset 0` runs the whole cluster)")
    return chosen, resources


def home(kube_version: str | None) -> Path | None:
    """The home of `--kube-version`: MSGEN_HARNESS_HOME when set, else the release's own."""
    if os.environ.get("MSGEN_HARNESS_HOME") or kube_version is None:
        return None
    return releases.home(releases.check(kube_version))


def port_offset(h: Harness, offset: int | None) -> None:
    """Keep `--port-offset` in the home; it cannot change while the home's processes run (its
    extra nodes' too)."""
    if offset is None or offset == h.port_offset:
        return
    if not 0 <= offset <= 50000:
        raise HarnessError(f"--port-offset {offset}: accepted: 0 to 50000")
    running = [name for name in node.PROCESSES if h.alive(name)]
    running += [extra.process(part) for extra in h.nodes()[1:] for part in ("containerd", "kubelet", "kube-proxy")
                if h.alive(extra.process(part))]
    if running:
        raise HarnessError(f"--port-offset {offset}: {h.home} runs {', '.join(running)} with offset "
                           f"{h.port_offset}: `down` it first")
    path = h.etc / "port-offset"
    if offset:
        path.write_text(f"{offset}\n")
    else:
        path.unlink(missing_ok=True)
    h.port_offset = offset


def _up(h: Harness, wanted: list[str], mindspore: list[str] | None = None, nodes: int | None = None,
        resources: dict[str, str] | None = None) -> int:
    began = time.monotonic()
    chosen = [components.load(name.strip()) for name in wanted]  # unknown names fail before anything starts
    node.build(h)
    unfinished = h.etc / "stopped-without-down"
    if not h.alive("kube-apiserver"):
        unfinished.parent.mkdir(parents=True, exist_ok=True)
        unfinished.write_text("the API server was found stopped; the remembered components' down has not run yet\n")
    values = node.up(h, nodes, resources)  # the components' images are imported into the node's containerd as they are built
    if unfinished.exists():
        _finish_a_stop_without_down(h)
        unfinished.unlink()
    if mindspore:
        values["MSGEN_TEST_MINDSPORE_IMAGES"] = node.mindspore_releases(h, mindspore)
    building = time.monotonic()
    for component in chosen:
        component.build(h)
    h.log(f"built what the components were missing in {time.monotonic() - building:.0f}s")
    for component in chosen:
        components.remember(h, component.NAME)
        values.update(component.up(h))
    h.log(f"up in {time.monotonic() - began:.0f}s")
    for key, value in values.items():
        print(f"{key}={value}")
    return 0


def _finish_a_stop_without_down(h: Harness) -> None:
    """Run the `down` of every component the home remembers, once the API server is back.

    A cluster whose processes were killed without `down` (the machine restarted, a session's
    processes ended) keeps in etcd what the components' `down` removes: Kueue's pod webhook
    (`failurePolicy: Fail`) then refuses every pod, and JobSet's readiness probe with them,
    until Kueue runs again, and Kueue starts after JobSet. A component still running without
    its API server is stopped too; `up` installs each chosen component again. The stop is
    remembered in the home (`etc/stopped-without-down`) until this has run: an `up` that fails
    after the API server is back (a full disk while importing an image) finds the server
    running, and the next `up` must still finish the stop."""
    for name in reversed(components.installed(h)):
        try:
            components.load(name).down(h)
        except HarnessError as error:  # a component another checkout installed, or a failed delete
            h.log(f"{name}: {error}")


def _down(h: Harness) -> int:
    for name in reversed(components.installed(h)):
        try:
            components.load(name).down(h)
        except HarnessError as error:  # the node goes down regardless
            h.log(f"{name}: {error}")
        components.forget(h, name)
    node.down(h)
    return 0


def _status(h: Harness) -> str:
    lines = [node.status(h)]
    for name in components.installed(h):
        try:  # another checkout may have installed a component this one does not have
            lines.append(f"{name}: {components.load(name).status(h)}")
        except HarnessError as error:
            lines.append(f"{name}: {error}")
    return "\n".join(lines)
