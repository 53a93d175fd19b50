"""Caffe2's shard environment, as caffe2-operator gave it (contracts §6).

On every container, in the operator's order (`controller_pod.go` `createNewPod`):
`REDIS_HOST`, `REDIS_PORT`, `NFS_PATH` (always all three, from `backendSpecs`), `SHARD_ID`
(the pod's index), `NUM_SHARDS` (replicas), `RUN_ID`, `CAFFE2_CONFIG`
(`{"cluster":{"worker":["<host>:2222",...]},"task":{"type":"worker","index":<i>}}`).

Caffe2 has no parameter server: shards meet through Redis keys or files under `NFS_PATH`,
scoped by `RUN_ID`. caffe2-operator used a fresh timestamp per run. msgen's output must not
change from render to render, so `RUN_ID` is read at run time from the identity of the
workload object the target creates (`Naming.run_identity`: the Job's, JobSet's or Volcano
Job's UID; one value for every shard of one run, a new value when the object is created
again). A target without such an object (`pod`, `statefulset`) gets the job name, with a
warning to clear the rendezvous between runs.

The shards reach each other by host name, so no Service needs a port and none is added to the
container: `CAFFE2_CONFIG` names the operator's port 2222 (or the container's own port called
`caffe2job-port`, where one is declared).
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic, Severity
from ..model.patch import ALL_CONTAINERS, EnvValue, Patch, literal
from ..model.plan import Options, Plan, PodSlot, Role
from ..model.addresses import Endpoint
from .jsonenv import INDEX, with_index
from .ports import check_listed_replicas

#: The port caffe2-operator wrote into `CAFFE2_CONFIG` (`api.Caffe2Port`); it added none.
DEFAULT_PORT = 2222

#: Keys of `Plan.framework_settings`, set by the Caffe2Job kind from `spec.backendSpecs`.
REDIS_HOST = "REDIS_HOST"
REDIS_PORT = "REDIS_PORT"
NFS_PATH = "NFS_PATH"


def needs_pod_index(plan: Plan) -> bool:
    """Per-pod values (an index inside the config, a rank) need each pod to know its index."""
    return True

def endpoints(plan: Plan) -> list[Endpoint]:
    """Every shard is addressed by name (`CAFFE2_CONFIG` lists them all), so the job's only
    Service is the headless one, which needs no port."""
    return [
        Endpoint(role, index, (), by_name=True)
        for role in plan.roles
        for index in range(role.replicas)
    ]


def config_port(plan: Plan, role: Role) -> int:
    """The port `CAFFE2_CONFIG` lists: the container's own `caffe2job-port`, else 2222."""
    for container in role.containers():
        if container["name"] == plan.main_container:
            for port in container.get("ports") or []:
                if port.get("name") == plan.port_name:
                    return int(port["containerPort"])
    return DEFAULT_PORT


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    from .. import targets

    found = check_listed_replicas(plan, "CAFFE2_CONFIG")
    if found or targets.lookup(options.target).naming(plan, options).run_identity is not None:
        return found
    return [
        plan.document.diagnostic(
            ("spec", "replicaSpecs"),
            f"target {options.target} creates no object whose identity changes from run to "
            f"run: RUN_ID is the job name ({plan.name!r}), so clear the Redis keys or NFS "
            "directory of a previous run before running the job again",
            severity=Severity.WARNING,
        )
    ]


def contribute(plan: Plan, slot: PodSlot, addressing: Addresses) -> Patch:
    role = slot.role
    index, requires = addressing.index_text(slot)
    port = config_port(plan, role)
    hosts = [f"{addressing.replica_host(role, k)}:{port}" for k in range(role.replicas)]
    config = with_index(
        {"cluster": {"worker": hosts}, "task": {"type": "worker", "index": INDEX}}, index
    )
    run_id = addressing.naming.run_identity or literal(plan.name)
    shard = addressing.index(slot)
    assert shard is not None, "the pipeline refuses targets that cannot give the index"
    env: list[tuple[str, str, EnvValue]] = [
        (ALL_CONTAINERS, name, literal(plan.framework_settings.get(name, "")))
        for name in (REDIS_HOST, REDIS_PORT, NFS_PATH)
    ]
    env += [
        (ALL_CONTAINERS, "SHARD_ID", shard),
        (ALL_CONTAINERS, "NUM_SHARDS", literal(role.replicas)),
        (ALL_CONTAINERS, "RUN_ID", run_id),
        (ALL_CONTAINERS, "CAFFE2_CONFIG", EnvValue(value=config, requires=requires)),
    ]
    return Patch(contributor="Caffe2", env=tuple(env))


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from ..model.extension_points import Addresses, ChecksJob, Framework, NeedsPodIndex
    from . import caffe2 as _this

    _FRAMEWORK: Framework = _this
    _CHECKS: ChecksJob = _this
    _NEEDS_INDEX: NeedsPodIndex = _this
