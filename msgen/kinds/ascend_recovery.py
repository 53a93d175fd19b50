"""An AscendJob's fault-tolerance settings, as the env ascend-operator derives from them.

ascend-operator (`component/ascend-operator/pkg/controllers/v1/env.go`: `addProcessRecoverEnv`,
`addMSPodScheduleEnv`, `addSubHealthyEnv`) reads three settings of a MindSpore AscendJob and
puts env on container `ascend` of every pod:

- annotation `recover-strategy` (comma-separated `recover`, `retry`, `dump`,
  `recover-in-place`, `exit`; `elastic-training` is PyTorch's only): `PROCESS_RECOVER=on`,
  `ELASTIC_PROCESS_RECOVER_ENABLE=1` (`ENABLE_RESTART_FAULT_PROCESS=on` for
  `recover-in-place`), `MS_ENABLE_TFT` = `{...}` of MindSpore's strategy flags
  (`ARF:1`, `UCE:1`, `HCCE:1`, `TTP:1`, and `RSC:1` with pod rescheduling),
  `MINDIO_FOR_MINDSPORE=1`, `MS_ENABLE_THM={HCCL_WATCHDOG:0}`;
- label `pod-rescheduling: on`: `MS_ENABLE_TFT` gains `RSC:1`;
- label `subHealthyStrategy: hotSwitch`: `MS_ENABLE_TFT` gains `ARF:1`, with
  `MINDIO_FOR_MINDSPORE`, `PROCESS_RECOVER` and `ELASTIC_PROCESS_RECOVER_ENABLE`.

All of that is static, so msgen writes the same env. What is not static is the recovery
itself: MindCluster's ascend-operator and clusterd watch the job's processes and reschedule
them at run time, and neither manages msgen's output. Each setting therefore also warns at its
position, so nobody believes the job recovers the way it did under ascend-operator.
"""

from __future__ import annotations

from ..model.diagnostics import Diagnostic, Severity
from ..model.source import Document

RECOVER_STRATEGY = "recover-strategy"
POD_RESCHEDULING = "pod-rescheduling"
SUB_HEALTHY = "subHealthyStrategy"

PROCESS_RECOVER = "PROCESS_RECOVER"
ELASTIC_RECOVER = "ELASTIC_PROCESS_RECOVER_ENABLE"
RESTART_FAULT_PROCESS = "ENABLE_RESTART_FAULT_PROCESS"
MS_ENABLE_TFT = "MS_ENABLE_TFT"
MINDIO = "MINDIO_FOR_MINDSPORE"
MS_ENABLE_THM = "MS_ENABLE_THM"

#: strategy → (MindSpore's flags in MS_ENABLE_TFT, whether it restarts the process in place)
STRATEGIES: dict[str, tuple[tuple[str, ...], bool]] = {
    "recover": (("ARF:1",), False),
    "exit": (("ARF:1",), False),
    "retry": (("UCE:1", "HCCE:1"), False),
    "dump": (("TTP:1",), False),
    "recover-in-place": (("ARF:1",), True),
}
PYTORCH_ONLY = ("elastic-training",)

_RUN_TIME = (
    "msgen writes the env ascend-operator derives from it, but the recovery itself is done at "
    "run time by MindCluster's ascend-operator and clusterd, which do not manage msgen's "
    "output: a failed process or pod is handled by the target's restart and failure policies"
)


def recovery_env(document: Document, out: list[Diagnostic]) -> dict[str, str]:
    """The recovery env of every pod, in a fixed order; warnings for what stays undone."""
    metadata = document.data.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    labels = metadata.get("labels") or {}
    env: dict[str, str] = {}
    flags: set[str] = set()
    rescheduling = labels.get(POD_RESCHEDULING) == "on"
    strategies = annotations.get(RECOVER_STRATEGY)
    if isinstance(strategies, str) and strategies:
        path = ("metadata", "annotations", RECOVER_STRATEGY)
        found: dict[str, str] = {}
        for strategy in strategies.split(","):  # ascend-operator does not trim spaces
            if strategy in STRATEGIES:
                strategy_flags, in_place = STRATEGIES[strategy]
                flags.update(strategy_flags)
                found[PROCESS_RECOVER] = "on"
                found[ELASTIC_RECOVER] = "1"
                if in_place:
                    found[RESTART_FAULT_PROCESS] = "on"
            else:
                reason = (
                    "ascend-operator applies it to PyTorch jobs only"
                    if strategy in PYTORCH_ONLY
                    else "ascend-operator ignores it"
                )
                out.append(
                    document.diagnostic(
                        path,
                        f"{RECOVER_STRATEGY} {strategy!r} sets no env: {reason}; accepted: "
                        f"{', '.join(STRATEGIES)}",
                        severity=Severity.WARNING,
                    )
                )
        if rescheduling:
            flags.add("RSC:1")
        found[MS_ENABLE_TFT] = _flags(flags)
        found[MINDIO] = "1"
        found[MS_ENABLE_THM] = "{HCCL_WATCHDOG:0}"
        env.update(sorted(found.items()))
        out.append(
            document.diagnostic(
                path, f"{RECOVER_STRATEGY}: {_RUN_TIME}", severity=Severity.WARNING
            )
        )
    if rescheduling:
        if MS_ENABLE_TFT not in env:
            env[MS_ENABLE_TFT] = _flags({"RSC:1"})
        out.append(
            document.diagnostic(
                ("metadata", "labels", POD_RESCHEDULING),
                f"{POD_RESCHEDULING}: on: {_RUN_TIME}",
                severity=Severity.WARNING,
            )
        )
    if labels.get(SUB_HEALTHY) == "hotSwitch":
        current = env.get(MS_ENABLE_TFT, "{}")[1:-1]
        merged = {f for f in current.split(",") if f} | {"ARF:1"}
        env[MS_ENABLE_TFT] = _flags(merged)
        env[MINDIO] = "1"
        env[PROCESS_RECOVER] = "on"
        env[ELASTIC_RECOVER] = "1"
        out.append(
            document.diagnostic(
                ("metadata", "labels", SUB_HEALTHY),
                f"{SUB_HEALTHY}: hotSwitch: {_RUN_TIME}",
                severity=Severity.WARNING,
            )
        )
    return env


def _flags(flags: set[str]) -> str:
    """`{A,B}` with the flags sorted, as ascend-operator's string sets list them."""
    return "{" + ",".join(sorted(flags)) + "}"
