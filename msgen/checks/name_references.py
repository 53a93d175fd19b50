"""Do the names a job's objects use for each other agree? Read from rendered objects alone.

A job finds its Scheduler only through names: the Workers' `$(<SERVICE>_SERVICE_HOST)` must be
the variable of a ClusterIP Service that is there and selects the Scheduler's pods; a pod's
`subdomain` (a StatefulSet's `serviceName`) must name a headless Service that selects it; a
DNS name `<host>.<subdomain>` in `MS_SCHED_HOST` (and MXNet's `DMLC_PS_ROOT_URI`, the 2020
MSJob's `MASTER_ADDR`) must be a host name some pod of the output gets, under its subdomain;
every Service msgen wrote must select some of the job's pods; a `configMap` volume must name a
ConfigMap of the output. msgen's output always agrees; a tool that changes objects after msgen
(kustomize's namePrefix in an overlay above `msgen-krm`, a commonLabels that reaches the
Services' selectors but not the pods inside a kind kustomize does not know) breaks it without
a word, and the job never forms its cluster. Each problem says which of those it is (its
`cause`), so msgen.checks.job_agreement can say what to do; the Argo CD plugin and msgen-krm
check what they build with it, and the tests read with it whether a build gives a job that
can train, without a cluster.

Only msgen's pods are read (their template is labelled `app.kubernetes.io/managed-by: msgen`),
and only the variables msgen writes host names into: a user's own `$(REDIS_SERVICE_HOST)` or
subdomain may name what another application deploys.

Host names are the workload controllers' (contracts §8): an Indexed Job's pods `<job>-<i>`,
a StatefulSet's `<sts>-<i>`, a JobSet's `<jobset>-<replicated job>-<job index>-<pod index>`
(under `network.subdomain`, a Service the JobSet controller makes; a TrainJob's JobSet is
named after the TrainJob and built from its TrainingRuntime's template), a Volcano Job's
`<vcjob>-<task>-<i>` (under the Volcano Job's name, a Service its `svc` plugin makes), and a
bare Pod's `hostname`, else its name.
"""

# No `from __future__ import annotations`: it slows building NamedTuples (see msgen.model.plan).
import re
from typing import Any, NamedTuple

from ..model.names import service_env_prefix

MANAGED_BY = "app.kubernetes.io/managed-by"
#: Env values that hold a host name of another pod, per framework.
HOST_VARIABLES = ("MS_SCHED_HOST", "DMLC_PS_ROOT_URI", "MASTER_ADDR")
SERVICE_HOST = re.compile(r"\$\(([A-Z0-9_]+)_SERVICE_HOST\)")
#: Enough host names per pod template to cover every replica the samples render.
MOST_REPLICAS = 64
#: What changed a name: a rename (namePrefix, nameSuffix), a label added to selectors but not
#: to the pods, a generated object's hashed name left unfollowed.
RENAMED, LABELLED, GENERATED = "renamed", "labelled", "generated"


class Problem(NamedTuple):
    """A name or selector of msgen's objects that no longer agrees, and what likely changed it."""

    cause: str
    message: str


class PodTemplate(NamedTuple):
    """A pod template of the output, where it sits, and the DNS names its pods get."""

    where: str
    labels: dict[str, str]
    spec: dict[str, Any]
    subdomain: str | None
    #: subdomain made by a controller (JobSet, Volcano), so no Service of the output is needed
    controller_service: bool
    hostnames: list[str]


