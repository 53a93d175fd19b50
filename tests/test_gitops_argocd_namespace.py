"""Argo CD's destination namespace and the kustomize build inside the sidecar.

Argo CD puts its destination namespace on every object of an application that names none, and
kustomize follows a generated ConfigMap's or Secret's hashed name only into objects of the
generated object's own namespace. So msgen leaves the destination off the objects it compiles
inside the sidecar's kustomize build (where an overlay's `configMapGenerator`, which names no
namespace, must meet them), and still renders for it whatever holds the namespace. Driven as the
cmp-server drives the plugin, with the real kustomize (.ci/fetch-kustomize): an overlay that
generates a ConfigMap its job mounts builds, on every target and in both address modes, into
the objects `kustomize build --enable-exec` gives with the same options; a job that names
another namespace keeps it; and every sample renders alike for a destination and for
`--namespace`, but for the namespace left off.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from msgen import compile_documents
from msgen.checks.job_agreement import disagreements
from msgen.checks.name_references import pod_templates
from msgen.model.plan import Options
from msgen.targets import NAMES as TARGETS

from .conftest import ROOT, SAMPLES
from .host_matrix import in_turn
from .test_gitops_argocd import PLUGIN, overlay_repo, run_in_sidecar, sidecar_env, sorted_objects
from .test_gitops_renames import EXEC, run_kustomize

#: Spread over the Pythons CI runs: its time is the real kustomize's, run as Argo CD's plugin runs it (tests/python_share.py).
pytestmark = pytest.mark.spread

__all__ = ["overlay_repo"]  # the fixture

MODES = ("cluster-ip", "dns")
SERVED = "v1,batch/v1,apps/v1,jobset.x-k8s.io/v1alpha2,batch.volcano.sh/v1alpha1,scheduling.volcano.sh/v1beta1," \
    "trainer.kubeflow.org/v1alpha1"
GENERATOR = {"configMapGenerator": [{"name": "train-config", "literals": ["epochs=3"]}]}
MANAGED = "app.kubernetes.io/managed-by"


def with_config_map(repo: Path, job: Path, position: str, target: str, mode: str) -> Path:
    """overlays/gpu without its GPU patches, compiling `job` (mounting ConfigMap train-config)
    for `target` in `mode`, and a configMapGenerator of train-config in the overlay that runs
    msgen or in one above it; no kustomization names a namespace. Returns the application."""
    base, run = repo / "base", repo / "gpu"
    data = yaml.safe_load(job.read_text())
    data["metadata"].pop("namespace", None)
    for spec in _replica_specs(data):
        spec["template"]["spec"].setdefault("volumes", []).append(
            {"name": "config", "configMap": {"name": "train-config"}})
    (base / "msjob.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    config = run / "msgen.yaml"
    config.write_text(config.read_text().replace("target: indexed-job", f"target: {target}\n  scheduler-address: {mode}"))
    kustomization = yaml.safe_load((run / "kustomization.yaml").read_text())
    kustomization.pop("patches")
    kustomization["transformers"].remove("msgen-ran.yaml")  # it names an MSJob: the job may be another kind
    if position == "msgen":
        kustomization.update(GENERATOR)
    (run / "kustomization.yaml").write_text(yaml.safe_dump(kustomization, sort_keys=False))
    if position == "msgen":
        return run
    top = repo / "top"
    top.mkdir()
    (top / "kustomization.yaml").write_text(yaml.safe_dump({"resources": ["../gpu"], **GENERATOR}))
    return top


def _replica_specs(job: dict[str, Any]) -> list[dict[str, Any]]:
    spec = job["spec"]
    found = spec.get("msReplicaSpecs") or spec.get("replicaSpecs") or {}
    return [found] if "template" in found else list(found.values())


def generate(repo: Path, app: Path, **extra: str) -> Any:
    env = sidecar_env(repo, app, KUBE_VERSION="1.33", KUBE_API_VERSIONS=SERVED, **extra)
    return run_in_sidecar(PLUGIN["spec"]["generate"], app, env)


def built_with_exec(repo: Path, app: Path) -> list[dict[str, Any]]:
    """The same overlay built by kustomize itself with msgen-krm, given Argo CD's options but
    no namespace: what the plugin must give."""
    config = repo / "gpu" / "msgen.yaml"
    config.write_text(config.read_text() + '  kube-version: "1.33"\n  gitops: "true"\n')
    done = run_kustomize(str(repo.parent / "tools" / "kustomize"), *EXEC)(app)
    assert done.returncode == 0, done.stderr
    return sorted_objects(done.stdout)


#: Every target; the address mode and where the generator is taken in turn (MSGEN_FULL_MATRIX=1: all).
ROWS = in_turn([TARGETS], [MODES, ("msgen", "above")])


@pytest.mark.parametrize(("target", "mode", "position"), ROWS)
def test_an_overlay_that_generates_a_config_map_for_its_job_needs_no_namespace(
        overlay_repo: Path, target: str, mode: str, position: str) -> None:
    app = with_config_map(overlay_repo, SAMPLES / "mindspore" / "lenet-cpu.yaml", position, target, mode)
    done = generate(overlay_repo, app)
    assert done.returncode == 0, done.stderr
    objects = sorted_objects(done.stdout)
    assert disagreements(objects) == []
    (generated,) = [o["metadata"]["name"] for o in objects if o["kind"] == "ConfigMap"]
    assert generated.startswith("train-config-")
    templates = [t for t in pod_templates(objects) if t.labels.get(MANAGED) == "msgen"]
    assert templates
    for template in templates:
        mounted = {(v.get("configMap") or {}).get("name") for v in template.spec["volumes"]} - {None}
        assert generated in mounted, (template.where, mounted)
    # Argo CD places every object in its destination, team-a
    assert [o["metadata"]["name"] for o in objects if "namespace" in o["metadata"]] == []
    assert objects == built_with_exec(overlay_repo, app)


def test_what_holds_the_namespace_is_rendered_for_the_destination(overlay_repo: Path) -> None:
    """caffe2-operator's pod label `caffe2_job_key` is `<namespace>-<job>`: the destination's,
    though no object names it."""
    app = with_config_map(overlay_repo, SAMPLES / "caffe2" / "resnet50-redis.yaml", "above", "pod", "dns")
    done = generate(overlay_repo, app)
    assert done.returncode == 0, done.stderr
    pods = [o for o in sorted_objects(done.stdout) if o["kind"] == "Pod"]
    assert pods and all(p["metadata"]["labels"]["caffe2_job_key"] == "team-a-example-job" for p in pods)
    assert all("namespace" not in p["metadata"] for p in pods)


def test_a_job_that_names_another_namespace_keeps_it(overlay_repo: Path) -> None:
    """The job's own namespace is written, as everywhere (with a warning that it is not the
    destination); a ConfigMap generated for it without that namespace is not followed, and the
    plugin says to set it."""
    app = with_config_map(overlay_repo, SAMPLES / "mindspore" / "lenet-cpu.yaml", "above", "indexed-job", "dns")
    job = overlay_repo / "base" / "msjob.yaml"
    job.write_text(job.read_text().replace("  name: msjob-mnist\n", "  name: msjob-mnist\n  namespace: vision\n"))
    done = generate(overlay_repo, app)
    assert done.returncode != 0 and done.stdout == ""
    assert "names ConfigMap train-config, which the output holds only as train-config-<hash>" in done.stderr
    assert "set that namespace: in the kustomization that generates it" in done.stderr
    top = yaml.safe_load((app / "kustomization.yaml").read_text())
    (app / "kustomization.yaml").write_text(yaml.safe_dump({**top, "namespace": "vision"}))
    done = generate(overlay_repo, app)
    assert done.returncode == 0, done.stderr
    assert {o["metadata"].get("namespace") for o in sorted_objects(done.stdout)} == {"vision"}
    assert "the job's own namespace 'vision' is kept" in done.stderr


def test_every_sample_renders_alike_for_a_destination_but_for_the_namespace_left_off() -> None:
    """What in msgen's output holds the namespace (a DNS name, a rank table, a reference,
    a label) is the same whether the namespace is written or left to the host."""
    compared = 0
    for sample, target, mode in itertools.product(sorted(SAMPLES.rglob("*.yaml")), TARGETS, MODES):
        text = sample.read_text()
        options = Options(target=target, scheduler_address=mode, namespace="team-a")  # type: ignore[arg-type]
        written = compile_documents(text, sample.name, options)
        left = compile_documents(text, sample.name, options._replace(destination_namespace="team-a"))
        if not written.ok:
            assert not left.ok
            continue
        compared += 1
        for obj in written.objects:
            named = obj["metadata"].get("namespace")
            if named == "team-a":  # a job naming another namespace keeps it in both
                del obj["metadata"]["namespace"]
        assert left.objects == written.objects, (sample, target, mode)
    assert compared >= 200


def test_the_overlays_msgen_ships_name_no_namespace_unless_they_set_one(overlay_repo: Path) -> None:
    for overlay, expected in (("gpu", {None}), ("production", {"ml-prod"})):
        done = generate(overlay_repo, overlay_repo / overlay)
        assert done.returncode == 0, done.stderr
        assert {o["metadata"].get("namespace") for o in sorted_objects(done.stdout)} == expected
    assert (ROOT / "overlays" / "production" / "kustomization.yaml").read_text().count("namespace: ml-prod") == 1
