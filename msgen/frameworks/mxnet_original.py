"""The original mxnet-operator's env (`mxnet.mlkube.io/v1beta1 MxJob`, contracts §5).

deepinsight/mxnet-operator `pkg/trainer/replicas.go` `createDist` set, in `jobMode: dist`,
on container `mxnet` only (other containers got nothing):

- `DMLC_PS_ROOT_PORT`: the SCHEDULER's `PsRootPort`;
- `DMLC_PS_ROOT_URI`: scheduler 0, through the operator's ClusterIP Service
  `<job>-scheduler-<runtimeId>-0`; here its stable DNS name, which ps-lite resolves alike;
- `DMLC_NUM_SERVER`, `DMLC_NUM_WORKER`: the SERVER and WORKER replicas;
- `DMLC_ROLE`: `scheduler`, `server` or `worker`.

No `MX_CONFIG`, `DMLC_USE_KUBERNETES` or `DMLC_WORKER_ID` (those came with kubeflow's
operators), and nothing in `jobMode: local`. No value differs between the pods of a role, so
this env needs no pod index and every target can carry it.
"""

from __future__ import annotations

from ..model.patch import EnvValue, Patch, literal
from ..model.plan import Plan, PodSlot
from ..model.addresses import Endpoint
from .ports import main_port


def endpoints(plan: Plan) -> list[Endpoint]:
    """Only the scheduler is reached, by name; a job without one is local."""
    scheduler = plan.role("Scheduler")
    if scheduler is None or scheduler.replicas == 0:
        return []
    port = {"name": plan.port_name, "port": main_port(plan, scheduler)}
    return [Endpoint(scheduler, 0, (port,), by_name=True)]


def contribute(plan: Plan, slot: PodSlot, addressing: Addresses) -> Patch:
    scheduler = plan.role("Scheduler")
    if scheduler is None or not addressing.distributed:
        return Patch(contributor="MXNet")
    values: dict[str, EnvValue] = {
        "DMLC_PS_ROOT_PORT": literal(main_port(plan, scheduler)),
        "DMLC_PS_ROOT_URI": literal(addressing.replica_host(scheduler, 0)),
        "DMLC_NUM_SERVER": literal(plan.replicas("Server")),
        "DMLC_NUM_WORKER": literal(plan.replicas("Worker")),
        "DMLC_ROLE": literal(slot.role.key),
    }
    return Patch(
        contributor="MXNet",
        env=tuple((plan.main_container, name, value) for name, value in values.items()),
    )


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from ..model.extension_points import Addresses, Framework
    from . import mxnet_original as _this

    _FRAMEWORK: Framework = _this