def pod_templates(objects: list[dict[str, Any]]) -> list[PodTemplate]:
    out = []
    for obj in objects:
        kind, name, spec = obj.get("kind"), obj["metadata"]["name"], obj.get("spec") or {}
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        if kind == "Job" and group == "batch":
            template = spec["template"]
            pod = template.get("spec") or {}
            hosts = [pod["hostname"]] if pod.get("hostname") else [f"{name}-{i}" for i in range(MOST_REPLICAS)]
            out.append(_template(f"Job {name}", template, pod.get("subdomain"), False, hosts))
        elif kind == "Pod":
            out.append(_template(f"Pod {name}", obj, spec.get("subdomain"), False, [spec.get("hostname") or name]))
        elif kind == "StatefulSet":
            hosts = [f"{name}-{i}" for i in range(MOST_REPLICAS)]
            out.append(_template(f"StatefulSet {name}", spec["template"], spec.get("serviceName"), False, hosts))
        elif kind == "JobSet":
            subdomain = (spec.get("network") or {}).get("subdomain") or name
            for rjob in spec.get("replicatedJobs") or []:
                template = rjob["template"]["spec"]["template"]
                hosts = [f"{name}-{rjob['name']}-{j}-{i}" for j in range(rjob.get("replicas", 1))
                         for i in range(MOST_REPLICAS)]
                out.append(_template(f"JobSet {name} {rjob['name']}", template, subdomain, True, hosts))
        elif kind == "TrainingRuntime":
            out += _runtime_templates(name, spec, _trainjobs_of(objects, name))
        elif kind == "Job" and group == "batch.volcano.sh":
            for task in spec.get("tasks") or []:
                hosts = [f"{name}-{task['name']}-{i}" for i in range(task.get("replicas", 1))]
                out.append(_template(f"Volcano Job {name} {task['name']}", task["template"], name, True, hosts))
    return out


def _trainjobs_of(objects: list[dict[str, Any]], runtime: str) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == "TrainJob"
            and ((o.get("spec") or {}).get("runtimeRef") or {}).get("name") == runtime]


def _runtime_templates(name: str, spec: dict[str, Any], trainjobs: list[dict[str, Any]]) -> list[PodTemplate]:
    """A TrainingRuntime's pod templates; their host names are those of the JobSet each
    TrainJob that names the runtime gets (named after the TrainJob)."""
    jobset = (spec.get("template") or {}).get("spec") or {}
    out = []
    for rjob in jobset.get("replicatedJobs") or []:
        template = rjob["template"]["spec"]["template"]
        hosts, subdomain = [], (jobset.get("network") or {}).get("subdomain")
        for trainjob in trainjobs:
            owner = trainjob["metadata"]["name"]
            subdomain = subdomain or owner
            hosts += [f"{owner}-{rjob['name']}-{j}-{i}" for j in range(rjob.get("replicas", 1))
                      for i in range(MOST_REPLICAS)]
        out.append(_template(f"TrainingRuntime {name} {rjob['name']}", template, subdomain, True, hosts))
    return out


def _template(where: str, template: dict[str, Any], subdomain: str | None, by_controller: bool,
              hosts: list[str]) -> PodTemplate:
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    return PodTemplate(where, labels, template.get("spec") or {}, subdomain, by_controller, hosts)


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def problems(objects: list[dict[str, Any]], config_maps: bool = True) -> list[str]:
    """Every name one of msgen's objects uses for another that does not agree; [] if all do.
    `config_maps`: check `configMap` volumes too (an application may mount one it does not
    deploy)."""
    return [p.message for p in findings(objects, config_maps)]


def findings(objects: list[dict[str, Any]], config_maps: bool = True) -> list[Problem]:
    """`problems`, each with its cause."""
    services = {o["metadata"]["name"]: o.get("spec") or {} for o in objects if o.get("kind") == "Service"}
    maps = {o["metadata"]["name"] for o in objects if o.get("kind") == "ConfigMap"}
    templates = pod_templates(objects)
    found: list[Problem] = []
    by_host: dict[str, PodTemplate] = {host: t for t in templates for host in t.hostnames}
    for template in templates:
        if template.labels.get(MANAGED_BY) != "msgen":
            continue
        found += _subdomain_problems(template, services)
        for container in template.spec.get("containers") or []:
            defined: set[str] = set()
            for env in container.get("env") or []:
                value = env.get("value")
                if isinstance(value, str) and env["name"] in HOST_VARIABLES:
                    found += _service_host_problems(template, env["name"], value, defined, services, templates)
                    if "$(" not in value:
                        found += _dns_name_problems(template, env["name"], value, by_host)
                defined.add(env["name"])
        for volume in template.spec.get("volumes") or [] if config_maps else []:
            wanted = (volume.get("configMap") or {}).get("name")
            if wanted is not None and wanted not in maps:
                found.append(Problem(RENAMED, f"{template.where}: volume {volume['name']} names ConfigMap {wanted}, "
                                              "which is not there"))
    found += _unselected_services(objects, templates, found)
    return found


