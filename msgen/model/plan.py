"""The normalised intermediate form every input kind compiles to.

A `Plan` says what a job *is* (roles, replicas, pod templates, policies) with every default
already applied and every input check already passed, so the later stages (frameworks,
devices, targets) never look at input syntax. Between stages values are frozen; a stage that
needs to change a pod template works on its own copy.

The records are `NamedTuple`s (and plain classes with slots where a field is named like a tuple
method): a render is a fresh process, and importing `dataclasses` (which imports `inspect`) and
building its classes was a large share of a cold render's start-up; immutability is kept, and
`_replace` is `dataclasses.replace`. At run time `NamedTuple`, `Literal` and `Any` are
`msgen.model.type_forms`' (no `typing` on a render's path). This module's annotations are not
postponed: `msgen.options.option_table` reads the choices of `Options`' fields from them.
"""

from .source import Document, Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, NamedTuple
else:
    from .type_forms import Any, Literal, NamedTuple

RestartPolicy = Literal["Always", "OnFailure", "Never", "ExitCode"]
CleanPodPolicy = Literal["All", "Running", "None"]
AddressMode = Literal["cluster-ip", "dns"]
TargetName = Literal["indexed-job", "pod", "statefulset", "jobset", "volcano", "trainjob"]
GangScheduler = Literal["none", "volcano", "scheduler-plugins", "kubernetes"]
LauncherName = Literal["per-device", "msrun", "none"]
RankTableMode = Literal["none", "operator"]
RunName = Literal["job", "content"]
ProcessContract = Literal["ms-operator", "ascend-operator"]
#: `Plan.success_policy`, the one set of names the kinds, the targets and the run-policy
#: annotation (msgen.model.run_policy) share. The MSJob default: the job succeeds when worker 0
#: exits 0.
WORKER0 = "Worker0"
#: ... when every Worker does.
ALL_WORKERS = "AllWorkers"
#: ... when its Scheduler does (MXNet's operators).
SCHEDULER_DECIDES = "Scheduler"
#: ... and of an MXNet tuning job, whose outcome is its Tuner's (kubeflow mxnet-operator).
TUNER_DECIDES = "Tuner"
#: The success policies that name the one role whose success is the job's.
ONE_ROLE_DECIDES = (SCHEDULER_DECIDES, TUNER_DECIDES)


class Role(NamedTuple):
    """One replica type of a job: `Scheduler`, `PS`, `Worker`, ..."""

    replica_type: str
    replicas: int
    restart_policy: RestartPolicy
    template: dict[str, Any]
    path: Path

    @property
    def key(self) -> str:
        """The lower-case name used in object names and labels (`<job>-<key>-<i>`)."""
        return self.replica_type.lower()

    def containers(self) -> list[dict[str, Any]]:
        containers: list[dict[str, Any]] = self.template["spec"]["containers"]
        return containers


class SchedulingPolicy(NamedTuple):
    min_available: int | None = None
    queue: str | None = None
    min_resources: dict[str, Any] | None = None
    priority_class: str | None = None


class RunPolicy(NamedTuple):
    clean_pod_policy: CleanPodPolicy = "Running"
    clean_pod_policy_written: bool = False
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
    scheduling: SchedulingPolicy | None = None
    #: Where the input writes these fields: `spec.runPolicy`, or `spec` for a kind that has
    #: them inline (kubeflow mxnet-operator's MXJob); warnings point there.
    path: Path = ("spec", "runPolicy")


