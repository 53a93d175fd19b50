"""A job's whole life under a GitOps tool: nothing re-runs it, and a change is a new run.

Argo CD (self-heal) and Flux re-create whatever the cluster deleted of what Git holds. Two
run-time deletions would therefore start a finished training again (argo-cd#8586; the same
loop hit kubeflow/trainer#3779 between a TrainJob and its JobSet):

- `ttlSecondsAfterFinished`: Kubernetes' TTL controller deletes a finished Job, JobSet or
  Volcano Job, and msgen's controller a bare-Pod job's objects. With `gitops` on (set by the
  Argo CD plugin; `--gitops` when rendering for Flux in CI) the TTL is not rendered at all:
  neither on the workloads nor in the `msgen/run-policy` the controller reads. Clean-up is
  Git's: remove the job from Git and the tool prunes its objects. A warning says so.
- `cleanPodPolicy` on bare Pods: msgen's controller stops the pods of a finished job by
  deleting them, which a GitOps tool would undo. It leaves alone objects a GitOps tool applied
  (msgen.reconcile.actions); the render warns that those pods keep running.

A Job's pod template is immutable, so a changed job cannot be synced onto the running one
("field is immutable"), and `Replace=true` would kill the running training. `run-name:
content` names the job's objects `<job>-<digest>`, the digest taken from the job's kind and
`spec` and the options that choose its objects; a change to any of them is a new run under
new names (Argo CD creates it and prunes the old run), and an unchanged job keeps its names
whatever else changes: the cluster's version, the namespace, msgen's own version.
"""

from __future__ import annotations

import json
from typing import Any

from ..model.diagnostics import Diagnostic, Severity
from ..targets import facts_of, having
from ..model.plan import Options, Plan

#: Options that describe where the job runs, not what it runs: they leave the run name alone.
_NOT_THE_RUN = (
    "kube_version", "namespace", "destination_namespace", "gitops", "served_apis", "origins", "run_name", "quiet",
)  # fmt: skip
DIGEST_LENGTH = 8


def adapt(plan: Plan, options: Options) -> tuple[Plan, list[Diagnostic]]:
    """`plan` as it is rendered for the way it will be applied, and what that changed."""
    out: list[Diagnostic] = []
    run = plan.run_policy
    if options.gitops and run.ttl_seconds_after_finished is not None:
        out.append(
            plan.document.diagnostic(
                run.path + ("ttlSecondsAfterFinished",),
                "runPolicy.ttlSecondsAfterFinished is not rendered for a GitOps tool: it would "
                "delete the finished job, and Argo CD (self-heal) or Flux would create it again "
                "and the training would run again; remove the job from Git to delete it (the "
                "tool prunes its objects)",
                severity=Severity.WARNING,
            )
        )
        plan = plan._replace(run_policy=run._replace(ttl_seconds_after_finished=None))
    if options.gitops and facts_of(options.target).bare_pods and run.clean_pod_policy in ("Running", "All"):
        out.append(
            plan.document.diagnostic(
                run.path + ("cleanPodPolicy",) if run.clean_pod_policy_written else ("kind",),
                f"cleanPodPolicy {run.clean_pod_policy} is not carried out on bare Pods a GitOps "
                "tool applies: msgen's controller would delete them and the tool would create "
                "them again; the pods stay when the job ends. Use target "
                + " or ".join(having(lambda t: t.facts.job_templates))
                + ", whose pods end with their job",
                severity=Severity.WARNING,
            )
        )
    if options.run_name == "content":
        plan = plan._replace(name=f"{plan.name}-{digest(plan.document.data, options)}")
    return plan, out


def digest(data: dict[str, Any], options: Options) -> str:
    """The run's digest: the job's apiVersion, kind and spec, and the options that choose
    its objects, as canonical JSON."""
    chosen = {k: v for k, v in options._asdict().items() if k not in _NOT_THE_RUN}
    content = {
        "apiVersion": data.get("apiVersion"),
        "kind": data.get("kind"),
        "spec": data.get("spec"),
        "options": chosen,
    }
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    import hashlib  # only for this option: a plain render does without it

    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]
