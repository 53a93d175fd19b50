"""MindSpore's dynamic-cluster environment, with the names and meanings ms-operator gave it.

On container `mindspore` of every pod of a job that has a Scheduler (contracts §1-2):

| env             | Scheduler                  | PS / Worker                              |
|-----------------|----------------------------|------------------------------------------|
| `MS_SCHED_HOST` | its own `status.podIP`     | the scheduler's address (see addressing) |
| `MS_NODE_ID`    | `<job>-scheduler-0`        | PS: `<job>-ps-<i>`; Worker: `<i>`        |
| `MS_SCHED_PORT` | the scheduler's `msjob-port`, on every pod                            |
| `MS_SERVER_NUM` | replicas of PS, or 0                                                  |
| `MS_WORKER_NUM` | worker processes: Worker replicas × processes per Worker pod, or 0   |
| `MS_ROLE`       | `MS_SCHED`                 | `MS_PSERVER` / `MS_WORKER`               |

ms-operator set `MS_NODE_ID` to the pod name. MindSpore turns a numeric node id into the
rank, so msgen gives Workers their index instead: ranks then stay the same from run to run.
Scheduler and PS keep the name ms-operator gave their pods (stable, and never mistaken for a
worker rank). That holds only without PS pods: the Scheduler keeps the ranks of numeric ids
only when every node's id is numeric, and otherwise ranks each role's nodes by (host IP, node
id) (`MetaServerNode::ReassignNodeRank`); a PS id cannot be numeric (the Scheduler keys nodes
by id, and a numeric id is the rank, which must stay below `MS_SERVER_NUM`), so in a job with
PS pods a Worker's rank need not be its index. `check` warns at the PS replica spec, also
because MindSpore 2.x no longer trains with parameter servers (`PS_RELEASES`).

MindSpore runs one process per device (contracts §2). A Worker pod that asks for N > 1 devices
runs N processes: it gets `MS_LOCAL_WORKER` = N and `MS_NODE_RANK` = its index instead of
`MS_NODE_ID`, which each process gets from whoever starts it (`msgen.launchers`). A job
without a Scheduler (a standalone Worker) gets no MindSpore env and no Service, as with
ms-operator.

An AscendJob gets ascend-operator's env instead, on every role, the Scheduler included
(`_ascend_operator_env`: `MS_LOCAL_WORKER`, `MS_NODE_RANK`, `NPU_POD`, ... and no
`MS_NODE_ID`). A target that cannot tell a pod its index refuses a job that needs it, at what
needs it (`pod_index_reason`).
"""

from __future__ import annotations

from ..model import mindspore_versions
from ..model.diagnostics import Diagnostic, Severity
from ..model.patch import EnvValue, Patch, field_ref, literal
from ..model.plan import Options, Plan, PodSlot, Role
from ..model.source import Path
from ..model.addresses import Endpoint
from .. import devices, targets

ROLE_VALUES = {"Scheduler": "MS_SCHED", "PS": "MS_PSERVER", "Worker": "MS_WORKER"}
#: Where MindSpore trained with parameter servers: `set_ps_context(enable_ps=True)` plus
#: `Parameter.set_param_ps()`, in graph mode on Ascend or GPU. Its Parameter Server guide is
#: published for 0.6 to 2.5; 2.7.0's wheel still has `set_param_ps`, 2.7.1's and later ones
#: have not (`mindspore_versions.FACTS["ParameterServerTraining"]`).
PS_RELEASES = "0.6 to 2.7.0"


