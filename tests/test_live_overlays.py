"""Real training under an overlay as users write them: one job per target, built by the real
kustomize with msgen-krm as its transformer, then labelled, given a generated ConfigMap and
another image by an overlay above the one that runs msgen.

The job is the live training suite's LeNet (`mindspore/lenet-cpu.yaml`, prepared as that suite
prepares it) in a base; the overlay that runs msgen lists `msgen.yaml`, `msgen-ran.yaml` and
`msgen-kustomize.yaml` as `overlays/gpu` does; the overlay above it adds `commonLabels` and
`labels` with `includeSelectors: true`, a `configMapGenerator` whose ConfigMap holds the training
script the pods run (a hashed name; no ConfigMap of the plain name exists in the namespace), and
an `images` entry that turns the job's image, which no node holds, into the MindSpore image the
nodes hold. So each transformer's effect is needed for the job to run at all: a selector label
missing from the pods leaves the Scheduler's Service without endpoints, an unfollowed hashed
name leaves the pods waiting for a ConfigMap, an image not replaced is never pulled.

Built with kustomize 4.5.4 (`.ci/fetch-kustomize`) and, when it is there, v5.5.0 (the harness's
`bin/kustomize-v5` or `$MSGEN_KUSTOMIZE5`), which must agree; the build is checked
(msgen.checks.job_agreement, and each transformer's effect), applied with `msgen apply --wait`
and judged as the live training suite judges a run: every worker process joined once, the
AllReduce sums are right, every worker ended with the same parameters, and `--wait` said
Succeeded (a StatefulSet's pods restart for ever: their first runs are read instead).

Runs with the live training suite's switch (MSGEN_TEST_TRAINING=1, MSGEN_TEST_KUBECONFIG;
marker `live_training`); `jobset`, `volcano` and `trainjob` skip without their controllers.
One job per target, the address modes taken in turn; MSGEN_FULL_MATRIX=1 runs both on each.
MSGEN_LIVE_REPORT=FILE appends one JSON line per run.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen.checks.job_agreement import disagreements
from msgen.checks.name_references import pod_templates
from msgen.targets import NAMES as TARGETS

from . import live_addons
from .conftest import ROOT, kustomize_binary
from .live_cluster import KUBECONFIG, KUBECTL, Outcome, Prepared, apply_file, kubectl, prepare, report, server_version
from .test_gitops_overlays import kustomize_v5
from .test_gitops_renames import EXEC, objects, run_kustomize
from .test_live_trainjob import assert_trainer_says_complete
from .test_live_training import TIMEOUT, assert_trained

pytestmark = [
    pytest.mark.live_training,
    pytest.mark.skipif(os.environ.get("MSGEN_TEST_TRAINING") != "1",
                       reason="the training suites run with MSGEN_TEST_TRAINING=1"),
    pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no cluster to train on"),
    pytest.mark.skipif(not KUBECTL, reason="the live training tests need kubectl on the PATH"),
]

OVERLAYS = ROOT / "overlays"
SAMPLE = ROOT / "samples" / "mindspore" / "lenet-cpu.yaml"
MODES = ("cluster-ip", "dns")
#: one job per target, the address modes taken in turn; MSGEN_FULL_MATRIX=1: both modes each
RUNS = [(t, m) for i, t in enumerate(TARGETS) for m in MODES
        if os.environ.get("MSGEN_FULL_MATRIX") == "1" or m == MODES[i % 2]]
ADDONS = {"jobset": ("jobset",), "volcano": ("volcano",), "trainjob": ("jobset", "trainer")}
#: an image no node holds (no registry is reachable): only the overlay's `images` makes it run
ABSENT_IMAGE = "registry.invalid/mindspore-cpu"
IMAGE = "localhost/mindspore-cpu:2.10.0"
SCRIPT_CONFIG = "train-script"
LABELS = {"team": "vision", "stage": "live"}
MANAGED = "app.kubernetes.io/managed-by"


@pytest.fixture
def namespace() -> Any:
    """A namespace of the test's own, without the training suite's script ConfigMap: the pods
    get the script only from the overlay's generated one."""
    prefix = os.environ.get("MSGEN_TEST_NAMESPACE_PREFIX", "msgen-live")
    name = f"{prefix}-overlay-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


def overlaid_job() -> Prepared:
    """LeNet as the training suite prepares it, its script from SCRIPT_CONFIG and its image
    one no node holds."""
    job = prepare(SAMPLE.read_text())
    for spec in job.job["spec"]["msReplicaSpecs"].values():
        pod = spec["template"]["spec"]
        for volume in pod.get("volumes") or []:
            if "configMap" in volume:
                volume["configMap"]["name"] = SCRIPT_CONFIG
        for container in pod["containers"]:
            container["image"] = f"{ABSENT_IMAGE}:absent"
    return job


