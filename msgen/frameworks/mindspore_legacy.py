"""The environment the 2020 ms-operator gave a `kubeflow.org/v1 MSJob` (contracts §7).

On the main container (`mindspore`, or the pod's only container) of every pod:

| env           | MASTER 0     | every other pod                                        |
|---------------|--------------|--------------------------------------------------------|
| `MS_CONFIG`   | `{"cluster":{"master":[...],"worker":[...]},"task":{"type":...,"index":<i>},"environment":"cloud"}` |
| `MASTER_ADDR` | `localhost`  | the stable host name of MASTER 0                       |
| `MASTER_PORT` | the MASTER's `masterPort`                                              |
| `WORLD_SIZE`  | the sum of all replicas                                                |
| `RANK`        | 0            | MASTER: its index; WORKER: replicas of MASTER + index  |

Two deliberate differences from the 2020 operator: it gave `RANK` as the index within the
pod's own type (MASTER 0 and WORKER 0 both had rank 0), and `localhost` as `MASTER_ADDR` to
index 0 of every type (WORKER 0 talked to itself). msgen gives ranks 0..WORLD_SIZE-1, masters
first, and points every pod but MASTER 0 at MASTER 0. A rank past the first role is the index
plus a count, which Kubernetes cannot compute at run time, so the kind asks every target for
static indexes (`Plan.static_indexes`).
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic
from ..model.patch import EnvValue, Patch, literal
from ..model.plan import Options, Plan, PodSlot
from ..model.addresses import Endpoint
from .jsonenv import INDEX, with_index
from .ports import check_listed_replicas, every_replica_by_name, main_port

MASTER = "MASTER"


def needs_pod_index(plan: Plan) -> bool:
    """Per-pod values (an index inside the config, a rank) need each pod to know its index."""
    return True

def endpoints(plan: Plan) -> list[Endpoint]:
    """Every replica is addressed by name: `MS_CONFIG` lists them all."""
    return every_replica_by_name(plan)


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    return check_listed_replicas(plan, "MS_CONFIG")


def contribute(plan: Plan, slot: PodSlot, addressing: Addresses) -> Patch:
    role = slot.role
    assert slot.index is not None, "the 2020 MSJob asks targets for static indexes"
    master = plan.role(MASTER)
    assert master is not None
    port = main_port(plan, master)
    cluster = {
        r.key: [f"{addressing.replica_host(r, k)}:{main_port(plan, r)}" for k in range(r.replicas)]
        for r in plan.roles
    }
    index, _ = addressing.index_text(slot)
    config = with_index(
        {"cluster": cluster, "task": {"type": role.key, "index": INDEX}, "environment": "cloud"},
        index,
    )
    rank = slot.index
    for earlier in plan.roles:
        if earlier.replica_type == role.replica_type:
            break
        rank += earlier.replicas
    is_master_0 = role.replica_type == MASTER and slot.index == 0
    address = "localhost" if is_master_0 else addressing.replica_host(master, 0)
    main = plan.main_container
    env: tuple[tuple[str, str, EnvValue], ...] = (
        (main, "MS_CONFIG", literal(config)),
        (main, "MASTER_PORT", literal(port)),
        (main, "MASTER_ADDR", literal(address)),
        (main, "WORLD_SIZE", literal(sum(r.replicas for r in plan.roles))),
        (main, "RANK", literal(rank)),
    )
    return Patch(contributor="MindSpore (2020 MSJob)", env=env)


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from ..model.extension_points import Addresses, ChecksJob, Framework, NeedsPodIndex
    from . import mindspore_legacy as _this

    _FRAMEWORK: Framework = _this
    _CHECKS: ChecksJob = _this
    _NEEDS_INDEX: NeedsPodIndex = _this
