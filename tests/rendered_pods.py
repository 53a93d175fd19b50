"""The pods rendered objects stand for, as Kubernetes would run them, with what each process
sees: a Job's template once per completion index, with the downward-API values and `$(VAR)`
references resolved the way the kubelet resolves them (only variables defined earlier in the
same container). The env contracts' tests (each framework's, contracts §5-7) read them.
"""

from __future__ import annotations

import re
from typing import Any

from .conftest import msgen

COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
RUN_UID = "uid-of-the-run"


def render(path: str, *args: str) -> list[dict[str, Any]]:
    run = msgen("render", path, *args)
    assert run.exit_code == 0, run.stderr
    return run.objects()


def _resolve(entry: dict[str, Any], index: int, defined: dict[str, str]) -> str:
    if "valueFrom" in entry:
        field = entry["valueFrom"]["fieldRef"]["fieldPath"]
        if field in (COMPLETION_INDEX, "metadata.labels['apps.kubernetes.io/pod-index']"):
            return str(index)
        if field == "metadata.labels['controller-uid']":
            return RUN_UID
        return f"<{field}>"
    return re.sub(
        r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
        lambda m: defined.get(m.group(1), m.group(0)),
        str(entry["value"]),
    )


def pods(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pod the objects stand for: role, index, host name and env per container."""
    out = []
    for obj in objects:
        name, spec = obj["metadata"]["name"], obj.get("spec") or {}
        # (template, index the controller gives the pod or None, host name, subdomain)
        templates: list[tuple[dict[str, Any], int | None, str | None, str | None]] = []
        if obj["kind"] == "Pod":
            templates = [(obj, None, None, None)]
        elif obj["kind"] == "Job" and obj["apiVersion"] == "batch/v1":
            indexed = spec.get("completionMode") == "Indexed"
            templates = [
                (spec["template"], i if indexed else None, f"{name}-{i}" if indexed else None, None)
                for i in range(spec["parallelism"])
            ]
        elif obj["kind"] == "StatefulSet":
            templates = [
                (spec["template"], i, f"{name}-{i}", spec["serviceName"]) for i in range(spec["replicas"])
            ]
        elif obj["kind"] == "JobSet":
            for rjob in spec["replicatedJobs"]:
                job = rjob["template"]["spec"]
                templates += [
                    (job["template"], i, f"{name}-{rjob['name']}-0-{i}", spec["network"]["subdomain"])
                    for i in range(job["parallelism"])
                ]
        else:
            assert obj["kind"] in ("Service", "ConfigMap", "PodGroup"), (
                f"a {obj['kind']}: teach pods() how many pods it stands for and their indexes"
            )
            continue
        for template, given, hostname, subdomain in templates:
            labels = template["metadata"]["labels"]
            index = int(labels.get("training.kubeflow.org/replica-index", given))
            envs = {}
            for container in template["spec"]["containers"]:
                defined: dict[str, str] = {}
                for entry in container.get("env", []):
                    defined[entry["name"]] = _resolve(entry, index, defined)
                envs[container["name"]] = defined
            out.append(
                {
                    "role": labels["training.kubeflow.org/replica-type"],
                    "index": index,
                    "host": f"{hostname or template['spec']['hostname']}.{subdomain or template['spec']['subdomain']}",
                    "env": envs,
                }
            )
    return out


#: The targets that can tell each pod its index (volcano cannot; the 2020 MSJob's ranks
#: need a workload per pod: indexed-job and pod only).
INDEXED_TARGETS = ["indexed-job", "pod", "statefulset", "jobset"]
PER_POD_TARGETS = ["indexed-job", "pod"]