class Plan(NamedTuple):
    """A compiled job, before any target has shaped it into Kubernetes objects."""

    api_version: str
    kind: str
    name: str
    namespace: str | None
    labels: dict[str, str]
    framework: str
    main_container: str
    port_name: str
    roles: tuple[Role, ...]
    run_policy: RunPolicy
    success_policy: str
    enable_dynamic_worker: bool
    #: the input document (for positions of findings); compared by identity
    document: Document
    #: Per-pod values of this job are not a plain index (the 2020 MSJob's RANK is the index
    #: plus the replicas of the roles before it, and Kubernetes cannot add at run time), so
    #: every target must give every pod a static index.
    static_indexes: bool = False
    #: Values of the input a framework's env needs beyond roles and ports (Caffe2's backend;
    #: an AscendJob's fault-tolerance env, name → value).
    framework_settings: dict[str, str] = {}  # never mutated: a stage that adds makes a new one
    #: How a Worker pod's processes are told apart. `ms-operator`: one process per pod, or per
    #: device when a Worker asks for several (msgen's launcher starts them by default).
    #: `ascend-operator`: every Worker pod gets MS_LOCAL_WORKER and MS_NODE_RANK and its
    #: command starts one process per device itself (launcher `none` by default).
    process_contract: ProcessContract = "ms-operator"

    def role(self, replica_type: str) -> Role | None:
        for role in self.roles:
            if role.replica_type == replica_type:
                return role
        return None

    def workers(self) -> Role | None:
        """The role whose success is the job's: `Worker`, however a kind spells it."""
        for role in self.roles:
            if role.key == "worker":
                return role
        return None

    def deciding_role(self) -> Role | None:
        """The role whose success is the job's success: the one the kind names (`success_policy`
        `Scheduler` or `Tuner`: MXNet's operators), else the Workers."""
        if self.success_policy in ONE_ROLE_DECIDES:
            return self.role(self.success_policy)
        return self.workers()

    def replicas(self, replica_type: str) -> int:
        role = self.role(replica_type)
        return role.replicas if role is not None else 0


class Options(NamedTuple):
    """What the user chose on the command line (or a plug-in host passed on)."""

    target: TargetName = "indexed-job"
    kube_version: tuple[int, int] = (1, 37)
    namespace: str | None = None
    #: the namespace the host puts on every object that names none (Argo CD's destination,
    #: inside the sidecar's kustomize build): msgen leaves it off its objects, where a
    #: generated ConfigMap (which names none) must meet them for kustomize to follow its hashed
    #: name, and still renders for it what holds the namespace (caffe2_job_key)
    destination_namespace: str | None = None
    scheduler_address: AddressMode = "cluster-ip"
    allow_env_override: bool = False
    argocd_sync_waves: bool = False
    gang_scheduler: GangScheduler = "none"
    kueue_queue: str | None = None
    #: who starts one process per device in a multi-device Worker pod; None: the input kind's
    #: default (per-device for MSJob, none for AscendJob)
    launcher: LauncherName | None = None
    #: Ascend rank table: none (MindSpore's dynamic cluster) or filled by the cluster's operator
    rank_table: RankTableMode = "none"
    #: size of the memory-backed /dev/shm of Ascend pods; None: msgen's default
    shm_size: str | None = None
    #: the Ascend chip's node label value (`accelerator-type`), e.g. module-910b-8
    accelerator_type: str | None = None
    #: a volume of the pod template that holds MindSpore's disaster-recovery state
    recovery_volume: str | None = None
    #: the MindSpore release the job's image installs (msgen.model.mindspore_versions): which
    #: of MindSpore's environment it reads
    mindspore_version: tuple[int, int, int] = (2, 10, 0)
    #: the output is applied by a GitOps tool (Argo CD, Flux) that re-creates what is deleted:
    #: nothing may delete a finished job's objects (no TTL), see msgen.compile.lifecycle
    gitops: bool = False
    #: `job`: objects are named after the job; `content`: after the job and a digest of its
    #: spec and options, so a changed job is a new run (see msgen.compile.lifecycle)
    run_name: RunName = "job"
    #: the `group/version` and `group/version/Kind` the cluster serves (Argo CD's
    #: KUBE_API_VERSIONS); None: unknown, nothing is checked
    served_apis: frozenset[str] | None = None
    #: the most objects, and the most output (a size, `256Mi`), one run may write in all
    #: (msgen.checks.output_bound): a bound past which the run fails instead of filling memory,
    #: disk or the cluster
    max_output_objects: int = 200_000
    max_output_size: str = "256Mi"
        #: who set each option, `(option, "PARAM_TARGET='pod'")`, when the command line or a
    #: plug-in host set them (msgen.options.option_layers): a job annotation overriding one says so
    origins: tuple[tuple[str, str], ...] = ()
    #: report errors only, not warnings (the command line's -q)
    quiet: bool = False


class PodSlot:
    """One pod template a target will emit: a role, and the replica index when it is static."""

    __slots__ = ("role", "index")

    def __init__(self, role: Role, index: int | None):
        self.role = role
        self.index = index

    def __repr__(self) -> str:
        return f"PodSlot({self.role.replica_type!r}, {self.index!r})"
