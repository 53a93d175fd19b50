"""kustomize's builtin transformers around msgen, as users write overlays, in the real kustomize.

Each builtin transformer (labels, annotations, namespace, images, generated ConfigMaps and
Secrets with hashed names, vars, replacements, replicas) in each position (the overlay that runs
msgen, a generator's job kustomization, an overlay above, a component of an overlay above),
through each host (the KRM transformer, the KRM generator, the legacy exec plug-in, Argo CD's
plugin), on each target and address mode, gives a build in which every name, label, selector,
reference and size of the job agrees (msgen.checks.job_agreement) and the transformer did what
it says; or a failed build that names what to do instead (a size changed after msgen).
`msgen-kustomize.yaml`, listed by every overlay msgen ships, is what makes the difference: the
cases marked `TODAY` break without it.

kustomize 4.5.4 (`.ci/fetch-kustomize`) and the 5.x the Argo CD sidecar image carries (v5.5.0,
which the live harness builds: `$MSGEN_KUSTOMIZE5`, else the harness's `bin/kustomize-v5`).
Every case runs on some target, mode, host and kustomize in the default run (about 70 builds);
`MSGEN_FULL_MATRIX=1` runs each case on every target, both modes and both kustomize versions.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen.checks.job_agreement import disagreements
from msgen.targets import NAMES as TARGETS

from .conftest import ROOT, kustomize_binary, msgen
from .generators import kustomize_configuration
from .test_gitops_argocd import PLUGIN, argocd_env, run_command
from .test_gitops_renames import EXEC, objects, run_kustomize

#: Spread over the Pythons CI runs: its time is the real kustomize's (tests/python_share.py).
pytestmark = pytest.mark.spread

OVERLAYS = ROOT / "overlays"
FULL = os.environ.get("MSGEN_FULL_MATRIX") == "1"
HARNESS = Path(os.environ.get("MSGEN_HARNESS_HOME", "/root/.cache/msgen-harness"))
MODES = ("cluster-ip", "dns")
MANAGED = "app.kubernetes.io/managed-by"

#: What a user writes in a kustomization, per case.
CASES: dict[str, dict[str, Any]] = {
    "commonLabels": {"commonLabels": {"team": "vision"}},
    "labels-selectors": {"labels": [{"pairs": {"team": "vision"}, "includeSelectors": True}]},
    "labels": {"labels": [{"pairs": {"team": "vision"}}]},
    "commonAnnotations": {"commonAnnotations": {"owner": "vision"}},
    "namespace": {"namespace": "team-a"},
    "images": {"images": [{"name": "mindspore/mindspore-cpu", "newName": "registry.example/ms-cpu", "newTag": "9"}]},
    "configMapGenerator": {"configMapGenerator": [{"name": "train-config", "literals": ["epochs=3"]}]},
    "secretGenerator": {"secretGenerator": [{"name": "creds", "literals": ["token=x"]}]},
    "vars": {"configMapGenerator": [{"name": "paths", "literals": ["dir=/data"]}],
             "vars": [{"name": "DATA_DIR", "objref": {"kind": "ConfigMap", "name": "paths", "apiVersion": "v1"},
                       "fieldref": {"fieldpath": "data.dir"}}]},
    "replacements": {"configMapGenerator": [{"name": "paths", "literals": ["dir=/data"],
                                             "options": {"disableNameSuffixHash": True}}],
                     "replacements": [{"source": {"kind": "ConfigMap", "name": "paths", "fieldPath": "data.dir"},
                                       "targets": [{"select": {"labelSelector": f"{MANAGED}=msgen"},
                                                    "fieldPaths": ["metadata.annotations.data-dir"],
                                                    "options": {"create": True}}]}]},
}
#: Cases whose job kustomize broke without a word before msgen-kustomize.yaml, on these targets
#: and in these positions.
TODAY = {
    "commonLabels": ({"jobset", "volcano", "trainjob"}, {"above", "component"}),
    "labels-selectors": ({"jobset", "volcano", "trainjob"}, {"above", "component"}),
    "configMapGenerator": ({"jobset", "volcano", "trainjob"}, {"msgen", "above", "component"}),
    "secretGenerator": ({"jobset", "volcano", "trainjob"}, {"msgen", "above", "component"}),
}
AFTER = ("above", "component")
POSITIONS = {"krm-transformer": ("msgen", "above", "component"), "krm-generator": ("msgen", "job", "above"),
             "legacy-plugin": ("job", "above"), "argocd": ("msgen", "above")}


def kustomize_v5() -> str | None:
    for candidate in (os.environ.get("MSGEN_KUSTOMIZE5"), str(HARNESS / "bin" / "kustomize-v5")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def binary(version: str) -> str:
    found = kustomize_binary() if version == "4.5.4" else kustomize_v5()
    if found is None:
        pytest.skip(f"kustomize {version} is not installed (4.5.4: .ci/fetch-kustomize; 5.5.0: "
                    "tests/live/cluster builds it into the harness's bin/kustomize-v5, or set MSGEN_KUSTOMIZE5)")
    return found


#: The default run's positions per case on the KRM transformer (every case above msgen; FULL: all).
DEFAULT_POSITIONS = {"commonLabels": AFTER + ("msgen",), "configMapGenerator": AFTER + ("msgen",),
                     "images": ("above", "msgen"), "namespace": ("above", "msgen"), "vars": ("above", "msgen"),
                     "replacements": ("above", "msgen")}


def matrix() -> list[tuple[str, str, str, str, str, str]]:
    """(case, host, position, target, mode, kustomize version). The default run: every case
    above msgen through the KRM transformer, on every target kustomize broke it on, and some
    cases in the other positions and through the other hosts; targets, modes and versions are
    taken in turn. MSGEN_FULL_MATRIX=1: everything."""
    rows = []
    turn = itertools.count()
    for case, (host, positions) in itertools.product(CASES, POSITIONS.items()):
        for position in positions:
            if FULL:
                rows += [(case, host, position, t, m, v) for t in TARGETS for m in MODES for v in ("4.5.4", "5.5.0")]
                continue
            if host == "krm-transformer" and position not in DEFAULT_POSITIONS.get(case, ("above",)):
                continue
            if host != "krm-transformer" and case not in ("commonLabels", "configMapGenerator"):
                continue
            i = next(turn)
            broken, where = TODAY.get(case, (set(), set()))
            targets = sorted(broken) if host == "krm-transformer" and position == "above" and broken \
                else [TARGETS[i % len(TARGETS)]]
            rows += [(case, host, position, t, MODES[(i + j) % 2], ("4.5.4", "5.5.0")[(i + j) % 2])
                     for j, t in enumerate(targets)]
    return rows


def job_text(source: Path, mode: str, target: str, annotate: bool) -> str:
    """The job with a ConfigMap, a Secret and a variable its Workers use."""
    job = yaml.safe_load(source.read_text())
    if annotate:
        job["metadata"]["annotations"].update({"msgen/scheduler-address": mode, "msgen/target": target})
    for role in job["spec"]["msReplicaSpecs"].values():
        spec = role["template"]["spec"]
        spec["volumes"] = [{"name": "config", "configMap": {"name": "train-config", "optional": True}},
                           {"name": "creds", "secret": {"secretName": "creds", "optional": True}}]
        spec["containers"][0]["env"] = [{"name": "DATA_DIR", "value": "$(DATA_DIR)"}]
    return yaml.safe_dump(job, sort_keys=False)


def with_case(kustomization: Path, case: str, component: bool = False) -> None:
    data = yaml.safe_load(kustomization.read_text()) if kustomization.exists() else {}
    data.update(CASES[case])
    if component:
        data = {"apiVersion": "kustomize.config.k8s.io/v1alpha1", "kind": "Component", **data}
    kustomization.write_text(yaml.safe_dump(data, sort_keys=False))


def lay_out(tmp: Path, case: str, host: str, position: str, target: str, mode: str) -> Path:
    """The overlays of one case; returns the directory to build."""
    if host in ("krm-transformer", "argocd"):
        shutil.copytree(OVERLAYS / "base", tmp / "base")
        shutil.copytree(OVERLAYS / "gpu", tmp / "run")
        (tmp / "base" / "msjob.yaml").write_text(job_text(OVERLAYS / "base" / "msjob.yaml", mode, target, False))
        config = tmp / "run" / "msgen.yaml"
        config.write_text(config.read_text().replace("target: indexed-job", f"target: {target}\n  scheduler-address: {mode}"))
        kustomization = tmp / "run" / "kustomization.yaml"  # the GPU patches would need a GPU image: keep the job's
        data = yaml.safe_load(kustomization.read_text())
        data.pop("patches")
        kustomization.write_text(yaml.safe_dump(data, sort_keys=False))
    else:
        overlay = "generator" if host == "krm-generator" else "legacy-plugin"
        shutil.copytree(OVERLAYS / overlay, tmp / "run")
        (tmp / "run" / "msjob.yaml").write_text(job_text(OVERLAYS / overlay / "msjob.yaml", mode, target, True))
        if position == "job":
            (tmp / "run" / "jobs").mkdir()
            (tmp / "run" / "msjob.yaml").rename(tmp / "run" / "jobs" / "msjob.yaml")
            with_case(tmp / "run" / "jobs" / "kustomization.yaml", case)
            text = (tmp / "run" / "jobs" / "kustomization.yaml").read_text()
            (tmp / "run" / "jobs" / "kustomization.yaml").write_text("resources: [msjob.yaml]\n" + text)
            kustomization = tmp / "run" / "kustomization.yaml"
            kustomization.write_text(kustomization.read_text().replace("  - msjob.yaml", "  - jobs"))
        ran = tmp / "run" / "msgen-ran.yaml"
        if ran.exists() and target != "indexed-job":  # it names a Job of indexed-job's output
            ran.unlink()
            kustomization = tmp / "run" / "kustomization.yaml"
            kustomization.write_text(kustomization.read_text().replace("transformers:\n  - msgen-ran.yaml\n", ""))
    if position == "msgen":
        with_case(tmp / "run" / "kustomization.yaml", case)
        return tmp / "run"
    if position == "job":
        return tmp / "run"
    (tmp / "top").mkdir()
    top = {"resources": ["../run"]}
    if position == "component":
        (tmp / "component").mkdir()
        with_case(tmp / "component" / "kustomization.yaml", case, component=True)
        top["components"] = ["../component"]
    (tmp / "top" / "kustomization.yaml").write_text(yaml.safe_dump(top))
    if position == "above":
        with_case(tmp / "top" / "kustomization.yaml", case)
    return tmp / "top"


def build(tmp: Path, host: str, directory: Path, mode: str, version: str) -> tuple[int, str, str]:
    kustomize = binary(version)
    if host == "argocd":
        served = "v1,batch/v1,apps/v1,jobset.x-k8s.io/v1alpha2,batch.volcano.sh/v1alpha1,scheduling.volcano.sh/v1beta1," \
            "trainer.kubeflow.org/v1alpha1"
        env = argocd_env(directory, MSGEN_KUSTOMIZE=kustomize, PARAM_SCHEDULER_ADDRESS=mode, KUBE_VERSION="1.33",
                         KUBE_API_VERSIONS=served)
        done = run_command(PLUGIN["spec"]["generate"], directory, env)
    elif host == "legacy-plugin":
        home = tmp / "plugins"
        assert msgen("install-kustomize-plugin", "--plugin-home", str(home)).exit_code == 0
        done = run_kustomize(kustomize, "--enable-alpha-plugins", env={"KUSTOMIZE_PLUGIN_HOME": str(home)})(directory)
    else:
        done = run_kustomize(kustomize, *EXEC)(directory)
    return done.returncode, done.stdout, done.stderr


def msgen_pod_templates(built: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from msgen.checks.name_references import pod_templates

    found = [t for t in pod_templates(built) if t.labels.get(MANAGED) == "msgen"]
    assert found, "the build holds msgen's pods"
    return [{"metadata": {"labels": t.labels}, "spec": t.spec, "where": t.where} for t in found]


def templates_with_annotations(built: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pod template of msgen's workloads, with its annotations (pod_templates keeps labels only)."""
    out = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            spec = node.get("spec")
            if isinstance(spec, dict) and "containers" in spec and isinstance(node.get("metadata"), dict):
                out.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    for obj in built:
        walk(obj.get("spec"))
        if obj.get("kind") == "Pod":
            out.append(obj)
    return out


