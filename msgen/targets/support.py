"""Which MSJob policy each target expresses, written once: the warnings and the README table.

A cell is `native` (the target's own fields do it, from the Kubernetes version its feature
gate names, if any), `partly` (the target's fields do it in some cases and, in the others,
what `instead` says happens: a near miss users must know of, so it warns like a miss),
`apply` (it needs a controller at run time: `msgen apply --wait` or `msgen controller`, whose
engine is msgen/reconcile/actions.py) or `no` (the target cannot do it). When a job uses a policy its target does not express, the
render warns at the policy's position and says what happens instead; the README's table is
generated from the same cells, and a test keeps the two equal.
"""

# No `from __future__ import annotations`: it slows building NamedTuples (see msgen.plan).
from typing import Literal, NamedTuple

from .. import versions
from ..diagnostics import Diagnostic, Severity
from ..plan import ONE_ROLE_DECIDES, Options, Plan
from ..source import Path

Support = Literal["native", "partly", "apply", "no"]
TARGET_ORDER = ("indexed-job", "pod", "statefulset", "jobset", "volcano")


class Cell(NamedTuple):
    support: Support
    #: The Kubernetes feature gate (versions.GATES) the native form needs.
    gate: str | None = None
    #: What happens instead, where the target does not express the policy.
    instead: str = ""
    #: A native form that still differs from the operator's in some cases: what happens
    #: then (the cell reads "partly", with the version its gate needs).
    partly: str = ""
    #: `apply` cells that only `msgen controller` carries out (`msgen apply --wait` ends
    #: with the job, before the policy is due).
    controller_only: bool = False


N = Cell("native")


def _na(instead: str) -> Cell:
    return Cell("no", instead=instead)


def _partly(instead: str) -> Cell:
    return Cell("partly", instead=instead)


def _apply(instead: str) -> Cell:
    return Cell("apply", instead=instead)


_ALWAYS_RESTART = "StatefulSet pods always restart, whatever their exit code"
_NO_JOB = "bare Pods have no job status that could fail"
#: Kubernetes fails an Indexed Job with backoffLimitPerIndex once every index has ended and
#: one failed, before it looks at its successPolicy (the Job controller's order).
_DYNAMIC_WORKERS = (
    "a failed Worker ends only its own index and the others keep running, but once every "
    "worker has ended and one failed, {ends}, even if worker 0 succeeded: the job succeeds "
    "only when worker 0 does while the other workers still run"
)