def _unselected_services(objects: list[dict[str, Any]], templates: list[PodTemplate],
                         found: list[Problem]) -> list[Problem]:
    """msgen's Services whose selector selects none of msgen's pods (and no problem above
    named them already): a label reached the selector and not the pods."""
    ours: dict[str | None, list[PodTemplate]] = {}
    for template in templates:
        if template.labels.get(MANAGED_BY) == "msgen":
            ours.setdefault(template.labels.get(_MSGEN_KEYS[0]), []).append(template)
    out = []
    for service in objects:
        labels = (service.get("metadata") or {}).get("labels") or {}
        selector = (service.get("spec") or {}).get("selector") or {}
        name = service["metadata"]["name"]
        if service.get("kind") != "Service" or labels.get(MANAGED_BY) != "msgen" or not selector:
            continue
        candidates = ours.get(selector[_MSGEN_KEYS[0]], []) if _MSGEN_KEYS[0] in selector else \
            [t for same_job in ours.values() for t in same_job]
        if any(_selects(selector, t.labels) for t in candidates) or any(f"Service {name} " in p.message for p in found):
            continue
        near = [t for t in candidates if _selects({k: v for k, v in selector.items() if k in _MSGEN_KEYS}, t.labels)]
        missing = sorted({k for t in near for k, v in selector.items() if t.labels.get(k) != v})
        extra = f" (its pods lack {', '.join(missing)})" if missing else ""
        out.append(Problem(LABELLED, f"Service {name} selects none of the output's pods{extra}"))
    return out


#: Label keys msgen selects a job's pods by.
_MSGEN_KEYS = ("training.kubeflow.org/job-name", "training.kubeflow.org/replica-type",
               "training.kubeflow.org/replica-index", "app.kubernetes.io/name")


def _subdomain_problems(template: PodTemplate, services: dict[str, dict[str, Any]]) -> list[Problem]:
    if template.subdomain is None or template.controller_service:
        return []
    service = services.get(template.subdomain)
    if service is None and template.where.startswith("StatefulSet") and not services:
        return []  # a job of one pod: its StatefulSet's `serviceName` (required) addresses no one
    if service is None:
        return [Problem(RENAMED, f"{template.where}: subdomain {template.subdomain} names no Service of the output")]
    if service.get("clusterIP") != "None":
        return [Problem(RENAMED, f"{template.where}: Service {template.subdomain} is not headless")]
    if not _selects(service.get("selector") or {}, template.labels):
        return [Problem(LABELLED, f"{template.where}: Service {template.subdomain} is not a headless Service "
                                  f"selecting its pods{_lacking(service, template)}")]
    return []


def _lacking(service: dict[str, Any], template: PodTemplate) -> str:
    selector = service.get("selector") or {}
    missing = sorted(k for k, v in selector.items() if template.labels.get(k) != v)
    return f" (its pods lack {', '.join(missing)})" if missing else ""


def _service_host_problems(template: PodTemplate, variable: str, value: str, defined: set[str],
                           services: dict[str, dict[str, Any]], templates: list[PodTemplate]) -> list[Problem]:
    out = []
    for prefix in SERVICE_HOST.findall(value):
        if f"{prefix}_SERVICE_HOST" in defined:
            continue
        matching = [name for name in services if service_env_prefix(name) == prefix]
        if not matching:
            out.append(Problem(RENAMED, f"{template.where}: {variable}={value} names the variable of a Service "
                                        "that is not there"))
            continue
        spec = services[matching[0]]
        if spec.get("clusterIP") == "None":
            out.append(Problem(RENAMED, f"{template.where}: {variable} reads Service {matching[0]}, which is "
                                        "headless (no variable)"))
        elif not any(_selects(spec.get("selector") or {}, t.labels) for t in templates):
            out.append(Problem(LABELLED, f"{template.where}: Service {matching[0]} ({variable}) selects none of "
                                         "the output's pods"))
    return out


def _dns_name_problems(template: PodTemplate, variable: str, value: str,
                       by_host: dict[str, PodTemplate]) -> list[Problem]:
    host, dot, subdomain = value.partition(".")
    if not dot:
        return []
    subdomain = subdomain.split(".")[0]
    owner = by_host.get(host)
    if owner is None:
        return [Problem(RENAMED, f"{template.where}: {variable}={value}: no pod of the output gets the host name {host}")]
    if owner.subdomain != subdomain:
        return [Problem(RENAMED, f"{template.where}: {variable}={value}: {host} lives under subdomain "
                                 f"{owner.subdomain}, not {subdomain}")]
    return []
