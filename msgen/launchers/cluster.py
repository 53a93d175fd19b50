"""MindSpore cluster tuning: disaster recovery, and timeouts (contracts §2).

- `--recovery-volume NAME`: `MS_ENABLE_RECOVERY=1` on every role, and where the job's release
  reads it (`--mindspore-version`, `mindspore_versions.FACTS["RecoveryPath"]`: 2.7.0)
  `MS_RECOVERY_PATH` = where container `mindspore` mounts that volume. 2.7.0's RecoveryContext
  (recovery's persisted state: the Scheduler's metadata, checkpoints) keeps its files there and
  stops when it starts without it ("The recovery path is empty"); from 2.7.1 no file of the
  package names `MS_RECOVERY_PATH`. In every release `MS_ENABLE_RECOVERY` alone makes the
  Scheduler take back a
  node that registers again under the same `MS_NODE_ID` ("have been recovered") where it
  would reject it ("registered repeatedly") and fail the cluster. Both need the same
  `MS_NODE_ID` after a restart: msgen's ids are the pod's index or name, which a restarted
  pod keeps, and per-process ids are derived from them. Roles that never restart
  (`restartPolicy: Never`) get a warning, and so does `dns` addressing, whose resolved
  address a restarted Scheduler pod does not keep.
- Above 128 processes, MindSpore's FAQ advises 900-1800 s for `MS_NODE_TIMEOUT` and
  `MS_TOPO_TIMEOUT`: msgen sets both to 1800 on every role, as defaults the template's own
  values replace.
- `--kueue-queue`: Kueue (0.19 and later by default) evicts an admitted job whose pods are not
  all ready `waitForPodsReady.timeout` after admission (30 minutes by default) and queues it
  again. MindSpore's processes wait `MS_TOPO_TIMEOUT` for the cluster to form, then fail. msgen
  writes `MS_TOPO_TIMEOUT` = Kueue's default timeout (a default the template's value replaces),
  so the two give up together (docs/targets.md, "Kueue's timeout and MindSpore's"): under
  msrun, whose own `--cluster_time_out` is 600 s, a job would otherwise fail after 10 minutes
  that Kueue would have evicted and run again.
- From 2.8, a Worker whose heartbeat fails retries for `MS_HEARTBEAT_RETRY_TIMEOUT` seconds
  (default 20) while the Scheduler drops a node silent for `MS_NODE_TIMEOUT` seconds (default
  30): a retry as long as the timeout cannot succeed, so a template whose values do not keep
  the first below the second is an error; a release that does not read the variable gets a
  warning.
"""

from __future__ import annotations

from .. import targets
from ..model import mindspore_versions
from ..model.diagnostics import Diagnostic, Severity
from ..frameworks.mindspore import worker_processes
from ..model.patch import Patch, default, literal
from ..model.plan import Options, Plan, PodSlot, Role

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LARGE_CLUSTER = 128
LARGE_CLUSTER_TIMEOUT = 1800
#: Kueue's `waitForPodsReady.timeout` when its configuration names none (Kueue 0.19
#: `DefaultWaitForPodsReadyTimeout`, on by default from 0.19).
KUEUE_PODS_READY_TIMEOUT = 1800


def total_processes(plan: Plan) -> int:
    return worker_processes(plan) + plan.replicas("PS")


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    out = _heartbeat(plan, options) if plan.replicas("Scheduler") > 0 else []
    if options.recovery_volume is None or plan.replicas("Scheduler") == 0:
        return out
    if options.scheduler_address == "dns":
        scheduler = plan.role("Scheduler")
        assert scheduler is not None
        out.append(
            plan.document.diagnostic(
                scheduler.path,
                "--recovery-volume with --scheduler-address dns: the other pods resolve the "
                "Scheduler's name to its pod's address when they start, and a restarted "
                "Scheduler pod gets a new address they do not follow; use --scheduler-address "
                "cluster-ip (a Service address that stays) to recover a Scheduler",
                severity=Severity.WARNING,
            )
        )
    for role in plan.roles:
        if role.replicas == 0:
            continue
        _, problem = _recovery_path(plan, role, options.recovery_volume)
        if problem is not None:
            out.append(problem)
        if role.restart_policy == "Never":
            out.append(
                plan.document.diagnostic(
                    role.path,
                    f"--recovery-volume: {role.replica_type} pods never restart "
                    "(restartPolicy Never), so MindSpore cannot recover them; accepted: "
                    "restartPolicy OnFailure or ExitCode",
                    severity=Severity.WARNING,
                )
            )
    return out