#: row → target → cell. Row names are what the README shows.
TABLE: dict[str, dict[str, Cell]] = {
    "restartPolicy: Always / OnFailure": {t: N for t in TARGET_ORDER},
    "restartPolicy: Never": {
        "indexed-job": N, "pod": N, "jobset": N, "volcano": N,
        "statefulset": _na(_ALWAYS_RESTART),
    },
    "restartPolicy: ExitCode": {
        "indexed-job": Cell(
            "native", "JobPodFailurePolicy",
            "pods run with restartPolicy Never and every failure counts against backoffLimit, "
            "whatever its exit code",
        ),
        "jobset": Cell(
            "native", "JobPodFailurePolicy",
            "pods run with restartPolicy Never and every failure counts against backoffLimit, "
            "whatever its exit code",
        ),
        "pod": _na(
            "pods run with restartPolicy Never, so a pod killed by a signal (exit code 128 or "
            "more) is not retried"
        ),
        "statefulset": _na(_ALWAYS_RESTART),
        "volcano": _na(
            "Volcano matches one exit code per policy; pods run with restartPolicy Never and "
            "any failure is handled as with Never"
        ),
    },
    "successPolicy (default: worker 0)": {
        "indexed-job": Cell("native", "JobSuccessPolicy", "the Worker Job succeeds when every worker does"),
        "jobset": Cell("native", "JobSuccessPolicy", "the JobSet succeeds when every worker does"),
        "pod": _apply("bare Pods have no job status; each pod ends on its own"),
        "statefulset": _na("a StatefulSet never completes"),
        "volcano": _apply("the Volcano Job completes when every worker does"),
    },
    "success by the Scheduler or Tuner (MXJob)": {
        "indexed-job": _apply("each role's Job ends on its own, whatever the deciding role's outcome"),
        "pod": _apply("bare Pods have no job status; each pod ends on its own"),
        "statefulset": _na("a StatefulSet never completes"),
        "jobset": N, "volcano": N,
    },
    # Volcano completes a job early only with CompleteJob, which stops the other pods.
    "success by the Scheduler or Tuner, cleanPodPolicy None (MXJob)": {
        "indexed-job": _apply("each role's Job ends on its own, whatever the deciding role's outcome"),
        "pod": _apply("bare Pods have no job status; each pod ends on its own"),
        "statefulset": _na("a StatefulSet never completes"),
        "jobset": N,
        "volcano": _apply(
            "the Volcano Job completes when every task has (completing it with one task would "
            "stop the other tasks' pods)"
        ),
    },
    "successPolicy: AllWorkers": {
        "indexed-job": N, "jobset": N, "volcano": N,
        "pod": _apply("bare Pods have no job status; each pod ends on its own"),
        "statefulset": _na("a StatefulSet never completes"),
    },
    "runPolicy.backoffLimit": {
        "indexed-job": N, "jobset": N, "volcano": N,
        "pod": _na("a failed pod is not replaced"),
        "statefulset": _na(_ALWAYS_RESTART),
    },
    "runPolicy.activeDeadlineSeconds": {
        "indexed-job": N, "jobset": N, "volcano": N, "pod": N,
        "statefulset": _na("a StatefulSet has no deadline; its pods would be restarted"),
    },
    "runPolicy.ttlSecondsAfterFinished": {
        "indexed-job": N, "jobset": N, "volcano": N,
        "pod": Cell("apply", instead="finished pods stay until deleted", controller_only=True),
        "statefulset": _na("a StatefulSet never finishes"),
    },
    "runPolicy.cleanPodPolicy: Running": {
        "indexed-job": _apply("the Scheduler and PS Jobs' pods keep running after the Worker Job ends"),
        "pod": _apply("running pods stay when the job ends"),
        "statefulset": _na("a StatefulSet never finishes"),
        "jobset": N, "volcano": N,
    },
    "runPolicy.cleanPodPolicy: All": {
        "indexed-job": _apply("finished pods stay until the Jobs are deleted"),
        "pod": _apply("pods stay until deleted"),
        "statefulset": _na("a StatefulSet never finishes"),
        "jobset": _apply("the JobSet deletes running pods when it ends; finished pods stay"),
        "volcano": _apply("the Volcano Job deletes running pods when it ends; finished pods stay"),
    },
    "runPolicy.cleanPodPolicy: None": {
        # ms-operator left every pod running when the job ended, failed or succeeded.
        "indexed-job": _partly(
            "a role's Job that fails terminates its own running pods (the Job controller "
            "does), and so does the Worker Job when worker 0 succeeds (Kubernetes 1.31 and "
            "newer); the other roles' Jobs keep theirs"
        ),
        "volcano": _partly(
            "a failed pod of a Never or ExitCode role (but a Worker with enableDynamicWorker) "
            "ends the Volcano Job (TerminateJob, or RestartJob with backoffLimit), which "
            "deletes every running pod; finished pods stay"
        ),
        "pod": N, "statefulset": N,
        "jobset": _na("a JobSet always deletes its running pods when it ends"),
    },
    "runPolicy.schedulingPolicy (gang)": {t: N for t in TARGET_ORDER},
    "schedulingPolicy.priorityClass": {t: N for t in TARGET_ORDER},
    "enableDynamicWorker": {
        "indexed-job": Cell(
            "native", "JobBackoffLimitPerIndex", "a failed Worker fails the Worker Job",
            partly=_DYNAMIC_WORKERS.format(ends="the Worker Job fails (FailedIndexes)"),
        ),
        "jobset": Cell(
            "native", "JobBackoffLimitPerIndex", "a failed Worker fails the JobSet",
            partly=_DYNAMIC_WORKERS.format(ends="the Worker Job fails (FailedIndexes), and the JobSet with it"),
        ),
        "volcano": N,
        "pod": Cell("native", instead=_NO_JOB),
        "statefulset": N,
    },
    "--kueue-queue": {
        "indexed-job": N, "pod": N, "statefulset": N, "jobset": N,
        "volcano": _na("Kueue does not admit Volcano Jobs; Volcano queues them itself"),
    },
}  # fmt: skip


def cell(row: str, target: str) -> Cell:
    return TABLE[row][target]


def native(row: str, target: str, version: tuple[int, int]) -> bool:
    found = TABLE[row][target]
    return found.support == "native" and not found.partly and (
        found.gate is None or versions.enabled(found.gate, version))


