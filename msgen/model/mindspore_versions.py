"""MindSpore releases msgen renders for (`--mindspore-version`), and what each reads.

The processes of a job read MindSpore's environment contract (contracts §2); which variables
a release reads, and what it does with them, changed between 2.7.0 and 2.10.0. Each fact below
was read from the release's wheel (its Python files, its headers, the strings of its shared
objects) and, where it says so in docs/contracts.md, by running it. `FACTS` is the one table
of them, as `msgen.model.versions.GATES` is for Kubernetes; the rest of msgen asks `has`.
"""

from __future__ import annotations

import re

Release = tuple[int, int, int]

#: The releases msgen knows, as the package index serves them for Python 3.11 (2.7.1.post1
#: is 2.7.1 repackaged: its cluster library reads what 2.7.1's does).
KNOWN: tuple[Release, ...] = ((2, 7, 0), (2, 7, 1), (2, 7, 2), (2, 8, 0), (2, 9, 0), (2, 10, 0))
OLDEST = KNOWN[0]
NEWEST = KNOWN[-1]

ACCEPTED = (
    f"MAJOR.MINOR[.PATCH] from {OLDEST[0]}.{OLDEST[1]} to {NEWEST[0]}.{NEWEST[1]}, as the job's "
    f"image installs it (2.7 is read as 2.7.0)"
)

#: fact → (first release that has it, first release that no longer has it); None: open.
FACTS: dict[str, tuple[Release | None, Release | None]] = {
    # MS_RECOVERY_PATH: where RecoveryContext keeps recovery's persisted state, and stops
    # without it (libmindspore_backend_common.so: "The recovery path is empty, please export
    # MS_RECOVERY_PATH correctly"); from 2.7.1 no file of the package names it. Repeated
    # registration (a restarted node taken back) needs MS_ENABLE_RECOVERY alone, in every release.
    "RecoveryPath": (None, (2, 7, 1)),
    # A Worker retries a failed heartbeat for MS_HEARTBEAT_RETRY_TIMEOUT seconds (default 20)
    # before it gives up (libmindspore_cluster.so, compute_graph_node.cc); 2.7 retries by count.
    "HeartbeatRetryTimeout": ((2, 8, 0), None),
    # Parameter-server training: Parameter.set_param_ps and Cell.set_param_ps.
    "ParameterServerTraining": (None, (2, 7, 1)),
}

#: MindSpore's own defaults, the same in every release msgen knows (include/.../topology/common.h:
#: kDefaultTopoTimeOut, kDefaultNodeTimeout; the heartbeat retry logged at start-up).
DEFAULT_TOPO_TIMEOUT = 1800
DEFAULT_NODE_TIMEOUT = 30
DEFAULT_HEARTBEAT_RETRY_TIMEOUT = 20

_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+)(?:\.?post\d+)?)?\Z")


def parse(text: str) -> Release:
    """`2.7`, `2.7.2`, `2.7.1.post1`, `v2.10.0` → the release; ValueError saying what is
    accepted otherwise (a release outside OLDEST..NEWEST's minors included)."""
    match = _RELEASE.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a MindSpore version; accepted: {ACCEPTED}")
    release = (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))
    if not OLDEST[:2] <= release[:2] <= NEWEST[:2]:
        raise ValueError(f"MindSpore {text.strip()} is not a release msgen knows; accepted: {ACCEPTED}")
    return release


def has(fact: str, release: Release) -> bool:
    first, gone = FACTS[fact]
    return (first is None or release >= first) and (gone is None or release < gone)


def releases_with(fact: str) -> str:
    """The releases msgen knows that have `fact`, for messages: `2.7.0`, `2.8.0 and newer`."""
    having = [r for r in KNOWN if has(fact, r)]
    if not having:
        return "none"
    if having[-1] == NEWEST and len(having) > 1:
        return f"{show(having[0])} and newer"
    return ", ".join(show(r) for r in having)


def show(release: Release) -> str:
    return ".".join(str(part) for part in release)