def contribute(plan: Plan, slot: PodSlot, options: Options) -> list[Patch]:
    main = plan.main_container
    env = []
    if options.recovery_volume is not None:
        path, _ = _recovery_path(plan, slot.role, options.recovery_volume)
        if path is not None:
            env.append((main, "MS_ENABLE_RECOVERY", literal(1)))
            if mindspore_versions.has("RecoveryPath", options.mindspore_version):
                env.append((main, "MS_RECOVERY_PATH", literal(path)))
    if total_processes(plan) > LARGE_CLUSTER:
        env.append((main, "MS_NODE_TIMEOUT", default(LARGE_CLUSTER_TIMEOUT)))
    topo = topo_timeout(plan, options)
    if topo is not None:
        env.append((main, "MS_TOPO_TIMEOUT", default(topo)))
    return [Patch(contributor="MindSpore cluster settings", env=tuple(env))] if env else []


def topo_timeout(plan: Plan, options: Options) -> int | None:
    """The `MS_TOPO_TIMEOUT` msgen writes as a default, or None: the longer of a large
    cluster's and a Kueue-queued job's (Kueue's eviction timeout)."""
    wanted = [LARGE_CLUSTER_TIMEOUT] if total_processes(plan) > LARGE_CLUSTER else []
    if options.kueue_queue and targets.lookup(options.target).support["--kueue-queue"].support != "no":
        wanted.append(KUEUE_PODS_READY_TIMEOUT)  # not where Kueue admits nothing (volcano)
    return max(wanted) if wanted else None


def _heartbeat(plan: Plan, options: Options) -> list[Diagnostic]:
    """A template's heartbeat retry that cannot work with its release's node timeout."""
    out = []
    reads = mindspore_versions.has("HeartbeatRetryTimeout", options.mindspore_version)
    release = mindspore_versions.show(options.mindspore_version)
    for role in plan.roles:
        if role.replicas == 0:
            continue
        for ci, container in enumerate(role.containers()):
            if container["name"] != plan.main_container:
                continue
            env = {e.get("name"): (ei, e) for ei, e in enumerate(container.get("env") or [])}
            retry = env.get("MS_HEARTBEAT_RETRY_TIMEOUT")
            at = role.path + ("template", "spec", "containers", ci, "env")
            if not reads:
                if retry is not None:
                    out.append(plan.document.diagnostic(
                        at + (retry[0],),
                        f"MS_HEARTBEAT_RETRY_TIMEOUT is not read by MindSpore {release} (it "
                        "retries a failed heartbeat by count); it is read from 2.8 on "
                        "(--mindspore-version)",
                        severity=Severity.WARNING,
                    ))
                continue
            node_default = LARGE_CLUSTER_TIMEOUT if total_processes(plan) > LARGE_CLUSTER else None
            node = _seconds(env.get("MS_NODE_TIMEOUT"), node_default or mindspore_versions.DEFAULT_NODE_TIMEOUT)
            tries = _seconds(retry, mindspore_versions.DEFAULT_HEARTBEAT_RETRY_TIMEOUT)
            if node is None or tries is None or tries < node:
                continue
            named = retry or env.get("MS_NODE_TIMEOUT")
            assert named is not None  # with both defaults, 20 < every default node timeout
            out.append(plan.document.diagnostic(
                at + (named[0], "value"),
                f"MS_HEARTBEAT_RETRY_TIMEOUT {tries} s is not below MS_NODE_TIMEOUT {node} s: "
                "a Worker still retrying its heartbeat has already been dropped by the "
                f"Scheduler (MindSpore {release}); accepted: MS_HEARTBEAT_RETRY_TIMEOUT below "
                f"MS_NODE_TIMEOUT (defaults {mindspore_versions.DEFAULT_HEARTBEAT_RETRY_TIMEOUT} "
                f"and {mindspore_versions.DEFAULT_NODE_TIMEOUT})",
            ))
    return out


def _seconds(entry: tuple[int, dict[str, Any]] | None, absent: int) -> int | None:
    """An env entry's whole seconds, `absent` without one, None when it is not a plain
    number (a reference or a value from elsewhere: read only at run time)."""
    if entry is None:
        return absent
    value = entry[1].get("value")
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None


def _recovery_path(plan: Plan, role: Role, volume: str) -> tuple[str | None, Diagnostic | None]:
    spec_path = role.path + ("template", "spec")
    names = [v.get("name") for v in role.template["spec"].get("volumes") or []]
    if volume not in names:
        return None, plan.document.diagnostic(
            spec_path,
            f"--recovery-volume {volume!r}: {role.replica_type} has no volume of that name; "
            f"accepted: one of its volumes ({', '.join(map(str, names)) or 'none declared'})",
        )
    for ci, container in enumerate(role.containers()):
        if container["name"] != plan.main_container:
            continue
        for mount in container.get("volumeMounts") or []:
            if mount.get("name") == volume:
                return str(mount["mountPath"]), None
        return None, plan.document.diagnostic(
            spec_path + ("containers", ci),
            f"--recovery-volume {volume!r}: container {plan.main_container!r} of "
            f"{role.replica_type} does not mount it; accepted: a volumeMount of {volume!r}",
        )
    return None, None