def warning(plan: Plan, path: Path, row: str, target: str, version: tuple[int, int]) -> Diagnostic | None:
    """The warning for a policy `row` the job uses at `path`, or None where it is native."""
    found = TABLE[row][target]
    if native(row, target, version):
        return None
    if found.partly and (found.gate is None or versions.enabled(found.gate, version)):
        message = f"{row} is only partly expressed by target {target}: {found.partly}"
    elif found.support == "native":
        assert found.gate is not None
        message = (
            f"{row} needs Kubernetes {versions.since(found.gate)} or newer with target "
            f"{target}: {found.instead}"
        )
    elif found.support == "partly":
        message = f"{row} is only partly expressed by target {target}: {found.instead}"
    elif found.controller_only:
        message = (
            f"{row} needs `msgen controller` with target {target} (`msgen apply --wait` ends "
            f"with the job, before it is due); when it does not run, {found.instead}"
        )
    elif found.support == "apply":
        message = (
            f"{row} needs `msgen apply --wait` or `msgen controller` with target {target}; "
            f"when neither runs, {found.instead}"
        )
    else:
        message = f"{row} is not supported by target {target}: {found.instead}"
    return plan.document.diagnostic(path, message, severity=Severity.WARNING)


def used(plan: Plan, options: Options) -> list[tuple[str, Path]]:
    """The policy rows a job uses, each with the position to report it at."""
    out: list[tuple[str, Path]] = []
    spec = plan.document.data.get("spec") or {}
    # One finding per restart policy, at the first role that has it.
    for policy in ("Never", "ExitCode"):
        having = [role for role in plan.roles if role.restart_policy == policy]
        if having:
            out.append((f"restartPolicy: {policy}", having[0].path + ("restartPolicy",)))
    workers = plan.workers()
    decider = plan.deciding_role()
    if plan.success_policy in ONE_ROLE_DECIDES and decider is not None:
        none = ", cleanPodPolicy None" if plan.run_policy.clean_pod_policy == "None" else ""
        out.append((f"success by the Scheduler or Tuner{none} (MXJob)", decider.path))
    elif workers is not None and workers.replicas > 1:
        # Worker-0 success is a default that changes when a job ends; AllWorkers only when
        # written (an older kind's own default is every worker).
        if plan.success_policy != "AllWorkers":
            out.append(("successPolicy (default: worker 0)", workers.path))
        elif "successPolicy" in spec:
            out.append(("successPolicy: AllWorkers", ("spec", "successPolicy")))
    run = plan.run_policy
    policy_path = run.path
    for field, value in (
        ("backoffLimit", run.backoff_limit),
        ("activeDeadlineSeconds", run.active_deadline_seconds),
        ("ttlSecondsAfterFinished", run.ttl_seconds_after_finished),
    ):
        if value is not None:
            out.append((f"runPolicy.{field}", policy_path + (field,)))
    if run.clean_pod_policy_written:
        out.append(
            (f"runPolicy.cleanPodPolicy: {run.clean_pod_policy}", policy_path + ("cleanPodPolicy",))
        )
    if plan.enable_dynamic_worker:
        out.append(("enableDynamicWorker", ("spec", "enableDynamicWorker")))
    if options.kueue_queue:
        out.append(("--kueue-queue", ("kind",)))
    return out


def unexpressed(plan: Plan, options: Options, target: str) -> list[Diagnostic]:
    """A warning for every policy the job uses that `target` does not express natively."""
    out = []
    for row, path in used(plan, options):
        found = warning(plan, path, row, target, options.kube_version)
        if found is not None:
            out.append(found)
    return out


_SHOWN = {"native": "native", "partly": "partly", "apply": "needs reconciler", "no": "not supported"}


def markdown_table() -> str:
    """The README's table: each MSJob field × each target."""
    lines = [
        "| MSJob field or option | " + " | ".join(f"`{t}`" for t in TARGET_ORDER) + " |",
        "|---|" + "---|" * len(TARGET_ORDER),
    ]
    for row, cells in TABLE.items():
        shown = []
        for target in TARGET_ORDER:
            found = cells[target]
            text = _SHOWN["partly" if found.partly else found.support]
            if found.controller_only:
                text = "needs controller"
            if found.gate is not None:
                text += f" ({versions.since(found.gate)}+)"
            shown.append(text)
        lines.append(f"| `{row}` | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"
