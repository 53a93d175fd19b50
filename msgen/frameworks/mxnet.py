"""MXNet's parameter-server environment, as mxnet-operator and training-operator gave it.

On every container of every pod (contracts §5):

- `MX_CONFIG`: `{"cluster":{<rt>:[{"url":<host>,"port":P},...]},"labels":{<rt>:<key>},
  "task":{"type":<rt>,"index":<i>}}`, cluster and labels keyed by every replica type; a
  label is the TVM RPC key a tuning job's TunerServer registers under (`genLabelsSpec`),
  which the kind puts in the plan's settings (`kinds/mxjob/labels.py`), `""` without one;
- in training mode, for the ps-lite roles Scheduler, Server and Worker: `DMLC_PS_ROOT_PORT`,
  `DMLC_PS_ROOT_URI` (scheduler 0), `DMLC_NUM_SERVER`, `DMLC_NUM_WORKER`, `DMLC_ROLE`,
  `DMLC_USE_KUBERNETES=1` (ps-lite then binds the scheduler to every interface);
- on Worker pods also `DMLC_WORKER_ID`, the worker's index (`addBytePSEnv`: BytePS aborts
  without it), from the target's own addressing like the index inside `MX_CONFIG`.

Host names come from the target's addressing: the stable DNS name of each replica, which is
what the operators wrote (`<job>-<rt>-<i>`, a per-replica Service) and what ps-lite resolves.
The task index inside `MX_CONFIG` is static where the target has static pods, and expanded
at run time from the pod's index variable where it has not.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.patch import ALL_CONTAINERS, EnvValue, Patch, literal
from ..model.plan import Options, Plan, PodSlot
from ..model.addresses import Endpoint
from .jsonenv import INDEX, with_index
from .ports import check_listed_replicas, every_replica_by_name, main_port

PS_LITE_ROLES = ("Scheduler", "Server", "Worker")
#: The pod template annotation whose value is the role's entry in `MX_CONFIG.labels`
#: (kubeflow/mxnet-operator 1.1, training-operator).
TUNER_SERVER_KEY = "tuner-server-key"


def needs_pod_index(plan: Plan) -> bool:
    """Per-pod values (an index inside the config, a rank) need each pod to know its index."""
    return True

def endpoints(plan: Plan) -> list[Endpoint]:
    """Every replica is addressed by name; a job without Scheduler or TunerTracker is local."""
    if not _distributed(plan):
        return []
    return every_replica_by_name(plan)


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    return check_listed_replicas(plan, "MX_CONFIG")


def _distributed(plan: Plan) -> bool:
    return plan.replicas("Scheduler") > 0 or plan.replicas("TunerTracker") > 0


def labels_setting(rt: str) -> str:
    """The `Plan.framework_settings` key of `MX_CONFIG.labels.<rt>`."""
    return f"labels.{rt}"


def contribute(plan: Plan, slot: PodSlot, addressing: Addresses) -> Patch:
    if not _distributed(plan):
        return Patch(contributor="MXNet")
    index, requires = addressing.index_text(slot)
    cluster = {
        role.key: [
            {"url": addressing.replica_host(role, k), "port": main_port(plan, role)}
            for k in range(role.replicas)
        ]
        for role in sorted(plan.roles, key=lambda r: r.key)
    }
    labels = {
        role.key: plan.framework_settings.get(labels_setting(role.key), "")
        for role in sorted(plan.roles, key=lambda r: r.key)
    }
    document = with_index(
        {"cluster": cluster, "labels": labels, "task": {"type": slot.role.key, "index": INDEX}},
        index,
    )
    env: list[tuple[str, str, EnvValue]] = [
        (ALL_CONTAINERS, "MX_CONFIG", EnvValue(value=document, requires=requires))
    ]
    scheduler = plan.role("Scheduler")
    if scheduler is not None and slot.role.replica_type in PS_LITE_ROLES:
        env += [
            (ALL_CONTAINERS, "DMLC_PS_ROOT_PORT", literal(main_port(plan, scheduler))),
            (ALL_CONTAINERS, "DMLC_PS_ROOT_URI", literal(addressing.replica_host(scheduler, 0))),
            (ALL_CONTAINERS, "DMLC_NUM_SERVER", literal(plan.replicas("Server"))),
            (ALL_CONTAINERS, "DMLC_NUM_WORKER", literal(plan.replicas("Worker"))),
            (ALL_CONTAINERS, "DMLC_ROLE", literal(slot.role.key)),
            (ALL_CONTAINERS, "DMLC_USE_KUBERNETES", literal(1)),
        ]
        if slot.role.replica_type == "Worker":
            worker_id = addressing.index(slot)
            assert worker_id is not None, "the pipeline refuses targets that cannot give the index"
            env.append((ALL_CONTAINERS, "DMLC_WORKER_ID", worker_id))
    return Patch(contributor="MXNet", env=tuple(env))


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from ..model.extension_points import Addresses, ChecksJob, Framework, NeedsPodIndex
    from . import mxnet as _this

    _FRAMEWORK: Framework = _this
    _CHECKS: ChecksJob = _this
    _NEEDS_INDEX: NeedsPodIndex = _this
