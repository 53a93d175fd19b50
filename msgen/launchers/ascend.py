"""Ascend pod settings a user would otherwise copy from MindCluster's samples (contracts §3).

On pods whose container `mindspore` (the plan's main container) asks for Ascend NPUs:

- `/dev/shm` as a memory-backed `emptyDir` (volume `msgen-shm`, `sizeLimit` from
  `--shm-size`, default 16Gi): the container runtime's 64 MiB default is too small for the
  data pipeline's shared memory. A template that mounts its own `/dev/shm` keeps it, unless
  `--shm-size` is given, which is then a conflict.
- `--accelerator-type T`: node selector `accelerator-type: T`, the label MindCluster puts on
  nodes to tell 910A, 910B and A3 servers apart (they share the resource name).
- `--rank-table operator`: the ConfigMap `rings-config-<job>` (label
  `ring-controller.atlas`, data `hccl.json: {"status":"initializing"}`) that the cluster's
  Ascend components fill, mounted at `/user/serverid/devindex/config` as ascend-operator
  mounts it, with `RANK_TABLE_FILE` and `RANK_SIZE`; the per-device launcher waits for
  `"status":"completed"` before starting processes.
"""

from __future__ import annotations

from .. import devices, targets
from ..model.diagnostics import Diagnostic, Severity
from ..frameworks.mindspore import worker_processes
from ..options.text import ANNOTATION_PREFIX
from ..model.patch import Patch, literal
from ..model.plan import Options, Plan, PodSlot, Role
from ..model.source import Path
from ..model.patch import WorkloadLabels

SHM_PATH = "/dev/shm"
SHM_VOLUME = "msgen-shm"
DEFAULT_SHM_SIZE = "16Gi"
ACCELERATOR_LABEL = "accelerator-type"
RANK_TABLE_DIR = "/user/serverid/devindex/config"
RANK_TABLE_FILE = f"{RANK_TABLE_DIR}/hccl.json"
RANK_TABLE_VOLUME = "ascend-910-config"
RING_LABEL = "ring-controller.atlas"


#: ascend-operator finds a StatefulSet's pods by this label (`genLabels` for apps/v1).
DEPLOY_NAME_LABEL = "deploy-name"


def rank_table_workload(plan: Plan, options: Options) -> tuple[str, str] | str:
    """(kind, name) of the workload MindCluster fills the rank table for, or why none is.

    MindCluster's rank-table plugins (ascend-operator `pkg/ranktable/plugins.go`) recognise
    Deployments, StatefulSets and Volcano Jobs besides AscendJobs: the target says whether
    its workload is one of them (`Facts.rank_table_kind`); the ConfigMap
    `rings-config-<name>` must carry that workload's name."""
    facts = targets.facts_of(options.target)
    kind = facts.rank_table_kind
    if kind is None:
        return (
            f"target {options.target} renders {facts.workloads}, which MindCluster's rank-table "
            "plugins do not recognise (they fill rings-config-<name> for AscendJobs, Volcano "
            "Jobs, Deployments and StatefulSets only), so the rank table would stay initializing"
        )
    if not facts.workload_per_role:
        return kind, plan.name
    roles = ascend_roles(plan)
    if len(roles) != 1:
        return (
            f"each role is its own {kind}, and MindCluster fills one rank table per "
            f"{kind}, but {len(roles)} roles ask for NPUs"
        )
    return kind, f"{plan.name}-{roles[0].key}"


def rank_table_name(plan: Plan, options: Options) -> str:
    found = rank_table_workload(plan, options)
    name = found[1] if isinstance(found, tuple) else plan.name
    return f"rings-config-{name}"


def workload_labels(plan: Plan, options: Options) -> tuple[WorkloadLabels, ...]:
    """The labels of the workload MindCluster fills the rank table for, as its plugins require.

    A Volcano Job or StatefulSet is handled only when labelled `ring-controller.atlas`
    (`ShouldGenerateRankTable`); a StatefulSet's pods are found by `deploy-name: <name>`.
    """
    if options.rank_table != "operator" or plan.framework != "mindspore":
        return ()
    found = rank_table_workload(plan, options)
    if not isinstance(found, tuple):
        return ()
    kind, name = found
    ring = _ring_kind(plan, options) or "ascend-910b"
    pods = ((DEPLOY_NAME_LABEL, name),) if kind == "StatefulSet" else ()
    return (WorkloadLabels(kind, name, ((RING_LABEL, ring),), pods),)


def ascend_roles(plan: Plan) -> list[Role]:
    return [
        r
        for r in plan.roles
        if r.replicas > 0 and devices.role_request(plan, r).kind == "ascend"
    ]


