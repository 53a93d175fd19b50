"""What a target declares about itself: its facts, and its cell for each MSJob policy.

A target's module declares them (`Target.facts`, `Target.support`), each checked against what
it renders (tests/test_target_plugins.py); the rest of msgen asks them rather than compare
target names: the API server's rules (which fields land in a custom resource), the lifecycle
and the reconciler (which objects are the job's workloads, what ends it, the chain of
controllers through which its pods are made), the policy table in docs/targets.md. They are plain values at the bottom layer, so that the reconciler and the
extension points (`model/extension_points.py`) read them without importing a target.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal, NamedTuple
else:
    from .type_forms import Literal, NamedTuple


#: How an object of an ownership chain (`Link.named`) is named from its controller's name
#: (`<owner>`) and the job's roles (`<role>`: a role's lower-case name; `<i>`: an index below
#: the role's replicas, written as Kubernetes writes it):
#: the workload itself, as msgen renders it (`<job>`, `<job>-<role>`, `<job>-<role>-<i>`).
RENDERED = "rendered"
#: `<owner>`: the JobSet Trainer builds for a TrainJob.
SAME_NAME = "same-name"
#: `<owner>-<replicated job>-0`: a JobSet's Jobs (msgen renders one Job per replicated Job;
#: the replicated Job is named after its role, or as `Link.renamed` says).
REPLICATED_JOB = "replicated-job"
#: `<owner>-<i>`: a StatefulSet's pods (the owner is one role's).
ORDINAL = "ordinal"
#: `<owner>-<role>-<i>`: a Volcano Job's pods (its tasks are the roles).
TASK_INDEX = "task-index"
#: The Job controller's pods of an Indexed Job: `<owner>-<i>-` (cut to 58 characters as it
#: cuts them, keeping `-<i>-`) and five random characters, carrying the Job's UID in its
#: selector's label.
INDEXED_POD = "indexed-pod"


class Link(NamedTuple):
    """One object of the chain through which a target's pods are made: the workload msgen
    renders first, then each object the one above it controls (its controller
    `ownerReference`, by UID), down to the Pod. The reconciler trusts an object only
    through such a chain, of exactly these apiVersions, kinds and names."""

    api_version: str
    kind: str
    #: how it is named (one of RENDERED, SAME_NAME, ...)
    named: str
    #: REPLICATED_JOB: (role, replicated Job name) where a role's replicated Job is not
    #: named after it (Trainer's trainer step is `node`)
    renamed: tuple[tuple[str, str], ...] = ()


class Facts(NamedTuple):
    """What is true of a target, declared in its module (all false unless it says so)."""

    #: The most replicas one role may have, and why (they become int32 fields the API server
    #: bounds); None where the target checks a limit of its own in `render`.
    max_replicas: tuple[int, str] | None = None
    #: It can render one workload per pod, which plans whose pods need static indexes
    #: (`Plan.static_indexes`) need.
    static_indexes: bool = False
    #: Its workloads are bare Pods: no controller restarts, completes or cleans them up, so
    #: the reconciler reads the pods as the job's workloads and carries out their policies.
    bare_pods: bool = False
    #: Its pod templates are templates of batch/v1 Jobs (the API server sets their `job-name`).
    job_templates: bool = False
    #: Its pod templates sit in a custom resource (keyed lists, int-or-string quantities).
    custom_resource: bool = False
    #: It writes the job's activeDeadlineSeconds on the pods (an int32 there).
    deadline_on_pods: bool = False
    #: Its pods run until deleted, so a pod's activeDeadlineSeconds is refused.
    pods_run_until_deleted: bool = False
    #: Its workload is its own gang, scheduled by its own scheduler: no PodGroup is made.
    own_gang: bool = False
    #: Its controller makes the job's PodGroup from a policy msgen writes (Trainer's
    #: `podGroupPolicy`): msgen emits none, and its pods still join the gang's scheduler.
    gang_by_policy: bool = False
    #: Its workload deletes its running pods itself when the job ends.
    cleans_running_pods: bool = False
    #: At the job's end the reconciler suspends its still active Jobs (and keeps their TTL).
    suspends_jobs_at_end: bool = False
    #: Each role's workload counts its own failures against backoffLimit, so the reconciler
    #: counts them across the job, as ms-operator did, and ends the job past the limit.
    retries_counted_per_role: bool = False
    #: A job that succeeded is ended by a Volcano bus Command (its workload cannot end on it).
    completed_by_command: bool = False
    #: What it renders, in words for messages ("Jobs", "a JobSet").
    workloads: str = ""
    #: Its workloads are one per role, `<job>-<role>`; else one workload is the whole job.
    workload_per_role: bool = False
    #: The kind of its workload where MindCluster's rank-table plugins recognise it (they
    #: fill the rank table of AscendJobs, Volcano Jobs, Deployments and StatefulSets).
    rank_table_kind: str | None = None
    #: The chain its pods are made through (`Link`), from the workload msgen renders to
    #: the Pod: what the reconciler follows to tell a job's pods, and nothing else.
    chain: tuple[Link, ...] = ()
    #: The add-on that runs its workloads, at the release msgen is tested with: (its name and
    #: release, the oldest Kubernetes minor that release runs on, why). A render for an older
    #: --kube-version warns: that release of the add-on cannot run on such a cluster.
    add_on: tuple[str, tuple[int, int], str] | None = None


Support = Literal["native", "partly", "apply", "no"]


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
