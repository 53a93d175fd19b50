"""Who starts one MindSpore process per device in a multi-device Worker pod (`--launcher`).

- `per-device` (default): msgen's POSIX-sh launcher (`per_device.sh`, shipped in the
  ConfigMap `<job>-launcher` and mounted read-only at `/opt/msgen`) becomes the container's
  command; the container's own command and args become the launcher's arguments. It starts
  `MS_LOCAL_WORKER` copies with `MS_NODE_ID` = `RANK_ID` = `MS_NODE_RANK` × N + i (and
  `DEVICE_ID` = i on Ascend), prefixes their output, forwards signals, and exits with the
  status of the first copy that failed after stopping the others.
- `msrun`: MindSpore's own launcher, given the cluster as msgen computed it. msrun starts a
  scheduler only where `--master_addr` is a local address; msgen points it at the scheduler's
  address (`$(MS_SCHED_HOST)`), which is the Scheduler's ClusterIP Service or its pod's DNS
  name, never an address of a Worker pod, so msgen's Scheduler pod stays the only scheduler.
  Two layouts break that and are refused (see `check`). msrun writes each process's output
  to `worker_<rank>.log` under `--log_dir`, an emptyDir msgen mounts (`MSRUN_LOG_DIR`), and
  with `--join=True` also to the container's log (it tails those files). msrun runs its
  task with `python` unless the task is `python`, `python3` or `pytest`, so the command must
  be one of those or a `.py` script.
- `none`: the command runs once per pod and starts its processes itself (ascend-operator's
  contract), reading `MS_LOCAL_WORKER` and `MS_NODE_RANK`.
"""

from __future__ import annotations

import os

from .. import devices
from ..model.diagnostics import Diagnostic, Severity
from ..frameworks.mindspore import processes_per_pod, worker_processes
from ..model.patch import CommandWrap, Patch, default, literal
from ..model.plan import Options, Plan, PodSlot, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..model.extension_points import Launcher

SCRIPT_NAME = "per-device.sh"
MOUNT_PATH = "/opt/msgen"
VOLUME_NAME = "msgen-launcher"
MSRUN_TASKS = ("python", "python3", "pytest")
#: what makes the launcher wait for the rank table, when one is used
RANK_TABLE_TIMEOUT = 600
#: msrun writes each process's output to `worker_<rank>.log` in `--log_dir` (default: its
#: working directory, which a non-root user or a read-only root file system may not write);
#: msgen gives it an emptyDir there. `--join=True` also copies those files to the pod's log.
MSRUN_LOG_VOLUME = "msgen-msrun-log"
MSRUN_LOG_DIR = "/var/log/msgen-msrun"


def script() -> str:
    """The launcher's text, as shipped in the ConfigMap (package data `per_device.sh`).

    Read beside this module, as `pod_schema` reads its schema: `importlib.resources` would add
    several milliseconds of imports (tempfile, shutil, ...) to every render's start-up."""
    with open(os.path.join(os.path.dirname(__file__), "per_device.sh"), encoding="utf-8") as f:
        return f.read()


def config_map_name(plan: Plan) -> str:
    return f"{plan.name}-launcher"


def launcher(plan: Plan, options: Options) -> str:
    """The launcher the options name, else the input kind's default."""
    if options.launcher is not None:
        return options.launcher
    return "none" if plan.process_contract == "ascend-operator" else "per-device"


def multi_device_worker(plan: Plan) -> Role | None:
    role = plan.role("Worker")
    if role is None or role.replicas == 0 or processes_per_pod(plan, role) < 2:
        return None
    return role


def chosen(plan: Plan, options: Options) -> Launcher:
    return LAUNCHERS[launcher(plan, options)]


def wrapped_role(plan: Plan, options: Options) -> Role | None:
    """The role whose command a launcher wraps (and whose missing command it reports)."""
    role = multi_device_worker(plan)
    if role is None or not chosen(plan, options).wraps_command:
        return None
    return role


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    role = multi_device_worker(plan)
    if role is None or plan.replicas("Scheduler") == 0:
        return []
    return chosen(plan, options).check(plan, role, options)


def contribute(plan: Plan, slot: PodSlot, options: Options) -> list[Patch]:
    role = multi_device_worker(plan)
    if role is None or slot.role is not role:
        return []
    return chosen(plan, options).contribute(plan, role, options)


class NoLauncher:
    """`none`: the command starts its processes itself (ascend-operator's contract)."""

    name = "none"
    wraps_command = False

    def check(self, plan: Plan, role: Role, options: Options) -> list[Diagnostic]:
        return []

    def contribute(self, plan: Plan, role: Role, options: Options) -> list[Patch]:
        return []