def endpoints(plan: Plan) -> list[Endpoint]:
    scheduler = plan.role("Scheduler")
    if scheduler is None or scheduler.replicas == 0:
        return []
    main = _main_container(plan, scheduler.containers())
    ports = []
    for port in main.get("ports") or []:
        if not port.get("name"):
            continue
        service_port = {"name": port["name"], "port": port["containerPort"]}
        if port.get("protocol"):
            service_port["protocol"] = port["protocol"]
        ports.append(service_port)
    return [Endpoint(scheduler, 0, tuple(ports))]


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    out = _scheduler_without_workers(plan)
    has_scheduler = plan.replicas("Scheduler") > 0
    if not has_scheduler and (plan.replicas("PS") > 0 or plan.replicas("Worker") > 1):
        out.append(
            plan.document.diagnostic(
                plan.roles[0].path[:-1],  # the replica specs, whatever the kind calls them
                "no Scheduler: the pods get no MindSpore cluster env and no Service (as with "
                "ms-operator), so they cannot form a cluster; add a Scheduler replica for "
                "distributed training",
                severity=Severity.WARNING,
            )
        )
    ps = plan.role("PS")
    if has_scheduler and ps is not None and ps.replicas > 0:
        release = mindspore_versions.show(options.mindspore_version)
        if mindspore_versions.has("ParameterServerTraining", options.mindspore_version):
            serves = (f"MindSpore {release} trains with them only under set_ps_context(enable_ps="
                      "True) with set_param_ps, in graph mode on Ascend or GPU, not on CPU")
        else:
            serves = (f"MindSpore {release} has no set_param_ps, so the PS pods train nothing "
                      f"(parameter-server training: releases {PS_RELEASES})")
        out.append(
            plan.document.diagnostic(
                ps.path,
                f"PS pods join MindSpore's cluster (MS_SERVER_NUM counts them), but {serves}. "
                "With PS pods the Scheduler also ranks the nodes by host IP and node id, so a "
                "Worker's rank need not be its index",
                severity=Severity.WARNING,
            )
        )
    for role in plan.roles:
        if (
            has_scheduler
            and role.replica_type != "Scheduler"
            and options.scheduler_address == "cluster-ip"
            and role.template["spec"].get("enableServiceLinks") is False
        ):
            out.append(
                plan.document.diagnostic(
                    role.path + ("template", "spec", "enableServiceLinks"),
                    "enableServiceLinks: false hides the scheduler Service's variables that "
                    "MS_SCHED_HOST refers to; accepted: true or unset, or "
                    "--scheduler-address dns",
                )
            )
    out += _superpod_check(plan, options)
    out += _service_port_check(plan)
    return out


def _scheduler_without_workers(plan: Plan) -> list[Diagnostic]:
    """A Scheduler with no Worker pod: nothing trains, the Scheduler is told MS_WORKER_NUM=0,
    and ms-operator, whose validation let it through, marks a job Succeeded from its Worker
    pods only, so such a job could fail but never succeed (contracts §1)."""
    if plan.replicas("Scheduler") == 0 or plan.replicas("Worker") > 0:
        return []
    worker = plan.role("Worker")
    where = worker.path + ("replicas",) if worker is not None else plan.roles[0].path[:-1]
    missing = "Worker replicas: 0" if worker is not None else "no Worker"
    return [
        plan.document.diagnostic(
            where,
            f"{plan.kind} {plan.name!r} has a Scheduler and {missing}: nothing would train, the "
            "Scheduler would be told MS_WORKER_NUM=0, and ms-operator, which marks a job "
            "Succeeded by its Workers, never did so for such a job; accepted: a Worker with replicas 1 or more, "
            "or no Scheduler (a standalone Worker)",
        )
    ]


def _service_port_check(plan: Plan) -> list[Diagnostic]:
    """The Scheduler's Service lists every named port of its main container (`endpoints`),
    and Kubernetes refuses a Service that lists one port and protocol twice: a port the user
    named `other` with the number msgen gives `msjob-port` would make that Service."""
    scheduler = plan.role("Scheduler")
    if scheduler is None or scheduler.replicas == 0:
        return []
    containers = scheduler.containers()
    main = _main_container(plan, containers)
    index = containers.index(main)
    path = scheduler.path + ("template", "spec", "containers", index, "ports")
    written: object = plan.document.data
    for step in path:  # the ports as written (msgen's own come after them)
        if isinstance(written, dict):
            written = written.get(step)
        elif isinstance(written, list) and isinstance(step, int) and step < len(written):
            written = written[step]
        else:
            written = None
    written_count = len(written) if isinstance(written, list) else 0
    seen: dict[tuple[object, object], tuple[int, str]] = {}
    out = []
    for i, port in enumerate(main.get("ports") or []):
        if not port.get("name"):
            continue
        key = (port.get("containerPort"), port.get("protocol") or "TCP")
        if key not in seen:
            seen[key] = (i, port["name"])
            continue
        first, first_name = seen[key]
        at = i if i < written_count else first  # a port the user wrote, not one msgen added
        added = (
            ""
            if i < written_count
            else f" (msgen adds {port['name']!r}, the port MindSpore's env names)"
        )
        out.append(
            plan.document.diagnostic(
                path + (at,),
                f"port {key[0]}/{key[1]} is named both {first_name!r} and {port['name']!r}"
                f"{added}; the Scheduler's Service lists each named port, and Kubernetes "
                f"refuses a Service with the same port twice; accepted: one name per port "
                f"(call it {plan.port_name!r} to make it the scheduler's port)",
            )
        )
    return out


