"""Every option source of the Argo CD plugin, on every path, driven as the cmp-server drives it.

The environment is what argo-cd's repo server builds (reposerver/repository.getPluginEnvs):
`KUBE_VERSION` as `k8sversion.ParseGeneric(...).String()` (`1.29.4`; older releases passed
`v1.29.4+k3s1` through), `KUBE_API_VERSIONS` from `APIResourcesToStrings(..., true)` (sorted
`group/version` and `group/version/Kind`), the plugin env as `ARGOCD_ENV_<name>`, and the
parameters as `ApplicationSourcePluginParameters.Environ` writes them: all of them as JSON in
`ARGOCD_APP_PARAMETERS`, and `PARAM_<NAME>`, `PARAM_<NAME>_<KEY>` (maps), `PARAM_<NAME>_<i>`
(arrays). `parameters_env` below builds both exactly so.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from .conftest import SAMPLES
from .test_gitops_argocd import PLUGIN, app, argocd_env, overlay_repo, run_command, run_in_sidecar, sidecar_env

#: Spread over the Pythons CI runs: its time is the real kustomize's, run as Argo CD's plugin runs it (tests/python_share.py).
pytestmark = pytest.mark.spread

__all__ = ["app", "overlay_repo"]  # fixtures used here

GENERATE = PLUGIN["spec"]["generate"]
DISCOVER = PLUGIN["spec"]["discover"]["find"]


def escaped(name: str) -> str:
    """argo-cd's `escaped`: upper-cased, every character but A-Z0-9_ as `_`."""
    return re.sub(r"[^A-Z0-9_]", "_", name.upper())


def parameters_env(*parameters: dict[str, Any]) -> dict[str, str]:
    """ARGOCD_APP_PARAMETERS and the PARAM_* variables, as Argo CD writes them."""
    env = {"ARGOCD_APP_PARAMETERS": json.dumps(list(parameters))}
    for parameter in parameters:
        base = "PARAM_" + escaped(parameter["name"])
        if "string" in parameter:
            env[base] = parameter["string"]
        for key, value in (parameter.get("map") or {}).items():
            env[f"{base}_{escaped(key)}"] = value
        for index, value in enumerate(parameter.get("array") or []):
            env[f"{base}_{index}"] = value
    return env


