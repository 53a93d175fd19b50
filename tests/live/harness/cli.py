"""`tests/live/cluster up [--kube-version X.Y] [--port-offset N] [--with a,b] [--mindspore-version X,Y]
[--feature-gates G=true] | down [--kube-version X.Y] | status [--kube-version X.Y]`: the command
line of the harness.

`--kube-version` picks the Kubernetes release and with it the harness home (`releases.py`):
`/root/.cache/msgen-harness-X.Y` for a release other than the default, unless
`MSGEN_HARNESS_HOME` names one. `--port-offset` runs that home's control plane only, beside a
cluster on the usual ports (`node.py`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import components, features, images, node, releases
from .core import Harness, HarnessError


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tests/live/cluster", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="build what is missing, start the cluster and the named components")
    up.add_argument("--with", dest="with_", default="", metavar="A,B,C",
                    help=f"components to install as well: {', '.join(components.available()) or '(none yet)'}")
    up.add_argument("--mindspore-version", default="", metavar="X,Y",
                    help="MindSpore images to build and import as well, localhost/mindspore-cpu:<release>: "
                    f"{', '.join(images.MINDSPORE_RELEASES)}")
    up.add_argument("--port-offset", type=int, default=None, metavar="N",
                    help="run etcd and the control plane only (no node), every port moved up by N, beside a "
                    "cluster on the usual ports; kept for later `up`s of the home (0: the whole cluster)")
    features.arguments(up)
    down = commands.add_parser("down", help="stop what up started and remove its containers")
    status = commands.add_parser("status", help="say what runs")
    for command in (up, down, status):
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
        release = releases.choose(h, args.kube_version) if args.command == "up" else releases.recorded(h)
        if args.command == "up":
            chosen = [release.strip() for release in args.mindspore_version.split(",") if release.strip()]
            unknown = [release for release in chosen if release not in images.MINDSPORE_RELEASES]
            if unknown:  # before anything starts
                raise HarnessError(f"--mindspore-version {','.join(unknown)}: accepted: "
                                   f"{', '.join(images.MINDSPORE_RELEASES)}")
            port_offset(h, args.port_offset)
            if node.control_plane_only(h) and (args.with_.strip() or chosen):
                raise HarnessError("--with and --mindspore-version need the node, which a home with a port offset "
                                   "does not run")
            features.choose(h, args, release)
            h.log(f"Kubernetes {release} ({h.home})")
            return _up(h, [name for name in args.with_.split(",") if name.strip()], chosen)
        if args.command == "down":
            return _down(h)
        print(_status(h))
        return 0
    except HarnessError as error:
        print(f"tests/live/cluster: {error}", file=sys.stderr)
        return 1


def home(kube_version: str | None) -> Path | None:
    """The home of `--kube-version`: MSGEN_HARNESS_HOME when set, else the release's own."""
    if os.environ.get("MSGEN_HARNESS_HOME") or kube_version is None:
        return None
    return releases.home(releases.check(kube_version))


def port_offset(h: Harness, offset: int | None) -> None:
    """Keep `--port-offset` in the home; it cannot change while the home's processes run."""
    if offset is None or offset == h.port_offset:
        return
    if not 0 <= offset <= 50000:
        raise HarnessError(f"--port-offset {offset}: accepted: 0 to 50000")
    running = [name for name in node.PROCESSES if h.alive(name)]
    if running:
        raise HarnessError(f"--port-offset {offset}: {h.home} runs {', '.join(running)} with offset "
                           f"{h.port_offset}: `down` it first")
    path = h.etc / "port-offset"
    if offset:
        path.write_text(f"{offset}\n")
    else:
        path.unlink(missing_ok=True)
    h.port_offset = offset


def _up(h: Harness, wanted: list[str], releases: list[str] | None = None) -> int:
    began = time.monotonic()
    chosen = [components.load(name.strip()) for name in wanted]  # unknown names fail before anything starts
    node.build(h)
    values = node.up(h)  # the components' images are imported into the node's containerd as they are built
    if releases:
        values["MSGEN_TEST_MINDSPORE_IMAGES"] = images.mindspore_releases(h, releases)
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
