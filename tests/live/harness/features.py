"""Kubernetes feature gates the control plane runs with: `up --feature-gates A=true,B=false`.

A beta feature that is off by default (Kubernetes 1.37's `GenericWorkload`: the Workload API and
gang scheduling in the default scheduler) is turned on in kube-apiserver, kube-controller-manager
and kube-scheduler, and the API versions that serve it (off by default, as every beta API is
since 1.24) with the API server's `--runtime-config`. The choice is kept in
`etc/feature-gates` and applies to every later `up` until another `--feature-gates` (an empty
one, `--feature-gates=`, goes back to the defaults). Changing it restarts those three processes
(`up` stops them, then starts them as usual): pods, the kubelet and the add-ons keep running,
and the API server is away for the seconds it takes to start.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

#: The processes that take `--feature-gates`, in the order they are restarted.
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
#: gate → the API versions it serves that are off by default (turned on with the gate).
APIS = {"GenericWorkload": ("scheduling.k8s.io/v1beta1",)}
#: gate → the first release that serves those API versions: an older release's API server
#: would refuse the gate or the --runtime-config, so `up` refuses them first.
SINCE = {"GenericWorkload": (1, 37)}
_GATES = re.compile(r"^([A-Z][A-Za-z0-9]*=(true|false))(,[A-Z][A-Za-z0-9]*=(true|false))*\Z")


def arguments(up: argparse.ArgumentParser) -> None:
    up.add_argument("--feature-gates", default=None, metavar="A=true,B=false",
                    help="Kubernetes feature gates of the API server, controller manager and scheduler "
                    f"(the API versions {', '.join(f'{g}: {v}' for g, vs in APIS.items() for v in vs)} "
                    "turned on with theirs); kept for later `up`s; changing them restarts those three")


def _file(h: Any) -> Path:
    return Path(h.etc) / "feature-gates"


def chosen(h: Any) -> str:
    path = _file(h)
    return path.read_text().strip() if path.exists() else ""


def flags(h: Any, component: str) -> list[str]:
    """The extra arguments of `component` for the chosen gates (none without a choice)."""
    gates = chosen(h)
    if not gates or component not in COMPONENTS:
        return []
    out = [f"--feature-gates={gates}"]
    on = [name for name, value in (g.split("=") for g in gates.split(",")) if value == "true"]
    apis = [api for name in on for api in APIS.get(name, ())]
    if component == "kube-apiserver" and apis:
        out.append("--runtime-config=" + ",".join(f"{api}=true" for api in apis))
    return out


def choose(h: Any, args: argparse.Namespace, release: str = "") -> None:
    """Keep `--feature-gates` when given, and stop the processes that run with other flags, so
    that `up` starts them with these. A gate turned on below the release that serves its APIs
    (`release` is the home's Kubernetes X.Y) is refused, and so is one kept from before."""
    from .core import HarnessError

    gates = args.feature_gates
    if gates is None:
        _served(chosen(h), release, "the home's feature gates (etc/feature-gates)")
        return
    gates = gates.strip()
    if gates and not _GATES.match(gates):
        raise HarnessError(f"--feature-gates {gates!r}: accepted: Name=true|false, comma-separated")
    _served(gates, release, f"--feature-gates {gates}")
    _file(h).parent.mkdir(parents=True, exist_ok=True)
    _file(h).write_text(gates + "\n" if gates else "")
    for component in COMPONENTS:
        running = _running_flags(h, component)
        if running is not None and running != flags(h, component):
            h.log(f"{component} runs with {running or 'no feature gates'}: restarting it with "
                  f"{flags(h, component) or 'none'}")
            h.stop(component)


def _served(gates: str, release: str, what: str) -> None:
    from .core import HarnessError

    if not gates or not release:
        return
    minor = tuple(int(part) for part in release.split("."))
    early = [f"{name} (from {'.'.join(map(str, SINCE[name]))})" for name, value in (g.split("=") for g in gates.split(","))
             if value == "true" and name in SINCE and minor < SINCE[name]]
    if early:
        raise HarnessError(f"{what}: Kubernetes {release} does not serve {', '.join(early)}")


def _running_flags(h: Any, component: str) -> list[str] | None:
    """The gate and runtime-config arguments `component` runs with; None when it does not run."""
    if not h.alive(component):
        return None
    pid = (Path(h.run) / f"{component}.pid").read_text().strip()
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return [a for a in argv if a.startswith(("--feature-gates=", "--runtime-config="))]
