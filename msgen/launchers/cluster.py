"""MindSpore cluster tuning: disaster recovery, and timeouts for large clusters (contracts §2).

- `--recovery-volume NAME`: `MS_ENABLE_RECOVERY=1` and `MS_RECOVERY_PATH` = where container
  `mindspore` mounts that volume, on every role. What MindSpore reads of them depends on its
  release. MindSpore 2.10 reads `MS_ENABLE_RECOVERY` only (`NodeBase`, in
  `libmindspore_cluster.so`; no library or Python file of it names `MS_RECOVERY_PATH`): the
  Scheduler then takes back a node that registers again under the same `MS_NODE_ID` ("have
  been recovered") where it would reject it ("registered repeatedly") and fail the cluster,
  and it keeps nothing on disk. The releases with `RecoveryContext` (its disaster-recovery
  guide covers 1.7 to 2.5) also read `MS_RECOVERY_PATH`, refuse to start without it when
  recovery is on, and keep checkpoints and the Scheduler's metadata there. Both need the same
  `MS_NODE_ID` after a restart: msgen's ids are the pod's index or name, which a restarted pod
  keeps, and per-process ids are derived from them. Roles that never restart
  (`restartPolicy: Never`) get a warning, and so does `dns` addressing, whose resolved
  address a restarted Scheduler pod does not keep.
- Above 128 processes, MindSpore's FAQ advises 900-1800 s for `MS_NODE_TIMEOUT` and
  `MS_TOPO_TIMEOUT`: msgen sets both to 1800 on every role, as defaults the template's own
  values replace.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic, Severity
from ..frameworks.mindspore import worker_processes
from ..model.patch import Patch, default, literal
from ..model.plan import Options, Plan, PodSlot, Role

LARGE_CLUSTER = 128
LARGE_CLUSTER_TIMEOUT = 1800


def total_processes(plan: Plan) -> int:
    return worker_processes(plan) + plan.replicas("PS")


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    if options.recovery_volume is None or plan.replicas("Scheduler") == 0:
        return []
    out = []
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
            env += [(main, "MS_ENABLE_RECOVERY", literal(1)), (main, "MS_RECOVERY_PATH", literal(path))]
    if total_processes(plan) > LARGE_CLUSTER:
        env += [
            (main, "MS_NODE_TIMEOUT", default(LARGE_CLUSTER_TIMEOUT)),
            (main, "MS_TOPO_TIMEOUT", default(LARGE_CLUSTER_TIMEOUT)),
        ]
    return [Patch(contributor="MindSpore cluster settings", env=tuple(env))] if env else []


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
