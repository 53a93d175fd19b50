"""Every msgen option, once: its name, `Options` field, check, help texts and hosts.

An option reaches msgen through several hosts: the command line (`msgen render --target pod`),
a job's annotation (`msgen/target`), the KRM function config's `data` (`target`), and the Argo
CD plugin's env (`ARGOCD_ENV_MSGEN_TARGET`) and Application parameters (`target`, announced in
`overlays/argocd/plugin.yaml`). They all read `ROWS`, so adding an option is a field of
`plan.Options` (its type and default) and one row here: what it accepts comes from the field's
type (a `Literal` lists the choices, a `bool` is a flag, anything else is text checked as
`check` says) and its default from the field's default.

The documents that repeat the table are generated from it: `python -m tests.generators.option_documents
--write` rewrites `plugin.yaml`'s parameters, README.md's option table and `render_argv.RENDER`
(tests fail while one of them differs). Nothing here imports click: a plain render reads
annotations with this table and must start fast.
"""

from __future__ import annotations

from ..model.plan import Options
from ..model.type_forms import Literal, arguments, origin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ..model.type_forms import NamedTuple

#: The hosts an option can come from: msgen's command line (`msgen render`, `validate`, the
#: kustomize plugin, the reconciler's commands, the Helm post-renderer's arguments), a job's
#: `msgen/<option>` annotation, the KRM function config's `data`, the Argo CD plugin (env
#: `ARGOCD_ENV_MSGEN_<OPTION>` and the Application's parameter `<option>`, announced in
#: plugin.yaml), the Helm post-renderer's env (`HELM_MSGEN_<OPTION>`).
HOSTS = frozenset({"cli", "annotation", "krm", "argocd", "helm"})


class Row(NamedTuple):
    """One option; see the module docstring for what is derived from `Options` instead."""

    #: `--<name>`, `msgen/<name>`, the KRM `data` key and the Argo CD parameter
    name: str
    #: the `plan.Options` field it sets: its type says what is accepted, its default the default
    field: str
    #: `msgen render --help`'s text
    help: str
    #: the Argo CD UI's title and tooltip of the parameter (plugin.yaml)
    title: str
    tooltip: str
    #: where `--help` lists it (ascending); the table's own order is the order messages,
    #: plugin.yaml and the README list options in
    help_order: int
    #: how free text is checked (`msgen.options.text`): version (Kubernetes'), mindspore-version,
    #: dns-label, quantity, label-value, count (a whole number, 1 or more)
    check: str | None = None
    #: an empty text unsets it (a job's annotation opting out of the run's value); the command
    #: line refuses an empty value all the same
    empty_unsets: bool = False
    short: str | None = None
    envvar: str | None = None
    metavar: str | None = None
    hosts: frozenset[str] = HOSTS