def _superpod_check(plan: Plan, options: Options) -> list[Diagnostic]:
    """`HCCL_LOGIC_SUPERPOD_ID` = rank ÷ pods per super-pod: Kubernetes cannot divide at run
    time, so only a target with one template per pod can give it."""
    if plan.process_contract != "ascend-operator" or targets.facts_of(options.target).bare_pods:
        return []
    out = []
    for role in plan.roles:
        request = devices.role_request(plan, role)
        if request.kind != "ascend" or role.replicas <= 1:
            continue
        from ..devices import ascend

        pods = ascend.superpod_pods(plan.document, request.count)
        if pods is not None and pods > 1 and plan.labels.get(ascend.SUPERPOD_AFFINITY) != "soft":
            out.append(
                plan.document.diagnostic(
                    ("metadata", "annotations", ascend.SP_BLOCK),
                    f"{ascend.SUPERPOD_ID} is the pod's rank divided by {pods} (pods per "
                    f"logical super-pod), which target {options.target} cannot compute at run "
                    f"time: {role.replica_type} pods get none; use --target "
                    + " or ".join(targets.having(lambda t: t.facts.bare_pods))
                    + " for it",
                    severity=Severity.WARNING,
                )
            )
    return out


def contribute(plan: Plan, slot: PodSlot, addressing: Addresses) -> Patch:
    found = endpoints(plan)
    if not found:
        return Patch(contributor="MindSpore")
    scheduler = found[0]
    role = slot.role
    port = next(p["port"] for p in scheduler.ports if p["name"] == plan.port_name)
    host = (
        field_ref("status.podIP")
        if role.replica_type == "Scheduler"
        else addressing.host(scheduler)
    )
    main = plan.main_container
    if plan.process_contract == "ascend-operator":
        return _ascend_operator_env(plan, slot, addressing, host, port)
    local = processes_per_pod(plan, role)
    if local > 1:
        # One process per device: each process's MS_NODE_ID comes from the launcher (or the
        # user's script) as MS_NODE_RANK × MS_LOCAL_WORKER + i, ascend-operator's names.
        identity: tuple[tuple[str, str, EnvValue], ...] = (
            (main, "MS_LOCAL_WORKER", literal(local)),
            (main, "MS_NODE_RANK", _required(addressing.index(slot))),
        )
    else:
        index = addressing.index(slot)
        # Where the target cannot tell a pod its index, the pod name is the id, as with
        # ms-operator.
        worker = role.replica_type == "Worker" and index is not None
        node_id = index if worker and index is not None else addressing.pod_name(slot)
        identity = ((main, "MS_NODE_ID", node_id),)
    return Patch(
        contributor="MindSpore",
        env=(
            (main, "MS_SCHED_HOST", host),
            *identity,
            (main, "MS_SCHED_PORT", literal(port)),
            (main, "MS_SERVER_NUM", literal(plan.replicas("PS"))),
            (main, "MS_WORKER_NUM", literal(worker_processes(plan))),
            (main, "MS_ROLE", literal(ROLE_VALUES[role.replica_type])),
        ),
    )


