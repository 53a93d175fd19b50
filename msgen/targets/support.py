"""How targets express MSJob policies: the policies (rows), the warnings and the README table.

Each target declares its own cells (`Target.support`, one per row of `ROWS`) in its module.

A cell is `native` (the target's own fields do it, from the Kubernetes version its feature
gate names, if any), `partly` (the target's fields do it in some cases and, in the others,
what `instead` says happens: a near miss users must know of, so it warns like a miss),
`apply` (it needs a controller at run time: `msgen apply --wait` or `msgen controller`, whose
engine is msgen/reconcile/actions.py) or `no` (the target cannot do it). When a job uses a policy its target does not express, the
render warns at the policy's position and says what happens instead; the README's table is
generated from the same cells, and a test keeps the two equal.
"""

from __future__ import annotations

from .. import targets
from ..model import versions
from ..model.diagnostics import Diagnostic, Severity
from ..model.plan import ALL_WORKERS, ONE_ROLE_DECIDES, Options, Plan
from ..model.source import Path
from .cells import Cell

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..model.extension_points import Target

#: The policies a job may use, as the README's rows name them, in the README's order. Each
#: target's `support` has a cell for every row (tests/test_target_plugins.py checks it).
ROWS = (
    "restartPolicy: Always / OnFailure",
    "restartPolicy: Never",
    "restartPolicy: ExitCode",
    "successPolicy (default: worker 0)",
    "success by the Scheduler or Tuner (MXJob)",
    # Volcano completes a job early only with CompleteJob, which stops the other pods.
    "success by the Scheduler or Tuner, cleanPodPolicy None (MXJob)",
    "successPolicy: AllWorkers",
    "runPolicy.backoffLimit",
    # ms-operator counted failures across the whole job; a workload per role counts its own.
    "runPolicy.backoffLimit, several roles",
    "runPolicy.activeDeadlineSeconds",
    "runPolicy.ttlSecondsAfterFinished",
    "runPolicy.cleanPodPolicy: Running",
    "runPolicy.cleanPodPolicy: All",
    "runPolicy.cleanPodPolicy: None",
    "runPolicy.schedulingPolicy (gang)",
    "schedulingPolicy.priorityClass",
    "enableDynamicWorker",
    "--kueue-queue",
)


def table() -> dict[str, dict[str, Cell]]:
    """row → target → cell, for every target (this imports them all: the README and tests)."""
    found = {name: targets.lookup(name).support for name in targets.NAMES}
    return {row: {name: cells[row] for name, cells in found.items()} for row in ROWS}


def native(found: Cell, version: tuple[int, int]) -> bool:
    return found.support == "native" and not found.partly and (
        found.gate is None or versions.enabled(found.gate, version))


def warning(plan: Plan, path: Path, row: str, target: Target, version: tuple[int, int]) -> Diagnostic | None:
    """The warning for a policy `row` the job uses at `path`, or None where it is native."""
    found = target.support[row]
    name = target.name
    if native(found, version):
        return None
    subject = _subject(row, path)
    is_ = f"{subject} is " if subject else ""
    needs = f"{subject} needs" if subject else "needs"
    if found.partly and (found.gate is None or versions.enabled(found.gate, version)):
        message = f"{is_}only partly expressed by target {name}: {found.partly}"
    elif found.support == "native":
        assert found.gate is not None
        message = (
            f"{needs} Kubernetes {versions.since(found.gate)} or newer with target "
            f"{name}: {found.instead}"
        )
    elif found.support == "partly":
        message = f"{is_}only partly expressed by target {name}: {found.instead}"
    elif found.controller_only:
        message = (
            f"{needs} `msgen controller` with target {name} (`msgen apply --wait` ends "
            f"with the job, before it is due); when it does not run, {found.instead}"
        )
    elif found.support == "apply":
        message = (
            f"{needs} `msgen apply --wait` or `msgen controller` with target {name}; "
            f"when neither runs, {found.instead}"
        )
    else:
        message = f"{is_}not supported by target {name}: {found.instead}"
    return plan.document.diagnostic(path, message, severity=Severity.WARNING)


#: What a row's finding says of the field it stands at, where the row's name would repeat the
#: path the finding is printed with (`spec.runPolicy.backoffLimit: runPolicy.backoffLimit ...`).
_AT_ITS_FIELD = {"runPolicy.backoffLimit, several roles": "a limit shared by several roles"}


def _subject(row: str, path: Path) -> str:
    """The subject of a row's message at `path`: the row, but for what the path already says
    (`restartPolicy: Never` at a `restartPolicy` is `Never`; a bare field there, nothing)."""
    field, _, value = row.partition(": ")
    at_field = bool(path) and path[-1] == field.rsplit(".", 1)[-1].split(",", 1)[0]
    if not at_field:
        return row
    if row in _AT_ITS_FIELD:
        return _AT_ITS_FIELD[row]
    return value


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
        if plan.success_policy != ALL_WORKERS:
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
            several = field == "backoffLimit" and len(retrying_roles(plan)) > 1
            row = f"runPolicy.{field}" + (", several roles" if several else "")
            out.append((row, policy_path + (field,)))
    if run.clean_pod_policy_written:
        out.append(
            (f"runPolicy.cleanPodPolicy: {run.clean_pod_policy}", policy_path + ("cleanPodPolicy",))
        )
    if plan.enable_dynamic_worker:
        out.append(("enableDynamicWorker", ("spec", "enableDynamicWorker")))
    if options.kueue_queue:
        out.append(("--kueue-queue", ("kind",)))
    return out


def retrying_roles(plan: Plan) -> list[str]:
    """The roles whose failures count against `runPolicy.backoffLimit`: those with pods, but
    the Workers of a job with enableDynamicWorker (each has its own limit)."""
    return [
        role.replica_type
        for role in plan.roles
        if role.replicas > 0 and not (plan.enable_dynamic_worker and role is plan.workers())
    ]


def unexpressed(plan: Plan, options: Options, target: Target) -> list[Diagnostic]:
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
        "| MSJob field or option | " + " | ".join(f"`{t}`" for t in targets.NAMES) + " |",
        "|---|" + "---|" * len(targets.NAMES),
    ]
    for row, cells in table().items():
        shown = []
        for target in targets.NAMES:
            found = cells[target]
            text = _SHOWN["partly" if found.partly else found.support]
            if found.controller_only:
                text = "needs controller"
            if found.gate is not None:
                text += f" ({versions.since(found.gate)}+)"
            shown.append(text)
        lines.append(f"| `{row}` | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"