ROWS: tuple[Row, ...] = (
    Row(
        "target", "target",
        help="Workload shape: indexed-job = per role an Indexed batch/v1 Job; "
        "pod = bare Pods <job>-<rt>-<i>, as ms-operator created them; "
        "statefulset = per role a StatefulSet (pods always restart, so the job never "
        "completes: for long-running roles); jobset = one JobSet (jobset.x-k8s.io); "
        "volcano = one Volcano Job (batch.volcano.sh), gang-scheduled; "
        "trainjob = a Kubeflow Trainer TrainJob and its TrainingRuntime (trainer.kubeflow.org).",
        title="Workload shape",
        tooltip="indexed-job (per role an Indexed Job; the default), pod (bare Pods, as "
        "ms-operator created), statefulset, jobset, volcano or trainjob (Kubeflow Trainer)",
        help_order=10, short="-t",
    ),
    Row(
        "kube-version", "kube_version",
        help="Kubernetes version of the cluster (MAJOR.MINOR); decides which fields "
        "may be used. Read from KUBE_VERSION when set (Argo CD sets it).",
        title="Kubernetes version",
        tooltip="the cluster's version X.Y, 1.25 or newer (default: Argo CD's KUBE_VERSION)",
        help_order=20, check="version", envvar="KUBE_VERSION", metavar="X.Y",
    ),
    Row(
        "namespace", "namespace",
        help="Namespace for the objects of jobs whose metadata names none (a job's own "
        "namespace is kept, with a warning when it differs).",
        title="Namespace",
        tooltip="namespace of jobs that name none (default: the Application's destination "
        "namespace)",
        help_order=30, check="dns-label", short="-n", metavar="NS",
    ),
    Row(
        "scheduler-address", "scheduler_address",
        help="How pods reach the MindSpore scheduler. cluster-ip: through a ClusterIP "
        "Service <job>-scheduler-0 and the $(<SERVICE>_SERVICE_HOST) variable the kubelet "
        "injects, an IP address as ms-operator gave. dns: through the scheduler's stable "
        "DNS name <host>.<job>, no extra Service; MindSpore takes only an IP address, so "
        "PS and Worker commands are wrapped to resolve the name when the container starts "
        "(they must set `command`).",
        title="Scheduler address",
        tooltip="cluster-ip (an IP through the scheduler's ClusterIP Service; the default) or dns",
        help_order=40,
    ),
    Row(
        "allow-env-override", "allow_env_override",
        help="Keep a template's own value for a variable msgen sets (MS_*, device "
        "variables) instead of reporting it as an error.",
        title="Allow env override",
        tooltip="true: keep a template's own value for a variable msgen sets (default false)",
        help_order=80,
    ),
    Row(
        "argocd-sync-waves", "argocd_sync_waves",
        help="Annotate objects with Argo CD sync waves: ConfigMaps, ServiceAccounts, Services, "
        "PodGroups and TrainingRuntimes in wave -1, "
        "workloads in wave 0, so Argo CD creates what the pods rely on first.",
        title="Sync waves",
        tooltip="true: ConfigMaps, Services, PodGroups and TrainingRuntimes in wave -1, before "
        "the workloads in wave 0 (default false)",
        help_order=70,
    ),
    Row(
        "gang-scheduler", "gang_scheduler",
        help="Gang-schedule the job's pods with a PodGroup <job>: volcano = "
        "scheduling.volcano.sh PodGroup, pods on schedulerName volcano; scheduler-plugins "
        "= scheduling.x-k8s.io PodGroup, pods on scheduler-plugins-scheduler unless the "
        "template names one; kubernetes = Kubernetes' own Workload and PodGroup "
        "(scheduling.k8s.io/v1beta1, 1.37+ with the GenericWorkload feature gate on), pods "
        "naming it in spec.schedulingGroup, for the default scheduler. Sized from "
        "runPolicy.schedulingPolicy (minAvailable, else every pod; minResources, else the "
        "pods' requests). --target volcano gangs itself.",
        title="Gang scheduler",
        tooltip="none (the default), volcano, scheduler-plugins or kubernetes (the Workload API, "
        "1.37+): a PodGroup for jobs with a schedulingPolicy",
        help_order=50,
    ),
    Row(
        "kueue-queue", "kueue_queue",
        help="Submit the workloads to Kueue's LocalQueue NAME: labelled "
        "kueue.x-k8s.io/queue-name, for Kueue to admit (Kueue's webhook suspends them "
        "until then).",
        title="Kueue queue",
        tooltip="a Kueue LocalQueue name: workloads are labelled with it (Kueue suspends them "
        "until it admits them)",
        help_order=60, check="dns-label", empty_unsets=True, metavar="NAME",
    ),
    Row(
        "launcher", "launcher",
        help="Who starts one MindSpore process per device in a Worker pod that asks for "
        "several: per-device = msgen's launcher script (default for MSJob); msrun = "
        "MindSpore's msrun; none = the command fans out itself (default for AscendJob).",
        title="Launcher",
        tooltip="who starts one process per device in a multi-device Worker pod: per-device, "
        "msrun or none (default: per kind)",
        help_order=110,
    ),
    Row(
        "rank-table", "rank_table",
        help="Ascend rank table: none = MindSpore's dynamic cluster; operator = the "
        "ConfigMap rings-config-<workload> that the cluster's Ascend components fill "
        "(targets volcano and statefulset).",
        title="Rank table",
        tooltip="Ascend rank table: none (the default) or operator",
        help_order=120,
    ),
    Row(
        "shm-size", "shm_size",
        help="Size of the memory-backed /dev/shm of Ascend pods (default 16Gi).",
        title="Shared memory size",
        tooltip="size of Ascend pods' memory-backed /dev/shm (default 16Gi)",
        help_order=130, check="quantity", metavar="SIZE",
    ),
    Row(
        "accelerator-type", "accelerator_type",
        help="Ascend chip as the node label accelerator-type names it (module-910b-8, "
        "module-a3-16, ...): Ascend pods get that node selector.",
        title="Accelerator type",
        tooltip="the Ascend chip's node label value (module-910b-8, ...): node selector of "
        "Ascend pods",
        help_order=140, check="label-value", metavar="TYPE",
    ),
    Row(
        "recovery-volume", "recovery_volume",
        help="Enable MindSpore disaster recovery: MS_ENABLE_RECOVERY=1 (a restarted "
        "process rejoins the cluster) and MS_RECOVERY_PATH = where this volume of the pod "
        "template is mounted (read by older releases; MindSpore 2.10 reads only the first).",
        title="Recovery volume",
        tooltip="MindSpore disaster recovery, its state on this volume of the template",
        help_order=150, check="dns-label", metavar="VOLUME",
    ),
    Row(
        "mindspore-version", "mindspore_version",
        help="MindSpore release of the job's image (2.7 to 2.10; a patch such as 2.7.2 where "
        "releases of one minor differ): msgen writes the environment that release reads "
        "(MS_RECOVERY_PATH for 2.7.0) and refuses settings it cannot run with "
        "(MS_HEARTBEAT_RETRY_TIMEOUT not below MS_NODE_TIMEOUT, 2.8 and newer).",
        title="MindSpore version",
        tooltip="the MindSpore release of the job's image, 2.7.0 to 2.10.0 (default: the newest)",
        help_order=155, check="mindspore-version", metavar="X.Y[.Z]",
    ),
    Row(
        "gitops", "gitops",
        help="The output is applied by a GitOps tool (Argo CD, Flux) that re-creates what "
        "the cluster deletes: ttlSecondsAfterFinished is not rendered (the job would run "
        "again) and msgen's controller deletes no bare Pod. The Argo CD plugin sets it.",
        title="GitOps",
        tooltip="true under this plugin: no ttlSecondsAfterFinished (Argo CD would re-create "
        "the deleted job and it would run again)",
        help_order=90,
    ),
    Row(
        "max-output-objects", "max_output_objects",
        help="The most objects one run may write in all; past it the run fails, writing "
        "nothing (a bound for input that would make millions of objects).",
        title="Most objects",
        tooltip="the most objects one render may write; the default and the most is the "
        "sidecar's ceiling (MSGEN_ARGOCD_MAX_OUTPUT_OBJECTS, 20000 unless set)",
        help_order=160, check="count", metavar="N", hosts=frozenset({"cli", "krm", "argocd"}),
    ),
    Row(
        "max-output-size", "max_output_size",
        help="The most output one run may write in all, a size such as 256Mi or 1Gi; past "
        "it the run fails, writing nothing.",
        title="Most output",
        tooltip="the most output one render may write, a size such as 4Mi; the default and the "
        "most is the sidecar's ceiling (MSGEN_ARGOCD_MAX_OUTPUT_SIZE, 16Mi unless set)",
        help_order=170, check="quantity", metavar="SIZE", hosts=frozenset({"cli", "krm", "argocd"}),
    ),
    Row(
        "run-name", "run_name",
        help="Names of the job's objects: job = after the job; content = after the job "
        "and a digest of its spec and options (<job>-<8 hex>), so a changed job is a new "
        "run instead of an update the API server refuses (a Job's template is immutable).",
        title="Run name",
        tooltip="job (objects named after the job; the default) or content (<job>-<digest of "
        "its spec and options>: a changed job is a new run, the old one is pruned)",
        help_order=100,
    ),
    Row(
        "quiet", "quiet",
        help="Report errors only: no warnings on standard error.",
        title="Quiet",
        tooltip="true: errors only, no warnings",
        help_order=160, short="-q", hosts=frozenset({"cli"}),
    ),
)  # fmt: skip