def lay_out(tmp: Path, job: Prepared, target: str, mode: str, kube_version: str) -> Path:
    """base (the job), run (msgen-krm, as overlays/gpu without its patches), top (the
    transformers under test); returns top."""
    (tmp / "base").mkdir()
    (tmp / "base" / "msjob.yaml").write_text(yaml.safe_dump(job.job, sort_keys=False))
    (tmp / "base" / "kustomization.yaml").write_text("resources: [msjob.yaml]\n")
    run = tmp / "run"
    run.mkdir()
    for name in ("msgen.yaml", "msgen-ran.yaml", "msgen-kustomize.yaml"):
        shutil.copy(OVERLAYS / "gpu" / name, run / name)
    config = yaml.safe_load((run / "msgen.yaml").read_text())
    config["data"] = {"target": target, "scheduler-address": mode, "kube-version": kube_version}
    (run / "msgen.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (run / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": ["../base"], "transformers": ["msgen.yaml", "msgen-ran.yaml"],
        "configurations": ["msgen-kustomize.yaml"]}, sort_keys=False))
    top = tmp / "top"
    top.mkdir()
    shutil.copy(ROOT / "tests" / "live" / "train.py", top / "train.py")
    (top / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": ["../run"],
        "commonLabels": {"team": LABELS["team"]},
        "labels": [{"pairs": {"stage": LABELS["stage"]}, "includeSelectors": True}],
        "configMapGenerator": [{"name": SCRIPT_CONFIG, "files": ["train.py"]}],
        "images": [{"name": ABSENT_IMAGE, "newName": IMAGE.split(":")[0], "newTag": IMAGE.split(":")[1]}],
    }, sort_keys=False))
    return top


def built_by_each_kustomize(directory: Path) -> tuple[str, list[str]]:
    """The build's text (4.5.4's) and the versions that built it alike."""
    versions = [("4.5.4", kustomize_binary()), ("5.5.0", kustomize_v5())]
    texts: dict[str, str] = {}
    for version, binary in versions:
        if binary is None:
            assert version != "4.5.4", "kustomize 4.5.4 is missing: .ci/fetch-kustomize"
            continue
        done = run_kustomize(binary, *EXEC)(directory)
        assert done.returncode == 0, f"kustomize {version}: {done.stderr}"
        assert "lists no msgen-kustomize.yaml" not in done.stderr
        texts[version] = done.stdout
    first = texts["4.5.4"]
    for version, text in texts.items():
        assert objects(text) == objects(first), f"kustomize {version} built other objects than 4.5.4"
    return first, sorted(texts)


def assert_overlay_reached_the_pods(built: list[dict[str, Any]]) -> None:
    """Each transformer above msgen reached every pod msgen wrote and every selector."""
    assert disagreements(built) == []
    generated = [o["metadata"]["name"] for o in built if o["kind"] == "ConfigMap"]
    assert len(generated) == 1 and generated[0].startswith(f"{SCRIPT_CONFIG}-"), generated
    templates = [t for t in pod_templates(built) if t.labels.get(MANAGED) == "msgen"]
    assert templates
    for template in templates:
        assert {k: template.labels.get(k) for k in LABELS} == LABELS, template.where
        mounted = {(v.get("configMap") or {}).get("name") for v in template.spec.get("volumes") or []} - {None}
        assert mounted == {generated[0]}, (template.where, mounted)
        images = {c["image"] for c in template.spec["containers"] + (template.spec.get("initContainers") or [])}
        assert images == {IMAGE}, (template.where, images)
    selectors = [o["spec"]["selector"] for o in built if o["kind"] == "Service" and o["spec"].get("selector")]
    assert all({k: s.get(k) for k in LABELS} == LABELS for s in selectors), selectors


@pytest.mark.parametrize(("target", "mode"), RUNS)
def test_a_job_trains_under_an_overlay_with_labels_a_generated_config_map_and_an_image(
        target: str, mode: str, namespace: str, tmp_path: Path) -> None:
    live_addons.require(*ADDONS.get(target, ()))
    job = overlaid_job()
    if target == "volcano":
        live_addons.volcano_queue_for(job.job)
    text, versions = built_by_each_kustomize(lay_out(tmp_path, job, target, mode, server_version()))
    built = objects(text)
    assert_overlay_reached_the_pods(built)
    path = tmp_path / "built.yaml"
    path.write_text(text)
    shown = f"lenet-cpu.yaml under an overlay (labels, configMapGenerator, images; kustomize {', '.join(versions)})"
    outcome: Outcome | None = None
    try:
        if target == "statefulset":
            def all_trained(outcome: Outcome) -> bool:  # or the apply failed: nothing will train
                return outcome.exit_code != 0 or len(outcome.first_runs().of("trained")) >= job.worker_processes

            outcome = apply_file(namespace, path, wait=False, until=all_trained, timeout=600)
            assert outcome.exit_code == 0, outcome.stderr
            assert_trained(outcome.first_runs(), job, mode)
        else:
            outcome = apply_file(namespace, path, timeout=TIMEOUT)
            assert outcome.exit_code == 0, f"msgen apply --wait: {outcome.stdout}\n{outcome.stderr}"
            assert f"{job.name}: Succeeded after" in outcome.stdout, outcome.stdout
            assert_trained(outcome, job, mode)
            if target == "trainjob":
                assert_trainer_says_complete(namespace, job.name)
    except AssertionError:
        _record(shown, target, mode, outcome, "FAILED")
        raise
    _record(shown, target, mode, outcome, "trained (first run)" if target == "statefulset" else "trained, Succeeded")


def _record(job: str, target: str, mode: str, outcome: Outcome | None, result: str) -> None:
    report({"job": job, "target": target, "mode": mode, "outcome": result,
            "seconds": None if outcome is None else round(outcome.seconds)})