def objects(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def kinds(text: str) -> set[str]:
    return {o["kind"] for o in objects(text)}


# ---- parameters ----------------------------------------------------------------------------


def test_a_parameter_in_argo_cds_form_is_read(app: Path) -> None:
    env = argocd_env(app, **parameters_env({"name": "target", "string": "pod"}))
    done = run_command(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    assert "Pod" in kinds(done.stdout) and "Job" not in kinds(done.stdout)


@pytest.mark.parametrize(
    "parameters, message",
    [
        ([{"name": "targt", "string": "pod"}], "unknown msgen parameter 'targt' (did you mean target?)"),
        ([{"name": "kube_version", "string": "1.29"}], "unknown msgen parameter 'kube_version' (did you mean kube-version?)"),
        ([{"name": "target", "map": {"worker": "pod"}}], "parameter target is given as a map; accepted: a string"),
        ([{"name": "target", "array": ["pod"]}], "parameter target is given as an array; accepted: a string"),
        ([{"name": "target", "string": "pods"}], "parameter target: 'pods' is not accepted (did you mean 'pod'?); accepted: indexed-job, pod"),
        ([{"name": "target", "string": "pod"}, {"name": "target", "string": "jobset"}], "parameter target is given twice"),
    ],
    ids=["misspelt", "underscore", "map", "array", "bad-value", "twice"],
)
def test_a_bad_parameter_is_an_error_and_prints_nothing(app: Path, parameters: list[dict[str, Any]], message: str) -> None:
    done = run_command(GENERATE, app, argocd_env(app, **parameters_env(*parameters)))
    assert done.returncode == 1
    assert done.stdout == ""
    assert message in done.stderr


def test_an_application_without_parameters_renders(app: Path) -> None:
    """Argo CD sets ARGOCD_APP_PARAMETERS for every Application: `null` when it has none (a
    real repo server's cmp-server sent that)."""
    done = run_command(GENERATE, app, argocd_env(app, ARGOCD_APP_PARAMETERS="null"))
    assert done.returncode == 0, done.stderr
    assert "Job" in kinds(done.stdout)


def test_without_the_json_a_misspelt_param_variable_is_an_error(app: Path) -> None:
    """A host (or a person) that sets only PARAM_* variables: the same check by name."""
    done = run_command(GENERATE, app, argocd_env(app, PARAM_TARGT="pod"))
    assert done.returncode == 1 and done.stdout == ""
    assert "unknown msgen parameter variable 'PARAM_TARGT' (did you mean PARAM_TARGET?)" in done.stderr
    done = run_command(GENERATE, app, argocd_env(app, PARAM_TARGET="pod"))
    assert done.returncode == 0 and "Pod" in kinds(done.stdout)


def test_an_empty_parameter_is_unset(app: Path) -> None:
    """The UI writes a cleared field as an empty string: the option keeps its default."""
    env = argocd_env(app, **parameters_env({"name": "target", "string": ""}, {"name": "kueue-queue"}))
    done = run_command(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    assert "Job" in kinds(done.stdout)


# ---- precedence and reporting --------------------------------------------------------------


def test_each_layer_wins_over_the_one_before_and_the_loser_is_reported(app: Path) -> None:
    env = argocd_env(
        app, KUBE_VERSION="1.29.4", ARGOCD_ENV_MSGEN_TARGET="pod",
        **parameters_env({"name": "target", "string": "statefulset"}, {"name": "kube-version", "string": "1.31"}),
    )
    done = run_command(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    assert "StatefulSet" in kinds(done.stdout)
    assert ("ARGOCD_ENV_MSGEN_TARGET='pod' is overridden by parameter target='statefulset' "
            "(the Application's parameter wins)") in done.stderr
    assert "KUBE_VERSION='1.29.4' is overridden by parameter kube-version='1.31'" in done.stderr


def test_a_job_annotation_wins_for_its_job_and_says_what_it_overrides(app: Path) -> None:
    job = app / "standalone.yaml"
    job.write_text(job.read_text().replace("metadata:\n", "metadata:\n  annotations:\n    msgen/target: pod\n", 1))
    done = run_command(GENERATE, app, argocd_env(app, **parameters_env({"name": "target", "string": "indexed-job"})))
    assert done.returncode == 0, done.stderr
    names = {o["metadata"]["name"]: o["kind"] for o in objects(done.stdout)}
    assert names["ms-widedeep-standalone-worker-0"] == "Pod"  # the annotated job
    assert names["ms-widedeep-ps-worker"] == "Job"  # the other job keeps the parameter
    assert ("standalone.yaml:7:19: warning: metadata.annotations.msgen/target: msgen/target='pod' "
            "overrides parameter target='indexed-job' for this job") in done.stderr


def test_equal_values_in_two_layers_are_not_reported(app: Path) -> None:
    env = argocd_env(app, ARGOCD_ENV_MSGEN_TARGET="pod", **parameters_env({"name": "target", "string": "pod"}))
    done = run_command(GENERATE, app, env)
    assert done.returncode == 0 and "overridden" not in done.stderr


def test_the_overlays_function_config_loses_to_the_application(overlay_repo: Path) -> None:
    app = overlay_repo / "gpu"
    config = app / "msgen.yaml"
    config.write_text(config.read_text().replace("target: indexed-job", "target: indexed-job\n  scheduler-address: dns"))
    env = sidecar_env(overlay_repo, app, **parameters_env({"name": "target", "string": "jobset"}),
                      KUBE_API_VERSIONS="v1,batch/v1,jobset.x-k8s.io/v1alpha2")
    done = run_in_sidecar(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    assert "JobSet" in kinds(done.stdout)
    assert "value: resnet50-scheduler-0-0.resnet50" in done.stdout  # the config's own dns is kept
    line = config.read_text().splitlines().index("  target: indexed-job") + 1  # in the overlay's file
    assert (f"{config}:{line}:11: warning: data.target: functionConfig.data.target='indexed-job' is "
            "overridden by parameter target='jobset' (the Application's parameter wins)") in done.stderr


def test_kube_version_reaches_the_function_inside_an_overlay(overlay_repo: Path) -> None:
    """The case that broke syncs: a 1.31 field (the Worker Job's successPolicy) sent to 1.29."""
    app = overlay_repo / "gpu"
    done = run_in_sidecar(GENERATE, app, sidecar_env(overlay_repo, app, KUBE_VERSION="v1.29.4+k3s1"))
    assert done.returncode == 0, done.stderr
    jobs = [o for o in objects(done.stdout) if o["kind"] == "Job"]
    assert jobs and all("successPolicy" not in o["spec"] for o in jobs)
    # compiled inside the build: Argo CD places every object in its destination, team-a
    assert all("namespace" not in o["metadata"] for o in objects(done.stdout))
    for obj in objects(done.stdout):
        kubernetes_validate.validate(obj, "1.29", strict=True)


# ---- the cluster that is there -------------------------------------------------------------


@pytest.mark.parametrize(
    "target, served, message",
    [
        ("jobset", "v1,v1/Service,batch/v1,batch/v1/Job", "renders JobSet (jobset.x-k8s.io/v1alpha2), which the cluster does not serve"),
        ("volcano", "v1,batch/v1", "install Volcano (https://volcano.sh/en/docs/installation/)"),
    ],
)
def test_an_api_the_cluster_does_not_serve_is_an_error(app: Path, target: str, served: str, message: str) -> None:
    env = argocd_env(app, KUBE_API_VERSIONS=served, **parameters_env({"name": "target", "string": target}))
    done = run_command(GENERATE, app, env)
    assert done.returncode == 1 and done.stdout == ""
    assert message in done.stderr
    assert "ps.yaml:4:7: error: kind: this job renders" in done.stderr  # at the job's kind


def test_a_served_api_renders(app: Path) -> None:
    served = "batch/v1,batch/v1/Job,jobset.x-k8s.io/v1alpha2,jobset.x-k8s.io/v1alpha2/JobSet,v1,v1/ConfigMap,v1/Service"
    env = argocd_env(app, KUBE_API_VERSIONS=served, **parameters_env({"name": "target", "string": "jobset"}))
    done = run_command(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    assert "JobSet" in kinds(done.stdout)


def test_a_kueue_queue_without_kueue_is_an_error_inside_an_overlay_too(overlay_repo: Path) -> None:
    app = overlay_repo / "gpu"
    env = sidecar_env(overlay_repo, app, **parameters_env({"name": "kueue-queue", "string": "team-a"}))
    done = run_in_sidecar(GENERATE, app, env)
    assert done.returncode == 1 and done.stdout == ""
    assert "install Kueue (https://kueue.sigs.k8s.io/docs/installation/)" in done.stderr
    served = env["KUBE_API_VERSIONS"] + ",kueue.x-k8s.io/v1beta1,kueue.x-k8s.io/v1beta1/LocalQueue"
    done = run_in_sidecar(GENERATE, app, {**env, "KUBE_API_VERSIONS": served})
    assert done.returncode == 0, done.stderr


# ---- discovery -----------------------------------------------------------------------------

MSJOB = (SAMPLES / "mindspore" / "standalone-worker.yaml").read_text()


@pytest.mark.parametrize(
    "name, text",
    [
        ("commented.yaml", MSJOB.replace("apiVersion: mindspore.gitee.com/v1", "apiVersion: mindspore.gitee.com/v1  # MindSpore")),
        ("job.json", json.dumps(yaml.safe_load(MSJOB), indent="\t")),
        ("list.yaml", yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(MSJOB)]})),
    ],
)
def test_discover_and_generate_find_every_way_of_writing_a_job(tmp_path: Path, name: str, text: str) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / name).write_text(text)
    found = run_command(DISCOVER, app, argocd_env(app))
    assert found.stdout.split() == [name]
    done = run_command(GENERATE, app, argocd_env(app))
    assert done.returncode == 0, done.stderr
    assert "MSJob" not in kinds(done.stdout) and "List" not in kinds(done.stdout)
    assert "Job" in kinds(done.stdout)


def test_discover_claims_a_broken_job_file_so_generate_can_say_where(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "job.yaml").write_text(MSJOB + "  broken: [\n")
    assert run_command(DISCOVER, app, argocd_env(app)).stdout.split() == ["job.yaml"]
    done = run_command(GENERATE, app, argocd_env(app))
    assert done.returncode == 1 and done.stdout == "" and "job.yaml:" in done.stderr


def test_the_legacy_plugin_overlay_builds_in_the_sidecar(overlay_repo: Path) -> None:
    """No `msgen install-kustomize-plugin` in the sidecar: the build gets a plugin home."""
    app = overlay_repo / "legacy-plugin"
    env = sidecar_env(overlay_repo, app, KUBE_VERSION="1.29.4", **parameters_env({"name": "scheduler-address", "string": "dns"}))
    assert run_in_sidecar(DISCOVER, app, env).stdout.split() == ["kustomization.yaml"]
    done = run_in_sidecar(GENERATE, app, env)
    assert done.returncode == 0, done.stderr
    found = objects(done.stdout)
    assert {o["kind"] for o in found} == {"Job", "Service"}
    assert all("namespace" not in o["metadata"] for o in found)  # Argo CD places them in team-a
    assert all("successPolicy" not in o["spec"] for o in found if o["kind"] == "Job")
    assert "lenet-scheduler-0.lenet" in done.stdout  # the parameter reached the plugin
    for obj in found:
        kubernetes_validate.validate(obj, "1.29", strict=True)


# ---- done when: every overlay, every version ------------------------------------------------

OVERLAYS = ["base", "gpu", "ascend", "production", "generator", "legacy-plugin"]
#: Every version kubernetes-validate has schemas for with MSGEN_FULL_MATRIX=1 (78 builds, about
#: 75 s of CPU); by default the oldest, the newest and the two sides of the version where the
#: Worker Job gains successPolicy (24 builds).
VERSIONS = (
    [f"1.{minor}" for minor in range(25, 38)]
    if os.environ.get("MSGEN_FULL_MATRIX") == "1"
    else ["1.25", "1.30", "1.31", "1.37"]
)


#: The namespace each overlay's objects name (None: Argo CD's destination, which it puts there).
NAMESPACE_OF = {"production": "ml-prod", "base": "team-a"}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_overlay_is_valid_at_every_version_with_the_applications_options(overlay_repo: Path, overlay: str) -> None:
    """Each overlay as the cmp-server builds it, at KUBE_VERSION 1.25 ... 1.37 (with a patch
    level and a `v`, as Argo CD versions differ), with parameters: every object is valid
    at that version (Kubernetes' own schema, strict) and is in the Application's namespace:
    named by the overlay (production), left to Argo CD where msgen compiled it inside the build,
    or written where the plugin compiled a job the build left (base)."""
    app = overlay_repo / overlay
    assert run_in_sidecar(DISCOVER, app, sidecar_env(overlay_repo, app)).stdout.split() == ["kustomization.yaml"]
    for version in VERSIONS:
        env = sidecar_env(
            overlay_repo, app, KUBE_VERSION=f"v{version}.3",
            **parameters_env({"name": "scheduler-address", "string": "dns"}, {"name": "argocd-sync-waves", "string": "true"}),
        )
        done = run_in_sidecar(GENERATE, app, env)
        assert done.returncode == 0, f"{version}: {done.stderr}"
        found = objects(done.stdout)
        assert found and "MSJob" not in {o["kind"] for o in found}
        for obj in found:
            kubernetes_validate.validate(obj, version, strict=True)
            assert obj["metadata"].get("namespace") == NAMESPACE_OF.get(overlay)
            assert "argocd.argoproj.io/sync-wave" in obj["metadata"]["annotations"]


def test_overlays_are_all_covered() -> None:
    from .conftest import ROOT

    here = {p.name for p in (ROOT / "overlays").iterdir() if (p / "kustomization.yaml").is_file()}
    # The plugin's own overlay and the controller's deployments hold no job.
    assert here - {"argocd", "controller", "controller-namespaces"} == set(OVERLAYS)


def test_msgen_render_reads_json_files_and_lists_in_a_directory(tmp_path: Path) -> None:
    from .conftest import msgen

    (tmp_path / "job.json").write_text(json.dumps(yaml.safe_load(MSJOB), indent="\t"))
    listed = yaml.safe_load(MSJOB)
    listed["metadata"]["name"] = "listed"
    listed["spec"]["msReplicaSpecs"]["Worker"]["replicas"] = -1
    (tmp_path / "list.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [listed]}))
    done = msgen("render", str(tmp_path))
    assert done.exit_code == 1 and done.stdout == ""
    assert "list.yaml:10:19: error: spec.msReplicaSpecs.Worker.replicas: -1 is not accepted" in done.stderr
    listed["spec"]["msReplicaSpecs"]["Worker"]["replicas"] = 1
    (tmp_path / "list.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [listed, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]}))
    done = msgen("render", str(tmp_path))
    assert done.exit_code == 0, done.stderr
    found = [(o["kind"], o["metadata"]["name"]) for o in done.objects()]
    assert ("Job", "ms-widedeep-standalone-worker") in found and ("Job", "listed-worker") in found
    assert ("ConfigMap", "c") in found and not any(kind in ("List", "MSJob") for kind, _ in found)