def _ascend_operator_env(
    plan: Plan, slot: PodSlot, addressing: Addresses, host: EnvValue, port: int
) -> Patch:
    """ascend-operator's `setMindSporeEnv`, on every role, the Scheduler included.

    MindCluster's launch scripts read these on the Scheduler too (`train_start.sh` passes
    `--device_num=${MS_LOCAL_WORKER}`). `MS_NODE_RANK` is the pod's index in its role (the
    Scheduler's is 0); `NPU_POD` says whether this pod's container asks for NPUs;
    `HostNetwork` and `REPLICA_TYPE` are `setCommonEnv`'s. The job's recovery env
    (`kinds.ascend_recovery`) follows, as ascend-operator appends it.
    """
    main = plan.main_container
    workers = plan.workers()
    local = processes_per_pod(plan, workers) if workers is not None else 1
    npu_pod = devices.role_request(plan, slot.role).kind == "ascend"
    host_network = bool(slot.role.template["spec"].get("hostNetwork"))
    env: list[tuple[str, str, EnvValue]] = [
        (main, "MS_SCHED_HOST", host),
        (main, "MS_LOCAL_WORKER", literal(local)),
        (main, "MS_WORKER_NUM", literal(worker_processes(plan))),
        (main, "MS_NODE_RANK", _required(addressing.index(slot))),
        (main, "MS_SCHED_PORT", literal(port)),
        (main, "MS_SERVER_NUM", literal(plan.replicas("PS"))),
        (main, "MS_ROLE", literal(ROLE_VALUES[slot.role.replica_type])),
        (main, "NPU_POD", literal("true" if npu_pod else "false")),
        # setCommonEnv's static part; its MindCluster addresses (MINDX_SERVER_IP, the job
        # UID as MINDX_TASK_ID) belong to the components msgen's output runs without
        (main, "HostNetwork", literal("true" if host_network else "false")),
        (main, "REPLICA_TYPE", literal(slot.role.replica_type)),
    ]
    request = devices.role_request(plan, slot.role)
    if npu_pod and request.resource is not None:
        from ..devices import ascend

        superpod = ascend.superpod_id(
            plan.document, plan.labels, request.resource, request.count,
            slot.index, addressing.index(slot),
        )  # fmt: skip
        if superpod is not None:  # else reported by check()
            env.append((main, ascend.SUPERPOD_ID, superpod))
    env += [(main, name, literal(value)) for name, value in plan.framework_settings.items()]
    return Patch(contributor="MindSpore", env=tuple(env))


def processes_per_pod(plan: Plan, role: Role) -> int:
    """MindSpore processes in one pod of `role`: one per device of a multi-device Worker."""
    if role.replica_type != "Worker":
        return 1
    return max(devices.role_request(plan, role).count, 1)


def worker_processes(plan: Plan) -> int:
    """`MS_WORKER_NUM`: worker processes, not pods (contracts §2)."""
    role = plan.role("Worker")
    return 0 if role is None else role.replicas * processes_per_pod(plan, role)


def _main_container(plan: Plan, containers: list[dict]) -> dict:  # type: ignore[type-arg]
    return next(c for c in containers if c["name"] == plan.main_container)


def needs_pod_index(plan: Plan) -> bool:
    """Multi-device Workers need their pod's index (MS_NODE_RANK); one process per pod can
    fall back to the pod name as its node id."""
    return pod_index_reason(plan) is not None


def pod_index_reason(plan: Plan) -> tuple[Path, str] | None:
    """Where the job asks for each pod's index, and why: the position a refusal names."""
    if not endpoints(plan):
        return None
    for role in plan.roles:
        if role.replica_type != "Worker" or role.replicas <= 1:
            continue
        if plan.process_contract == "ascend-operator":
            return (
                role.path,
                f"an {plan.kind} gives each {role.replica_type} pod its index as MS_NODE_RANK, "
                "as ascend-operator does",
            )
        local = processes_per_pod(plan, role)
        if local > 1:
            request = devices.role_request(plan, role)
            index = next(
                i for i, c in enumerate(role.containers()) if c["name"] == plan.main_container
            )
            path = role.path + ("template", "spec", "containers", index, "resources")
            limits = (role.containers()[index].get("resources") or {}).get("limits") or {}
            if request.resource is not None and request.resource in limits:
                path += ("limits", request.resource)
            return (
                path,
                f"each {role.replica_type} pod asks for {local} devices and runs one process "
                "per device, so it needs its pod index (MS_NODE_RANK) to number them",
            )
    return None


def _required(index: EnvValue | None) -> EnvValue:
    assert index is not None, "the pipeline refuses targets that cannot give the index"
    return index


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from ..model.extension_points import Addresses, ChecksJob, ExplainsPodIndex, Framework, NeedsPodIndex
    from . import mindspore as _this

    _FRAMEWORK: Framework = _this
    _CHECKS: ChecksJob = _this
    _NEEDS_INDEX: NeedsPodIndex = _this
    _EXPLAINS: ExplainsPodIndex = _this
