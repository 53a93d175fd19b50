"""The two forms of an MXJob's run policy, and which of them a job is written in.

`kubeflow.org/v1 MXJob` was served by two operators with one group, version and kind:

- training-operator: `spec.runPolicy {cleanPodPolicy, ttlSecondsAfterFinished,
  activeDeadlineSeconds, backoffLimit, schedulingPolicy, suspend}`; `cleanPodPolicy`
  defaults to `None`.
- kubeflow/mxnet-operator (`pkg/apis/mxnet/v1/types.go`): kubeflow/common v0.3.1's
  `RunPolicy` **inline** at `spec` (`json:",inline"`): `spec.cleanPodPolicy`,
  `spec.ttlSecondsAfterFinished`, `spec.activeDeadlineSeconds`, `spec.backoffLimit`,
  `spec.schedulingPolicy {minAvailable}`; `SetDefaults_MXJob` defaults `cleanPodPolicy` to
  `All`.

A job's fields say which form it is: any inline field makes it mxnet-operator's, `runPolicy`
training-operator's; both at once is an error, since neither operator would have read the
other's fields. A job with neither gets training-operator's defaults: msgen cannot tell the
operators apart there, and training-operator is the one still documented.

mxnet-operator's own BytePS example also writes `spec.successPolicy`, a field of that
operator's `kubeflow.org/v1beta1 MXJob` which neither operator's v1 MXJob has: it is accepted
with a warning (the job's outcome follows the Scheduler).
"""

from __future__ import annotations

from ...model.diagnostics import Diagnostic, Severity
from ...model.plan import RunPolicy, SchedulingPolicy
from ...model.source import Document, Path
from ..msjob import to_run_policy
from .model import MXJobSpec

#: kubeflow/common v0.3.1 RunPolicy's fields, as mxnet-operator's MXJob has them at `spec`.
INLINE_FIELDS = (
    "cleanPodPolicy",
    "ttlSecondsAfterFinished",
    "activeDeadlineSeconds",
    "backoffLimit",
    "schedulingPolicy",
)


def run_policy(spec: MXJobSpec, document: Document, out: list[Diagnostic]) -> RunPolicy:
    """The job's run policy with its operator's defaults; a mixed form is reported."""
    written = document.data["spec"]
    inline = [name for name in INLINE_FIELDS if name in written]
    if spec.successPolicy is not None:
        out.append(
            document.diagnostic(
                ("spec", "successPolicy"),
                f"successPolicy {spec.successPolicy!r} is ignored, as mxnet-operator and "
                "training-operator ignored it (a kubeflow.org/v1beta1 field; a v1 MXJob has "
                "none): the job's outcome follows the Scheduler",
                severity=Severity.WARNING,
            )
        )
    if inline and spec.runPolicy is not None:
        first = inline[0]
        out.append(
            document.diagnostic(
                ("spec", first),
                f"spec.{first} is kubeflow mxnet-operator's inline run policy, but this job "
                "also has spec.runPolicy (training-operator's form); accepted: one form, "
                f"either {', '.join(inline)} under spec.runPolicy, or runPolicy's fields "
                "directly under spec",
                key=True,
            )
        )
        return RunPolicy(clean_pod_policy="None")
    if inline:
        return _inline(spec)
    policy = to_run_policy(spec.runPolicy)
    if spec.runPolicy is None or spec.runPolicy.cleanPodPolicy is None:
        # training-operator defaults cleanPodPolicy to None (ms-operator: Running).
        policy = policy._replace(clean_pod_policy="None")
    if spec.runPolicy is not None and spec.runPolicy.suspend:
        out.append(
            document.diagnostic(
                ("spec", "runPolicy", "suspend"),
                "suspend: true is not expressed: the pods start when the output is applied",
                severity=Severity.WARNING,
            )
        )
    return policy


def _inline(spec: MXJobSpec) -> RunPolicy:
    """mxnet-operator's form: `SetDefaults_MXJob` makes cleanPodPolicy `All`."""
    path: Path = ("spec",)
    scheduling = spec.schedulingPolicy
    return RunPolicy(
        clean_pod_policy=spec.cleanPodPolicy or "All",
        clean_pod_policy_written=spec.cleanPodPolicy is not None,
        ttl_seconds_after_finished=spec.ttlSecondsAfterFinished,
        active_deadline_seconds=spec.activeDeadlineSeconds,
        backoff_limit=spec.backoffLimit,
        scheduling=(
            SchedulingPolicy(min_available=scheduling.minAvailable)
            if scheduling is not None
            else None
        ),
        path=path,
    )
