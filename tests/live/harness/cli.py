"""`tests/live/cluster up [--nodes N] [--with a,b] [--mindspore-version X,Y] [--feature-gates G=true]
| node stop|start NAME | down | status`: the command line of the harness."""

from __future__ import annotations

import argparse
import os
import sys
import time

from . import components, features, images, node, topology
from .core import Harness, HarnessError


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tests/live/cluster", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="build what is missing, start the cluster and the named components")
    up.add_argument("--with", dest="with_", default="", metavar="A,B,C",
                    help=f"components to install as well: {', '.join(components.available()) or '(none yet)'}")
    up.add_argument("--nodes", type=int, default=None, metavar="N",
                    help=f"how many nodes (1 to {topology.MAX_NODES}; default: as many as now, 1 at first)")
    up.add_argument("--node-resources", default=None, metavar="NAME=Q,...",
                    help="what each node advertises: cpu and memory (at most the machine's), devices "
                         f"(default {','.join(f'{k}={v}' for k, v in topology.DEVICES.items())}; NAME=0 removes one); "
                         "default: as now")
    up.add_argument("--mindspore-version", default="", metavar="X,Y",
                    help="MindSpore images to build and import as well, into every node, "
                    f"localhost/mindspore-cpu:<release>: {', '.join(images.MINDSPORE_RELEASES)}")
    features.arguments(up)
    lifecycle = commands.add_parser("node", help="lose an extra node (stop) or bring it back (start)")
    lifecycle.add_argument("action", choices=("stop", "start"))
    lifecycle.add_argument("name", help="an extra node: msgen-node-2 ...")
    commands.add_parser("down", help="stop what up started and remove its containers")
    commands.add_parser("status", help="say what runs")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("tests/live/cluster: run as root (it starts containerd, a kubelet and iptables rules)", file=sys.stderr)
        return 1
    h = Harness()
    try:
        if args.command == "up":
            releases = [release.strip() for release in args.mindspore_version.split(",") if release.strip()]
            unknown = [release for release in releases if release not in images.MINDSPORE_RELEASES]
            if unknown:  # before anything starts
                raise HarnessError(f"--mindspore-version {','.join(unknown)}: accepted: "
                                   f"{', '.join(images.MINDSPORE_RELEASES)}")
            try:
                resources = None if args.node_resources is None else topology.parse_resources(args.node_resources)
                if args.nodes is not None:
                    topology.plan(args.nodes, h.home, h.data, h.etc, h.node_ip)
            except ValueError as error:
                raise HarnessError(str(error)) from None
            features.choose(h, args)
            return _up(h, [name for name in args.with_.split(",") if name.strip()], releases, args.nodes, resources)
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


def _up(h: Harness, wanted: list[str], releases: list[str] | None = None, nodes: int | None = None,
        resources: dict[str, str] | None = None) -> int:
    began = time.monotonic()
    chosen = [components.load(name.strip()) for name in wanted]  # unknown names fail before anything starts
    node.build(h)
    values = node.up(h, nodes, resources)  # the components' images are imported into the node's containerd as they are built
    if releases:
        values["MSGEN_TEST_MINDSPORE_IMAGES"] = node.mindspore_releases(h, releases)
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