class PerDevice:
    """`per-device`: msgen's POSIX-sh launcher, shipped in a ConfigMap."""

    name = "per-device"
    wraps_command = True

    def check(self, plan: Plan, role: Role, options: Options) -> list[Diagnostic]:
        return []

    def contribute(self, plan: Plan, role: Role, options: Options) -> list[Patch]:
        main = plan.main_container
        ascend = devices.role_request(plan, role).kind == "ascend"
        env = [(main, "MSGEN_SET_DEVICE_ID", literal(1))] if ascend else []
        if options.rank_table == "operator":
            env.append((main, "MSGEN_RANK_TABLE_TIMEOUT", default(RANK_TABLE_TIMEOUT)))
        return [
            Patch(
                contributor="the per-device launcher",
                env=tuple(env),
                volumes=(
                    {"name": VOLUME_NAME, "configMap": {"name": config_map_name(plan)}},
                ),
                mounts=((main, {"name": VOLUME_NAME, "mountPath": MOUNT_PATH, "readOnly": True}),),
                command_wrap=((main, CommandWrap(("/bin/sh", f"{MOUNT_PATH}/{SCRIPT_NAME}"))),),
                objects=(_config_map(plan),),
            )
        ]


class Msrun:
    """`msrun`: MindSpore's own launcher, given the cluster as msgen computed it."""

    name = "msrun"
    wraps_command = True

    def check(self, plan: Plan, role: Role, options: Options) -> list[Diagnostic]:
        return _check_msrun(plan, role, options)

    def contribute(self, plan: Plan, role: Role, options: Options) -> list[Patch]:
        main = plan.main_container
        return [
            Patch(
                contributor="launcher msrun",
                volumes=({"name": MSRUN_LOG_VOLUME, "emptyDir": {}},),
                mounts=((main, {"name": MSRUN_LOG_VOLUME, "mountPath": MSRUN_LOG_DIR}),),
                command_wrap=((main, _msrun(plan, role, options)),),
            )
        ]


#: `--launcher` name → launcher.
LAUNCHERS: dict[str, Launcher] = {found.name: found for found in (PerDevice(), Msrun(), NoLauncher())}


def _check_msrun(plan: Plan, role: Role, options: Options) -> list[Diagnostic]:
    out = []
    for ci, container in enumerate(role.containers()):
        if container["name"] != plan.main_container or not container.get("command"):
            continue
        task = str(container["command"][0])
        if task not in MSRUN_TASKS and not task.endswith(".py"):
            out.append(
                plan.document.diagnostic(
                    role.path + ("template", "spec", "containers", ci, "command", 0),
                    f"launcher msrun runs its task with python, so {task!r} would run as a "
                    f"Python script; accepted: a command starting with {', '.join(MSRUN_TASKS)} "
                    "or a .py script, or --launcher per-device",
                )
            )
    scheduler = plan.role("Scheduler")
    host_network = bool(role.template["spec"].get("hostNetwork"))
    if scheduler is not None and host_network:
        if options.scheduler_address == "dns" and scheduler.template["spec"].get("hostNetwork"):
            out.append(
                plan.document.diagnostic(
                    scheduler.path + ("template", "spec", "hostNetwork"),
                    "launcher msrun with host-network Scheduler and Worker pods: the scheduler's "
                    "DNS name is its node's address, and msrun on a Worker of that node would "
                    "start a second scheduler; accepted: Scheduler without hostNetwork, or "
                    "--scheduler-address cluster-ip",
                )
            )
        elif options.scheduler_address == "cluster-ip":
            out.append(
                plan.document.diagnostic(
                    role.path + ("template", "spec", "hostNetwork"),
                    "launcher msrun on host-network Workers: with kube-proxy in IPVS mode every "
                    "node holds the Services' ClusterIPs as local addresses, and msrun would "
                    "start a second scheduler on each Worker; use --scheduler-address dns (with "
                    "a Scheduler on the pod network) on such clusters",
                    severity=Severity.WARNING,
                )
            )
    if options.rank_table == "operator":
        out.append(
            plan.document.diagnostic(
                role.path + ("template", "spec", "containers"),
                "launcher msrun with --rank-table operator is not accepted: msrun builds the "
                "cluster itself; accepted: --launcher per-device or none with a rank table",
            )
        )
    return out


def _msrun(plan: Plan, role: Role, options: Options) -> CommandWrap:
    command = [
        "msrun",
        f"--worker_num={worker_processes(plan)}",
        f"--local_worker_num={processes_per_pod(plan, role)}",
        "--node_rank=$(MS_NODE_RANK)",
        "--master_addr=$(MS_SCHED_HOST)",
        "--master_port=$(MS_SCHED_PORT)",
        "--join=True",
        f"--log_dir={MSRUN_LOG_DIR}",
    ]
    if _sets_topo_timeout(plan, role, options):
        # msrun overwrites MS_TOPO_TIMEOUT with --cluster_time_out (default 600 s).
        command.append("--cluster_time_out=$(MS_TOPO_TIMEOUT)")
    return CommandWrap(tuple(command))


def _sets_topo_timeout(plan: Plan, role: Role, options: Options) -> bool:
    from .cluster import topo_timeout

    if topo_timeout(plan, options) is not None:
        return True
    main = next(c for c in role.containers() if c["name"] == plan.main_container)
    return any(e.get("name") == "MS_TOPO_TIMEOUT" for e in main.get("env") or [])


def _config_map(plan: Plan) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": config_map_name(plan)},
        "data": {SCRIPT_NAME: script()},
    }