def did_what_it_says(case: str, position: str, built: list[dict[str, Any]]) -> None:
    """The transformer's own effect on msgen's objects."""
    ours = [o for o in built if (o["metadata"].get("labels") or {}).get(MANAGED) == "msgen"]
    templates = msgen_pod_templates(built)
    after = position in AFTER
    if case in ("commonLabels", "labels-selectors", "labels"):
        assert all(o["metadata"]["labels"].get("team") == "vision" for o in ours)
        if after and case != "labels":
            assert all(t["metadata"]["labels"].get("team") == "vision" for t in templates), "the pods got the label"
            selectors = [o["spec"]["selector"] for o in ours if o["kind"] == "Service" and o["spec"].get("selector")]
            assert all(s.get("team") == "vision" for s in selectors)
    elif case == "commonAnnotations" and after:
        assert all(o["metadata"]["annotations"].get("owner") == "vision" for o in ours)
        assert all((t.get("metadata") or {}).get("annotations", {}).get("owner") == "vision"
                   for t in templates_with_annotations(ours))
    elif case == "namespace":
        assert {o["metadata"].get("namespace") for o in built} == {"team-a"}
    elif case == "images":
        images = {c["image"] for t in templates for c in t["spec"]["containers"]}
        assert images == {"registry.example/ms-cpu:9"}, images
    elif case in ("configMapGenerator", "secretGenerator"):
        kind, field = ("ConfigMap", "configMap") if case == "configMapGenerator" else ("Secret", "secret")
        generated = [o["metadata"]["name"] for o in built if o["kind"] == kind]
        assert len(generated) == 1 and generated[0].startswith(("train-config-", "creds-")), generated
        for t in templates:
            named = {(v.get(field) or {}).get("name" if field == "configMap" else "secretName")
                     for v in t["spec"].get("volumes") or []} - {None}
            assert named == {generated[0]}, (t["where"], named)
    elif case == "vars":
        values = {e.get("value") for t in templates for c in t["spec"]["containers"] for e in c.get("env") or []
                  if e["name"] == "DATA_DIR"}
        assert values == {"/data"}, values
    elif case == "replacements":
        assert all(o["metadata"].get("annotations", {}).get("data-dir") == "/data" for o in ours) or not after


