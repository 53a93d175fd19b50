"""`kubeflow.org/v1 MXJob`, as training-operator (and kubeflow's mxnet-operator) accepted it.

Defaulting and validation follow the operator (contracts §5): `jobMode` is `MXTrain`
(replica types Scheduler, Server, Worker) or `MXTune` (TunerTracker, TunerServer, Tuner);
`replicas` defaults to 1, `restartPolicy` to Never; every replica has a container named
`mxnet` with an image, which gets port `mxjob-port` 9091 unless it names one itself; at most
one Scheduler, TunerTracker and Tuner. The job's outcome follows the Scheduler (a tuning
job's, its Tuner), so Workers have no "worker 0 decides" success rule. The run policy is
training-operator's `spec.runPolicy` or kubeflow mxnet-operator's inline form
(`mxjob_run_policy`). The job's declaration is `mxjob_model`.
"""

from __future__ import annotations


from ...model.diagnostics import Diagnostic, Severity
from ...frameworks.mxnet import TUNER_SERVER_KEY
from ...model.plan import ALL_WORKERS, SCHEDULER_DECIDES, TUNER_DECIDES, Role, RunPolicy
from ...model.source import Document, Path
from .labels import tuner_keys
from .model import MXJob
from .run_policy import run_policy
from ...model.patch import copy_data
from ..shared import InputKind, PlanFields, ensure_port, main_container, replica_role, replica_type_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from ...model.extension_points import JobKind

API_VERSION = "kubeflow.org/v1"
KIND_NAME = "MXJob"
MAIN_CONTAINER = "mxnet"
PORT_NAME = "mxjob-port"
DEFAULT_PORT = 9091
MODES: dict[str, tuple[str, ...]] = {
    "MXTrain": ("Scheduler", "Server", "Worker"),
    "MXTune": ("TunerTracker", "TunerServer", "Tuner"),
}
SINGLE = ("Scheduler", "TunerTracker", "Tuner")


def check_replica(
    template: dict[str, Any],
    document: Document,
    path: Path,
    replica_type: str,
    replicas: int,
    out: list[Diagnostic],
    *,
    replicas_path: Path,
    default_port: int = DEFAULT_PORT,
) -> None:
    """The operator's per-replica rules, and its port default, on a copy of the template."""
    if replica_type in SINGLE and replicas > 1:
        out.append(
            document.diagnostic(
                replicas_path,
                f"more than one {replica_type}: replicas {replicas}; accepted: 1",
            )
        )
    main = main_container(
        template, document, path, replica_type, MAIN_CONTAINER, out, only_one_is_main=False
    )
    if main is not None:
        ensure_port(main, PORT_NAME, default_port)


def mxnet_fields(
    roles: tuple[Role, ...],
    run_policy: RunPolicy,
    *,
    framework: str = "mxnet",
    framework_settings: dict[str, str] | None = None,
) -> PlanFields:
    """What an MXNet job's Plan says, for both operators' kinds (`framework`: their env)."""
    return PlanFields(
        framework=framework,
        main_container=MAIN_CONTAINER,
        port_name=PORT_NAME,
        run_policy=run_policy,
        success_policy=_success_policy(roles),
        framework_settings=dict(framework_settings or {}),
    )


def _success_policy(roles: tuple[Role, ...]) -> str:
    """training-operator's UpdateJobStatus (and the original operator's GetStatus): the
    Scheduler's success is the job's; without a Scheduler, the single Worker's. A tuning job
    ends with its Tuner, as kubeflow mxnet-operator's ended it (1.0: the Tuner's success; 1.1:
    the first role whose pods all succeeded, the Tuner, since the TVM RPC tracker and servers
    serve until stopped). training-operator never marked a tuning job succeeded."""
    for decides in (SCHEDULER_DECIDES, TUNER_DECIDES):
        if any(role.replica_type == decides and role.replicas for role in roles):
            return decides
    return ALL_WORKERS


class MXJobKind(InputKind[MXJob]):
    api_version = API_VERSION
    kind = KIND_NAME
    input_model = MXJob

    def roles(self, job: MXJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
        return _roles(job, document, out)

    def fields(
        self, job: MXJob, roles: tuple[Role, ...], document: Document, out: list[Diagnostic]
    ) -> PlanFields:
        policy = run_policy(job.spec, document, out)
        written = job.spec.mxReplicaSpecs  # keyed as the job spells the replica types
        keys = tuner_keys(
            {
                role.replica_type: (
                    role.path,
                    written[str(role.path[-1])].label,
                    _annotation(role.template, TUNER_SERVER_KEY),
                )
                for role in roles
            },
            job.spec.jobMode,
            document,
            out,
        )
        return mxnet_fields(roles, policy, framework_settings=keys)


def _roles(job: MXJob, document: Document, out: list[Diagnostic]) -> tuple[Role, ...]:
    mode = job.spec.jobMode
    accepted = MODES[mode]
    raw_specs: dict[str, Any] = document.data["spec"]["mxReplicaSpecs"]
    found: dict[str, Role] = {}
    keys: dict[str, str] = {}
    for key, spec in job.spec.mxReplicaSpecs.items():
        path: Path = ("spec", "mxReplicaSpecs", key)
        known = {t.lower() for t in accepted}
        replica_type = replica_type_of(key, accepted, keys, document, path, out)
        if replica_type is None:
            if key.lower() in known:
                continue  # a second key for one type, reported
            other = next(
                (m for m, types in MODES.items() if key.lower() in {t.lower() for t in types}),
                None,
            )
            hint = f" (a {other} replica type)" if other else ""
            out.append(
                document.diagnostic(
                    path,
                    f"replica type {key!r} is not accepted in jobMode {mode}{hint}; "
                    f"accepted: {', '.join(accepted)}",
                    key=True,
                )
            )
            continue
        replicas = 1 if spec.replicas is None else spec.replicas
        template = copy_data(raw_specs[key]["template"])
        check_replica(
            template, document, path, replica_type, replicas, out,
            replicas_path=path + ("replicas",),
        )
        found[replica_type] = replica_role(replica_type, replicas, spec.restartPolicy, template, document, path,
                                           out, "the operator")
    if mode == "MXTrain" and found and "Scheduler" not in found:
        out.append(
            document.diagnostic(
                ("spec", "mxReplicaSpecs"),
                "jobMode MXTrain without a Scheduler: the pods get no MXNet cluster env, so "
                "ps-lite's Servers and Workers cannot find each other; add a Scheduler replica "
                "for distributed training",
                severity=Severity.WARNING,
            )
        )
    return tuple(found[t] for t in accepted if t in found)


def _annotation(template: dict[str, Any], name: str) -> str | None:
    value = ((template.get("metadata") or {}).get("annotations") or {}).get(name)
    return None if value is None else str(value)


KIND: JobKind = MXJobKind()