def check(plan: Plan, options: Options) -> list[Diagnostic]:
    out = []
    roles = ascend_roles(plan)
    if options.rank_table == "operator" and not roles:
        out.append(
            plan.document.diagnostic(
                _option_path(plan, "rank-table"),
                "--rank-table operator: no role asks for Ascend NPUs (huawei.com/Ascend*, "
                "huawei.com/npu*); accepted: --rank-table none",
            )
        )
    if options.rank_table == "operator" and roles:
        workload = rank_table_workload(plan, options)
        if isinstance(workload, str):
            out.append(
                plan.document.diagnostic(
                    _option_path(plan, "rank-table"),
                    f"--rank-table operator: {workload}; accepted: --target volcano or "
                    "statefulset, or --rank-table none",
                )
            )
    if options.rank_table == "operator" and roles and _ring_kind(plan, options) is None:
        out.append(
            plan.document.diagnostic(
                _option_path(plan, "rank-table"),
                "--rank-table operator: the chip is unknown, so "
                f"{rank_table_name(plan, options)} is "
                f"labelled {RING_LABEL}: ascend-910b; name the chip with --accelerator-type "
                "(module-910b-8, module-a3-16, module, ...)",
                severity=Severity.WARNING,
            )
        )
    if options.accelerator_type is not None and not roles:
        # The node selector goes on Ascend pods only; a job without NPUs would run anywhere
        # while its author believes it is pinned to that chip.
        out.append(
            plan.document.diagnostic(
                _option_path(plan, "accelerator-type"),
                f"--accelerator-type {options.accelerator_type} is ignored: no role asks for "
                "Ascend NPUs (huawei.com/Ascend*, huawei.com/npu*), and only Ascend pods get "
                "the node selector accelerator-type",
                severity=Severity.WARNING,
            )
        )
    if options.shm_size is not None:
        for role in roles:
            for ci, container in enumerate(role.containers()):
                if container["name"] != plan.main_container:
                    continue
                for mi, mount in enumerate(container.get("volumeMounts") or []):
                    if mount.get("mountPath") == SHM_PATH:
                        out.append(
                            plan.document.diagnostic(
                                role.path
                                + ("template", "spec", "containers", ci, "volumeMounts", mi),
                                f"container {plan.main_container!r} mounts its own {SHM_PATH}, "
                                f"and --shm-size {options.shm_size} asks msgen to mount one; "
                                "accepted: leave this mount out, or --shm-size unset",
                            )
                        )
    return out


def contribute(plan: Plan, slot: PodSlot, addressing: Addresses, options: Options) -> list[Patch]:
    role = slot.role
    if role not in ascend_roles(plan):
        return []
    main = plan.main_container
    container = next(c for c in role.containers() if c["name"] == main)
    patch = Patch(contributor="Ascend pod settings")
    if not any(m.get("mountPath") == SHM_PATH for m in container.get("volumeMounts") or []):
        patch = _with(
            patch,
            volumes=(
                {
                    "name": SHM_VOLUME,
                    "emptyDir": {
                        "medium": "Memory",
                        "sizeLimit": options.shm_size or DEFAULT_SHM_SIZE,
                    },
                },
            ),
            mounts=((main, {"name": SHM_VOLUME, "mountPath": SHM_PATH}),),
        )
    if options.accelerator_type is not None:
        patch = _with(patch, node_selector=((ACCELERATOR_LABEL, options.accelerator_type),))
    patches = [patch]
    if options.rank_table == "operator" and plan.framework == "mindspore":
        patches.append(
            Patch(
                contributor="the operator-filled rank table",
                env=(
                    (main, "RANK_TABLE_FILE", literal(RANK_TABLE_FILE)),
                    (main, "RANK_SIZE", literal(worker_processes(plan))),
                ),
                volumes=(
                    {
                        "name": RANK_TABLE_VOLUME,
                        "configMap": {"name": rank_table_name(plan, options)},
                    },
                ),
                mounts=((main, {"name": RANK_TABLE_VOLUME, "mountPath": RANK_TABLE_DIR}),),
                objects=(_rank_table(plan, options),),
            )
        )
    return patches


def _with(patch: Patch, **fields: Any) -> Patch:
    """`patch` with `fields` appended to its own."""
    return patch._replace(
        **{name: getattr(patch, name) + value for name, value in fields.items()}
    )


def _ring_kind(plan: Plan, options: Options) -> str | None:
    """`ascend-910b` for 910B and A3 servers, `ascend-910` for 910A; None when unknown."""
    if plan.labels.get(RING_LABEL) in ("ascend-910", "ascend-910b"):
        return plan.labels[RING_LABEL]  # an AscendJob names it itself
    chips = [options.accelerator_type] if options.accelerator_type else []
    for role in ascend_roles(plan):
        selector = role.template["spec"].get("nodeSelector") or {}
        if ACCELERATOR_LABEL in selector:
            chips.append(str(selector[ACCELERATOR_LABEL]))
    for chip in chips:
        lowered = chip.lower()
        if "910b" in lowered or "a3" in lowered:
            return "ascend-910b"
        if lowered in ("module", "card", "half") or lowered.startswith(("module-", "card-")):
            return "ascend-910"
    return None


def _rank_table(plan: Plan, options: Options) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": rank_table_name(plan, options),
            "labels": {RING_LABEL: _ring_kind(plan, options) or "ascend-910b"},
        },
        "data": {"hccl.json": '{"status":"initializing"}'},
    }


def _option_path(plan: Plan, option: str) -> Path:
    metadata = plan.document.data.get("metadata") or {}
    if ANNOTATION_PREFIX + option in (metadata.get("annotations") or {}):
        return ("metadata", "annotations", ANNOTATION_PREFIX + option)
    return ("metadata", "name")


TYPE_CHECKING = False
if TYPE_CHECKING:  # mypy checks this module against the interfaces it implements
    from typing import Any
    from ..model.extension_points import Addresses, ChecksJob, LabelsWorkloads, StartsProcesses
    from . import ascend as _this

    _STARTS: StartsProcesses = _this
    _CHECKS: ChecksJob = _this
    _LABELS: LabelsWorkloads = _this