def expected_failure(case: str, host: str, position: str) -> str | None:
    """What a build that must fail says, or None."""
    generated = case in ("configMapGenerator", "secretGenerator", "vars", "replacements")
    if position == "job" and generated:
        # kustomize takes every object of a generator's kustomization for a generator's config
        return "plugin"
    return None


@pytest.mark.parametrize(("case", "host", "position", "target", "mode", "version"), matrix())
def test_a_builtin_transformer_leaves_a_job_that_agrees(case: str, host: str, position: str, target: str, mode: str,
                                                        version: str, tmp_path: Path) -> None:
    directory = lay_out(tmp_path, case, host, position, target, mode)
    status, stdout, stderr = build(tmp_path, host, directory, mode, version)
    failure = expected_failure(case, host, position)
    if failure is not None:
        assert status != 0 and stdout == "", stdout
        assert failure in stderr
        return
    assert status == 0, stderr
    built = objects(stdout)
    assert disagreements(built) == [], stderr
    did_what_it_says(case, position, built)
    assert "lists no msgen-kustomize.yaml" not in stderr


def test_the_shipped_configuration_is_the_generated_one() -> None:
    assert kustomize_configuration.stale() == [], f"run {kustomize_configuration.COMMAND}"


def test_the_cases_kustomize_broke_break_without_the_configuration(tmp_path: Path) -> None:
    """What msgen-kustomize.yaml is for: without it, each TODAY case builds with exit 0 and a
    job that disagrees with itself, and msgen-krm warns that the configuration is missing."""
    for i, (case, (targets, _positions)) in enumerate(sorted(TODAY.items())):
        for target in sorted(targets):
            tmp = tmp_path / f"{case}-{target}"
            tmp.mkdir()
            directory = lay_out(tmp, case, "krm-transformer", "above", target, MODES[i % 2])
            kustomization = tmp / "run" / "kustomization.yaml"
            kustomization.write_text(kustomization.read_text().replace("- msgen-kustomize.yaml", "[]")
                                     .replace("configurations:\n[]", "configurations: []"))
            status, stdout, stderr = build(tmp, "krm-transformer", directory, MODES[i % 2], "4.5.4")
            assert status == 0, stderr
            assert disagreements(objects(stdout)) != [], (case, target)
            assert "lists no msgen-kustomize.yaml under configurations:" in stderr


