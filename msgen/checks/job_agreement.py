"""Does every job msgen compiled still agree with itself after the tools that ran above it?

msgen writes names, labels, selectors, references and sizes of a job into each other (the
Workers' Scheduler address, the Services' selectors, MS_WORKER_NUM). A kustomize overlay
above msgen can change one side and not the other: a rename (namePrefix, nameSuffix), a label
added to the Services' selectors but not to the pods inside a kind kustomize does not know, a
generated ConfigMap's or Secret's hashed name it did not follow into such a pod template, a
size changed by `replicas:` or a patch. The job then never forms its cluster, and nothing
says so. `disagreements` finds each of those in a build's objects and says which transformer
caused it and what to do instead; msgen's hosts that see a whole build (the Argo CD plugin,
msgen-krm run as a validator or over objects it compiled earlier) fail with it.
"""

# No `from __future__ import annotations`: it slows building NamedTuples (see msgen.model.plan).
import re
from typing import Any, NamedTuple

from . import job_sizes, name_references

SIZED = "sized"
#: kustomize's hash suffix: `-` and ten characters of its alphabet
HASHED = re.compile(r"^(?P<name>.+)-[bcdfghkmt2-9]{10}$")
#: (kind of object, where a pod spec names it)
REFERENCES = (
    ("ConfigMap", ("volumes", "configMap", "name")),
    ("ConfigMap", ("volumes", "projected", "sources", "configMap", "name")),
    ("ConfigMap", ("containers", "env", "valueFrom", "configMapKeyRef", "name")),
    ("ConfigMap", ("containers", "envFrom", "configMapRef", "name")),
    ("Secret", ("volumes", "secret", "secretName")),
    ("Secret", ("volumes", "projected", "sources", "secret", "name")),
    ("Secret", ("containers", "env", "valueFrom", "secretKeyRef", "name")),
    ("Secret", ("containers", "envFrom", "secretRef", "name")),
    ("Secret", ("imagePullSecrets", "name")),
)
CONFIGURATION = "msgen-kustomize.yaml"
ADVICE = {
    name_references.RENAMED: (
        "renamed after msgen compiled it (namePrefix or nameSuffix in an overlay above the one that runs "
        "msgen, or beside a generator): its Workers would never find their Scheduler; rename the job "
        "before msgen compiles it, in the overlay that runs msgen-krm or the kustomization that holds the "
        f"job file (msgen's docs/gitops.md, Renames), and list {CONFIGURATION} under configurations:"),
    name_references.LABELLED: (
        "labelled after msgen compiled it (commonLabels, or labels with includeSelectors: true, above "
        "msgen) where kustomize does not know the pod templates: the Services' selectors got the label "
        "and the pods did not; list msgen's " + CONFIGURATION + " under configurations: in the overlay "
        "that runs msgen (it teaches kustomize JobSet, Volcano Job and TrainingRuntime pod templates), "
        "or use labels without includeSelectors"),
    name_references.GENERATED: (
        "a generated ConfigMap or Secret (configMapGenerator, secretGenerator) got a hashed name that "
        "kustomize did not follow into the job's pods; list msgen's " + CONFIGURATION + " under "
        "configurations: in the overlay that runs msgen, spell the job's roles as its operator does "
        "(Worker, Scheduler), or set generatorOptions: {disableNameSuffixHash: true}; kustomize follows "
        "a generated name only into objects of the same namespace, so where msgen puts a namespace on "
        "the job's objects (Argo CD's application namespace), set namespace: in the overlay too"),
    SIZED: (
        "resized after msgen compiled it (replicas:, or a patch of parallelism, completions, a "
        "replicated Job's or task's replicas or numNodes, above msgen): MS_WORKER_NUM, the ranks and "
        "the gang sizes msgen wrote would disagree; change the job's replicas before msgen compiles it "
        "(a patch of the job, or replicas: naming the job, in the overlay that runs msgen-krm)"),
}


class Disagreement(NamedTuple):
    cause: str
    message: str


def disagreements(objects: list[dict[str, Any]]) -> list[Disagreement]:
    """Every name, label, selector, reference and size of msgen's jobs in `objects` that no
    longer agrees, with its cause (a key of ADVICE); [] when all do."""
    found = [Disagreement(p.cause, p.message) for p in name_references.findings(objects, config_maps=False)]
    found += [Disagreement(name_references.GENERATED, m) for m in _hashed_references(objects)]
    found += [Disagreement(SIZED, m) for m in job_sizes.problems(objects)]
    return found


def explained(found: list[Disagreement]) -> list[str]:
    """The lines to print: each disagreement, then once per cause what caused it and what to
    do instead."""
    lines = [d.message for d in found]
    for cause, advice in ADVICE.items():
        if any(d.cause == cause for d in found):
            lines.append(advice if cause == name_references.GENERATED else f"the job was {advice}")
    return lines


def _hashed_references(objects: list[dict[str, Any]]) -> list[str]:
    """References of msgen's pods to a ConfigMap or Secret that is not in the output when one
    named like it with kustomize's hash suffix is: a generator's name left unfollowed."""
    present: dict[str, set[str]] = {}
    for obj in objects:
        present.setdefault(str(obj.get("kind")), set()).add(obj["metadata"]["name"])
    hashed = {kind: {m.group("name") for n in names if (m := HASHED.match(n))} for kind, names in present.items()}
    out = []
    for template in name_references.pod_templates(objects):
        if template.labels.get(name_references.MANAGED_BY) != "msgen":
            continue
        for kind, path in REFERENCES:
            names = _values(template.spec, path)
            if path[0] == "containers":
                names |= _values(template.spec, ("initContainers",) + path[1:])
            for name in names:
                if name not in present.get(kind, set()) and name in hashed.get(kind, set()):
                    out.append(f"{template.where}: names {kind} {name}, which the output holds only as "
                               f"{name}-<hash>")
    return sorted(set(out))


def _values(node: Any, path: tuple[str, ...]) -> set[str]:
    """The strings at `path` below `node`, lists traversed as kustomize's field paths are."""
    if isinstance(node, list):
        return set().union(*(_values(item, path) for item in node)) if node else set()
    if not path:
        return {node} if isinstance(node, str) else set()
    if not isinstance(node, dict):
        return set()
    return _values(node.get(path[0]), path[1:])
