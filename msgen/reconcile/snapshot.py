"""The objects of many jobs at once: a few list calls per namespace, not a few per job.

`msgen status` takes any number of jobs (a directory of a thousand job files, or their
names). Asking for each job's pods and workloads kind by kind would cost the API server a
thousand times the same lists; instead each namespace is listed once per kind, selecting the
jobs' label: `training.kubeflow.org/job-name in (a,b,...)` for a few jobs, the label's
presence for many (a selector naming a thousand jobs would make a URL longer than servers
and proxies accept), and the objects are shared out by job here. A kind the server does not
serve (a missing JobSet or Volcano CRD) answers 404 and counts as none: no request is spent
asking first. The Services are listed only for jobs that turn out to have no workload left
(their end may be published on a Service). The Jobs a JobSet made, which carry no label of
msgen's, are listed by their JobSet's label (the job's name) with the Jobs, for the chain from
a JobSet to its pods (`ownership`).
"""

from __future__ import annotations

from typing import Any

from ..targets.labels import JOB_NAME
from . import kube, ownership

#: Up to this many jobs of a namespace are named in the selector; more select by the label.
NAMED_AT_MOST = 20

Key = tuple[str, str]  # (job, namespace)


def selector(jobs: list[str], label: str = JOB_NAME) -> dict[str, Any]:
    """Pure: the label selection for `jobs` of one namespace (see the module's notes), by
    `label`, the job's name (a JobSet's Jobs: their JobSet's, and no job-name label)."""
    names = sorted(set(jobs))
    found: dict[str, Any] = {label: names if len(names) <= NAMED_AT_MOST else None}
    if label != JOB_NAME:
        found[JOB_NAME] = kube.ABSENT
    return found


def by_job(wanted: list[Key], objects: list[dict[str, Any]], namespace: str) -> dict[Key, list[dict[str, Any]]]:
    """Pure: the objects of each wanted job of `namespace`."""
    out: dict[Key, list[dict[str, Any]]] = {key: [] for key in wanted if key[1] == namespace}
    for obj in objects:
        job = ownership.job_named(obj)
        found = out.get((job, namespace)) if job else None
        if found is not None:
            found.append(obj)
    return out


def listed(client: Any, wanted: list[Key], kinds: list[tuple[str, str]]) -> dict[Key, list[dict[str, Any]]]:
    """Every object of the `kinds` for each wanted (job, namespace); unserved kinds are none."""
    out: dict[Key, list[dict[str, Any]]] = {key: [] for key in wanted}
    namespaces: dict[str, list[str]] = {}
    for job, namespace in wanted:
        namespaces.setdefault(namespace, []).append(job)
    for namespace, jobs in namespaces.items():
        labels = selector(jobs)
        objects: list[dict[str, Any]] = []
        for api_version, kind in kinds:
            try:
                objects += kube.listing(client, api_version, kind, namespace, labels)
            except kube.KubeError as exc:
                if exc.code != 404 or api_version == "v1":
                    raise
        if ("batch/v1", "Job") in kinds:
            objects += kube.listing(client, "batch/v1", "Job", namespace, selector(jobs, ownership.JOBSET_NAME_LABEL))
        for key, found in by_job(wanted, objects, namespace).items():
            out[key] += found
    return out