@pytest.mark.parametrize(("target", "refusal"), [("statefulset", kustomize_configuration.RESIZED),
                                                 ("jobset", kustomize_configuration.UNSIZABLE)])
def test_replicas_after_msgen_fails_the_build_saying_what_to_do(target: str, refusal: str, tmp_path: Path) -> None:
    directory = lay_out(tmp_path, "images", "krm-transformer", "above", target, "cluster-ip")
    name = "resnet50-worker" if target == "statefulset" else "resnet50"
    kustomization = directory / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + f"replicas: [{{name: {name}, count: 7}}]\n")
    status, stdout, stderr = build(tmp_path, "krm-transformer", directory, "cluster-ip", "4.5.4")
    assert status != 0 and stdout == ""
    assert refusal in stderr


@pytest.mark.parametrize("version", ("4.5.4", "5.5.0"))
def test_replicas_naming_the_job_where_msgen_runs_sizes_its_workers(version: str, tmp_path: Path) -> None:
    directory = lay_out(tmp_path, "images", "krm-transformer", "msgen", "statefulset", "dns")
    kustomization = directory / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "replicas: [{name: resnet50, count: 3}]\n")
    status, stdout, stderr = build(tmp_path, "krm-transformer", directory, "dns", version)
    assert status == 0, stderr
    built = objects(stdout)
    assert disagreements(built) == []
    workers = [o for o in built if o["metadata"]["name"] == "resnet50-worker"]
    assert workers[0]["spec"]["replicas"] == 3
    env = {e["name"]: e.get("value") for e in workers[0]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["MS_WORKER_NUM"] == "3"


RESIZE = {"op": "replace", "path": "/spec/replicatedJobs/1/template/spec/parallelism", "value": 5}


def resized_above(tmp_path: Path, check: bool) -> Path:
    directory = lay_out(tmp_path, "images", "krm-transformer", "above", "jobset", "cluster-ip")
    data = yaml.safe_load((directory / "kustomization.yaml").read_text())
    data["patches"] = [{"target": {"kind": "JobSet"}, "patch": yaml.safe_dump([RESIZE])}]
    if check:
        shutil.copy(OVERLAYS / "production" / "msgen-check.yaml", directory)
        data["transformers"] = ["msgen-check.yaml"]
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(data))
    return directory