#: option name → row
BY_NAME: dict[str, Row] = {row.name: row for row in ROWS}
#: `Options` field → row
BY_FIELD: dict[str, Row] = {row.field: row for row in ROWS}


def names(host: str | None = None) -> list[str]:
    """The option names `host` takes (every option's when None), in the table's order."""
    return [row.name for row in ROWS if host is None or host in row.hosts]


def field_type(row: Row) -> Any:
    """The type of `row`'s `Options` field, without its `| None`."""
    kind = Options.__annotations__[row.field]  # objects: plan.py postpones no annotation
    args = [a for a in arguments(kind) if a is not type(None)]
    if not _is_literal(kind) and len(args) == 1:
        return args[0]  # `X | None`
    return kind


def choices(row: Row) -> tuple[str, ...] | None:
    """What a text host accepts: the field's `Literal` values, `true`/`false` for a `bool`,
    None for free text (checked as `row.check` says)."""
    kind = field_type(row)
    if kind is bool:
        return ("true", "false")
    if _is_literal(kind):
        return tuple(str(value) for value in arguments(kind))
    return None


def _is_literal(kind: Any) -> bool:
    return origin(kind) is Literal  # msgen.model.type_forms': plan.py's at run time


def is_flag(row: Row) -> bool:
    """Whether the command line takes it as a flag (`--gitops`): a `bool` field."""
    return field_type(row) is bool


def default(row: Row) -> Any:
    """The field's default in `Options`."""
    return Options._field_defaults[row.field]


def default_text(row: Row) -> str | None:
    """The default as a user writes it (`1.37`), None when there is none or it is a flag's."""
    value = default(row)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, tuple):
        return ".".join(str(part) for part in value)
    return str(value)



if __name__ == "__main__":  # the generator lives apart, so that this table imports no writer
    raise SystemExit("the files that repeat this table: python -m tests.generators.option_documents --write")
