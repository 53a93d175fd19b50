"""msgen's kustomize transformer configuration, `msgen-kustomize.yaml`, written from one table:
`python -m tests.generators.kustomize_configuration --write`.

kustomize's builtin transformers know where Kubernetes' own kinds keep their pod templates;
they do not know the kinds msgen writes (JobSet, Volcano Job, TrainingRuntime) nor those it
reads (MSJob and the other job kinds). The configuration teaches them: labels and annotations
reach the pod templates, name references (a generated ConfigMap's or Secret's hashed name, a
renamed PVC or ServiceAccount) and vars reach every pod template, and `replicas:` naming a job
sizes its Workers before msgen compiles it. What cannot be taught, a rename or a size changed
after msgen compiled a job, meets a field path that goes on past a scalar, and kustomize stops
the build with that path, which says what to do (the file's comments say more).

Every overlay msgen ships lists a copy (`OVERLAYS`); tests fail, naming this command, while a
copy differs (`--check` lists them).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = "msgen-kustomize.yaml"
OVERLAYS = ("gpu", "ascend", "generator", "legacy-plugin")
COMMAND = "python -m tests.generators.kustomize_configuration --write"
#: A line of the file msgen-krm looks for in the configurations a build lists.
MARKER = "# msgen-kustomize-configuration v1"

#: (group, kind, version or None, pod template paths) of the kinds kustomize does not know.
#: Kinds msgen writes: every path is there, so labels may create what is missing.
WRITTEN = (
    ("jobset.x-k8s.io", "JobSet", None, ("spec/replicatedJobs/template/spec/template",)),
    ("batch.volcano.sh", "Job", None, ("spec/tasks/template",)),
    ("trainer.kubeflow.org", "TrainingRuntime", None,
     ("spec/template/spec/replicatedJobs/template/spec/template",)),
)
#: The Job templates inside them (their Jobs' labels, which JobSet and Trainer copy).
JOB_TEMPLATES = (
    ("jobset.x-k8s.io", "JobSet", "spec/replicatedJobs/template"),
    ("trainer.kubeflow.org", "TrainingRuntime", "spec/template/spec/replicatedJobs/template"),
)
#: Kinds msgen reads, with each role's pod template as the operators' own examples spell the
#: role (kustomize paths take no wildcard; a role spelt otherwise, `worker`, is not reached:
#: msgen's checks then say which reference is left).
READ = (
    ("mindspore.gitee.com", "MSJob", None,
     tuple(f"spec/msReplicaSpecs/{r}/template" for r in ("Scheduler", "PS", "Worker"))),
    ("mindxdl.gitee.com", "AscendJob", None,
     tuple(f"spec/replicaSpecs/{r}/template" for r in ("Master", "Scheduler", "Chief", "Worker"))),
    ("kubeflow.org", "MXJob", "v1",
     tuple(f"spec/mxReplicaSpecs/{r}/template" for r in ("Scheduler", "Server", "Worker", "Tuner",
                                                          "TunerTracker", "TunerServer"))),
    ("kubeflow.org", "MXJob", "v1beta1", ("spec/replicaSpecs/template",)),
    ("kubeflow.org", "Caffe2Job", None, ("spec/replicaSpecs/template",)),
    ("kubeflow.org", "MSJob", "v1", ("spec/replicaSpecs/template",)),  # the 2020 MSJob: a list
)
#: `replicas:` naming a job sets its Workers (kustomize creates a missing one: msgen then
#: says the role has no template, or that two keys name the Workers).
JOB_REPLICAS = (
    ("mindspore.gitee.com", "MSJob", "spec/msReplicaSpecs/Worker/replicas"),
    ("mindxdl.gitee.com", "AscendJob", "spec/replicaSpecs/Worker/replicas"),
)
#: Where a pod spec names other objects, as kustomize's own nameReference lists them.
REFERENCES = {
    ("ConfigMap", "v1"): (
        "volumes/configMap/name", "volumes/projected/sources/configMap/name",
        "containers/env/valueFrom/configMapKeyRef/name", "initContainers/env/valueFrom/configMapKeyRef/name",
        "containers/envFrom/configMapRef/name", "initContainers/envFrom/configMapRef/name",
    ),
    ("Secret", "v1"): (
        "volumes/secret/secretName", "volumes/projected/sources/secret/name",
        "containers/env/valueFrom/secretKeyRef/name", "initContainers/env/valueFrom/secretKeyRef/name",
        "containers/envFrom/secretRef/name", "initContainers/envFrom/secretRef/name",
        "imagePullSecrets/name",
    ),
    ("PersistentVolumeClaim", "v1"): ("volumes/persistentVolumeClaim/claimName",),
    ("ServiceAccount", "v1"): ("serviceAccountName", "serviceAccount"),
}
#: Where kustomize's vars may stand in a pod spec (its own varReference for Kubernetes' kinds).
VARIABLES = ("containers/args", "containers/command", "containers/env/value", "containers/volumeMounts/mountPath",
             "initContainers/args", "initContainers/command", "initContainers/env/value",
             "initContainers/volumeMounts/mountPath")

#: The workloads msgen writes, and the annotation only msgen's carry.
WORKLOADS = (("batch", "Job"), ("", "Pod"), ("apps", "StatefulSet"), ("jobset.x-k8s.io", "JobSet"),
             ("batch.volcano.sh", "Job"), ("trainer.kubeflow.org", "TrainJob"))
RUN_POLICY = r"metadata/annotations/msgen\/run-policy"
RENAMED = "renamed-after-msgen-compiled-it--rename-the-job-before-msgen-runs--see-msgen-docs-gitops-md-renames"
RESIZED = ("resized-after-msgen-compiled-it--MS_WORKER_NUM-would-disagree--set-the-replicas-of-the-job-"
           "before-msgen-runs--see-msgen-docs-gitops-md-overlays")
UNSIZABLE = ("replicas-cannot-size-this-kind--for-a-job-msgen-compiles-name-the-job-itself-in-the-overlay-"
             "that-runs-msgen--see-msgen-docs-gitops-md-overlays")

HEADER = f"""{MARKER}
# msgen's kustomize configuration: list it under `configurations:` in the overlay that runs
# msgen-krm (or holds msgen's generator), as every overlay of msgen does. kustomize carries it
# up to every overlay that includes that one. Generated by {COMMAND};
# copy it as it is (msgen-krm warns when a build it runs in lists none).
#
# What it teaches kustomize's builtin transformers, in that overlay and every overlay above:
# - commonLabels, labels (with includeSelectors or includeTemplates) and commonAnnotations reach
#   the pod templates inside JobSets, Volcano Jobs and TrainingRuntimes, so msgen's Services,
#   whose selectors commonLabels extends, still select the job's pods;
# - configMapGenerator / secretGenerator (hashed names), and renamed PVCs and ServiceAccounts,
#   are followed into those pod templates and into the jobs msgen reads;
# - vars are replaced there too;
# - `replicas: [{{name: <job>, count: N}}]` in the overlay that runs msgen sets the job's Workers
#   before msgen compiles it, so MS_WORKER_NUM and every count follow.
#
# What it refuses, because msgen wrote the old value into the job (the build stops with a
# field path that says what to do instead):
# - namePrefix / nameSuffix of what msgen compiled (an overlay above, or beside a generator):
#   the Workers' $(<JOB>_SCHEDULER_0_SERVICE_HOST), the pods' subdomain and DNS names would
#   name objects that are gone; rename the job before msgen compiles it;
# - `replicas:` naming a workload msgen wrote: MS_WORKER_NUM, the ranks and the gang sizes
#   would disagree; set the job's replicas before msgen compiles it.
# A patch that changes a size after msgen (parallelism, completions, a task's replicas) is no
# transformer kustomize can be taught about: msgen-krm listed as a validator of the top overlay,
# and the Argo CD plugin, check every count (see msgen's docs/gitops.md, Overlays).
"""


def _field(path: str, group: str, kind: str, version: str | None, create: bool = False) -> list[str]:
    """One field spec, on one line."""
    keys = [f"path: {path}"] + ([f"group: {group}"] if group else []) + ([f"version: {version}"] if version else [])
    keys += [f"kind: {kind}"] + (["create: true"] if create else [])
    return ["- {" + ", ".join(keys) + "}"]


def _pod_fields(relative: str, kinds: tuple[tuple[str, str, str | None, tuple[str, ...]], ...],
                create: bool = False) -> list[str]:
    out = []
    for group, kind, version, templates in kinds:
        for template in templates:
            out += _field(f"{template}/{relative}", group, kind, version, create)
    return out


def _indented(lines: list[str], by: str) -> list[str]:
    return [by + line for line in lines]


def configuration() -> str:
    """The text of msgen-kustomize.yaml."""
    lines = HEADER.splitlines()
    for field in ("namePrefix", "nameSuffix"):
        lines += [f"{field}:", f"- path: {RUN_POLICY}/{RENAMED}"]
    lines.append("commonLabels:")
    lines += _pod_fields("metadata/labels", WRITTEN, create=True)
    lines += [line for group, kind, path in JOB_TEMPLATES
              for line in _field(f"{path}/metadata/labels", group, kind, None, create=True)]
    lines.append("templateLabels:")
    lines += _pod_fields("metadata/labels", WRITTEN, create=True)
    lines.append("commonAnnotations:")
    lines += _pod_fields("metadata/annotations", WRITTEN, create=True)
    lines.append("nameReference:")
    for (kind, version), paths in REFERENCES.items():
        lines += [f"- kind: {kind}", f"  version: {version}", "  fieldSpecs:"]
        for path in paths:
            lines += _indented(_pod_fields(f"spec/{path}", WRITTEN + READ), "  ")
    lines.append("varReference:")
    for path in VARIABLES:
        lines += _pod_fields(f"spec/{path}", WRITTEN + READ)
    lines.append("replicas:")
    for group, kind, path in JOB_REPLICAS:
        lines += _field(path, group, kind, None, create=True)
    for group, kind in WORKLOADS:
        # a StatefulSet is sized by `replicas:` (refused only where msgen wrote it); the other
        # kinds never were, so every one of them is refused, saying why
        guard = f"{RUN_POLICY}/{RESIZED}" if kind == "StatefulSet" else f"metadata/name/{UNSIZABLE}"
        lines += _field(guard, group, kind, None)
    return "\n".join(lines) + "\n"


def stale() -> list[Path]:
    """The copies that differ from `configuration()`."""
    text = configuration()
    paths = [ROOT / "overlays" / overlay / NAME for overlay in OVERLAYS]
    return [p for p in paths if not p.is_file() or p.read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        for path in stale():
            print(f"{path.relative_to(ROOT)} differs: run {COMMAND}")
        return 1 if stale() else 0
    if argv == ["--write"]:
        for path in stale():
            path.write_text(configuration(), encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    print("usage: python -m tests.generators.kustomize_configuration --write | --check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