def test_a_patch_that_resizes_after_msgen_is_caught_by_msgen_check_and_argo_cd(tmp_path: Path) -> None:
    """No configuration can teach kustomize what a patch means: plain kustomize builds it (exit
    0, a job whose Workers wait for peers that never come); msgen-check.yaml listed last in the
    top overlay, and the Argo CD plugin, fail it saying why."""
    plain = resized_above(tmp_path / "plain", check=False)
    status, stdout, _ = build(tmp_path / "plain", "krm-transformer", plain, "cluster-ip", "4.5.4")
    assert status == 0
    assert {d.cause for d in disagreements(objects(stdout))} == {"sized"}
    checked = resized_above(tmp_path / "checked", check=True)
    for host in ("krm-transformer", "argocd"):
        status, stdout, stderr = build(tmp_path / "checked", host, checked, "cluster-ip", "5.5.0")
        assert status != 0 and stdout == ""
        assert "parallelism 5 and completions 2 differ" in stderr
        assert "resized after msgen compiled it" in stderr
    status, stdout, stderr = build(tmp_path / "plain", "argocd", plain, "cluster-ip", "4.5.4")
    assert status != 0 and stdout == "" and "resized after msgen compiled it" in stderr


def test_msgen_check_passes_every_object_through_unchanged(tmp_path: Path) -> None:
    directory = lay_out(tmp_path, "commonLabels", "krm-transformer", "above", "volcano", "dns")
    status, without, stderr = build(tmp_path, "krm-transformer", directory, "dns", "4.5.4")
    assert status == 0, stderr
    shutil.copy(OVERLAYS / "production" / "msgen-check.yaml", directory)
    kustomization = directory / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text() + "transformers: [msgen-check.yaml]\n")
    status, checked, stderr = build(tmp_path, "krm-transformer", directory, "dns", "4.5.4")
    assert status == 0, stderr
    assert checked == without
