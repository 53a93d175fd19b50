"""Do the sizes of msgen's workloads still match the job msgen compiled? Read from objects alone.

msgen writes a job's size into its pods: MS_WORKER_NUM and MS_SERVER_NUM, the ranks, the
rank table, a gang's minimum. A transformer that changes a size after msgen (kustomize's
`replicas:` on a StatefulSet, a patch of a Job's `parallelism`, a JobSet's or Volcano task's
`replicas`, a TrainJob's `numNodes`) leaves those as they were: the Workers wait for peers that
never come, or an extra Worker's rank is one no one expects. Each workload msgen writes carries
the job's roles and their replicas as compiled (the `msgen/run-policy` annotation), so the pods
every workload would make, counted per role, must be those replicas.

How many pods a workload makes: a Job `completions` (and `parallelism` no other), a
StatefulSet `replicas`, a bare Pod one; a JobSet's replicated Job `replicas` times its Job's; a
Volcano task `replicas`; a TrainJob's JobSet is its TrainingRuntime's, with the trainer's Job
made `numNodes` wide (the TrainJob's, else the runtime's `mlPolicy`). A Volcano Job's
`minAvailable` and a PodGroup's `minMember` must not exceed the pods there are.
"""

# No `from __future__ import annotations`: it slows building NamedTuples (see msgen.model.plan).
import json
from typing import Any, Iterator, NamedTuple

RUN_POLICY = "msgen/run-policy"
JOB_LABEL = "training.kubeflow.org/job-name"
ROLE_LABEL = "training.kubeflow.org/replica-type"
TRAINER_STEP = ("trainer.kubeflow.org/trainjob-ancestor-step", "trainer")


class Pods(NamedTuple):
    """Pods of one role that one workload makes."""

    where: str
    job: str
    role: str
    pods: int


def problems(objects: list[dict[str, Any]]) -> list[str]:
    """Every size that no longer matches the job msgen compiled; [] if all do."""
    recorded = _recorded(objects)
    if not recorded:
        return []
    counted: dict[tuple[str, str], list[Pods]] = {}
    found: list[str] = []
    for pods in _pods(objects, found):
        counted.setdefault((pods.job, pods.role), []).append(pods)
    for job, roles in sorted(recorded.items()):
        for role, replicas in sorted(roles.items()):
            made = counted.get((job, role.lower()), [])
            total = sum(p.pods for p in made)
            if total != replicas:
                where = ", ".join(f"{p.where}: {p.pods}" for p in made) or "no workload"
                found.append(f"job {job}: msgen compiled {replicas} {role} pod(s), the output makes {total} "
                             f"({where})")
    found += _gang_problems(objects, counted, recorded)
    return found


def _recorded(objects: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Each job's roles and replicas, as its workloads' run-policy annotation records them."""
    out: dict[str, dict[str, int]] = {}
    for obj in objects:
        text = ((obj.get("metadata") or {}).get("annotations") or {}).get(RUN_POLICY)
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if not isinstance(text, str) or JOB_LABEL not in labels:
            continue
        try:
            roles = json.loads(text).get("roles") or {}
        except (ValueError, AttributeError):
            continue
        out.setdefault(labels[JOB_LABEL], {}).update(
            {str(r): int(s.get("replicas", 1)) for r, s in roles.items() if isinstance(s, dict)})
    return out


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _job_pods(spec: dict[str, Any], where: str, found: list[str]) -> int:
    """How many pods a Job spec makes; a `parallelism` that differs from `completions` is a
    problem of its own (msgen writes them equal)."""
    parallelism, completions = spec.get("parallelism"), spec.get("completions")
    if _int(parallelism, -1) >= 0 and _int(completions, -1) >= 0 and parallelism != completions:
        found.append(f"{where}: parallelism {parallelism} and completions {completions} differ (msgen writes them equal)")
    return _int(completions, _int(parallelism, 1))


def _labels(template: dict[str, Any]) -> dict[str, Any]:
    return (template.get("metadata") or {}).get("labels") or {}


def _pods(objects: list[dict[str, Any]], found: list[str]) -> Iterator[Pods]:
    trainjobs = {((o.get("spec") or {}).get("runtimeRef") or {}).get("name"): o
                 for o in objects if o.get("kind") == "TrainJob"}
    for obj in objects:
        kind, name, spec = obj.get("kind"), obj["metadata"]["name"], obj.get("spec") or {}
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        if kind == "Job" and group == "batch":
            yield from _one(f"Job {name}", spec.get("template") or {}, _job_pods(spec, f"Job {name}", found))
        elif kind == "Pod":
            yield from _one(f"Pod {name}", obj, 1)
        elif kind == "StatefulSet":
            yield from _one(f"StatefulSet {name}", spec.get("template") or {}, _int(spec.get("replicas"), 1))
        elif kind == "JobSet":
            yield from _replicated(f"JobSet {name}", spec, None, found)
        elif kind == "TrainingRuntime" and name in trainjobs:
            yield from _replicated(f"TrainingRuntime {name}", (spec.get("template") or {}).get("spec") or {},
                                   _nodes(spec, trainjobs[name]), found)
        elif kind == "Job" and group == "batch.volcano.sh":
            for task in spec.get("tasks") or []:
                yield from _one(f"Volcano Job {name} task {task.get('name')}", task.get("template") or {},
                                _int(task.get("replicas"), 1))


def _one(where: str, template: dict[str, Any], count: int) -> Iterator[Pods]:
    labels = _labels(template)
    if JOB_LABEL in labels and ROLE_LABEL in labels:
        yield Pods(where, str(labels[JOB_LABEL]), str(labels[ROLE_LABEL]).lower(), count)


def _nodes(runtime: dict[str, Any], trainjob: dict[str, Any]) -> int | None:
    """The width Trainer gives the trainer's Job: the TrainJob's numNodes, else the runtime's."""
    own = ((trainjob.get("spec") or {}).get("trainer") or {}).get("numNodes")
    value = own if own is not None else (runtime.get("mlPolicy") or {}).get("numNodes")
    return None if value is None else _int(value, 1)


def _replicated(where: str, jobset: dict[str, Any], nodes: int | None, found: list[str]) -> Iterator[Pods]:
    for rjob in jobset.get("replicatedJobs") or []:
        job_template = rjob.get("template") or {}
        job = job_template.get("spec") or {}
        place = f"{where} replicated job {rjob.get('name')}"
        trainer = nodes is not None and _labels(job_template).get(TRAINER_STEP[0]) == TRAINER_STEP[1]
        width = nodes if trainer and nodes is not None else _job_pods(job, place, found)
        yield from _one(place, job.get("template") or {}, _int(rjob.get("replicas"), 1) * width)


def _gang_problems(objects: list[dict[str, Any]], counted: dict[tuple[str, str], list[Pods]],
                   recorded: dict[str, dict[str, int]]) -> list[str]:
    """A gang minimum above the pods there are never schedules (Volcano, a PodGroup)."""
    out = []
    for obj in objects:
        kind, spec = obj.get("kind"), obj.get("spec") or {}
        labels = (obj.get("metadata") or {}).get("labels") or {}
        job = labels.get(JOB_LABEL)
        if job not in recorded:
            continue
        total = sum(p.pods for (j, _role), made in counted.items() if j == job for p in made)
        wanted = spec.get("minAvailable") if kind == "Job" else spec.get("minMember") if kind == "PodGroup" else None
        if isinstance(wanted, int) and wanted > total:
            out.append(f"{kind} {obj['metadata']['name']}: a gang of {wanted} pods, and the output makes {total}")
    return out
