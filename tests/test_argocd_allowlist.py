"""The Argo CD sidecar's kustomize loads only the plug-ins on its allowlist.

kustomize finds a legacy exec plug-in at `<plug-in home>/<group>/<version>/<lower kind>/<kind>`,
a path it joins and cleans as text: a config whose `kind` climbs out with `../` makes it run
any program on the sidecar's disk, with the config as its script. Every case below ran
`/bin/sh` in the sidecar before the allowlist (issue: a Synced Application, and a ConfigMap
`pwned` holding the sidecar's uid). Each runs `msgen argocd-generate` as the cmp-server runs
it, with each kustomize msgen supports (4.5.4, and 5.x as the sidecar image carries it), and
checks that nothing ran, nothing was printed, and the refusal names the file, the line, the
kind and what is accepted. `test_the_cases_run_a_program_without_msgen` shows that each case
does run `/bin/sh` when kustomize builds it with plug-ins enabled and msgen does not look first.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest
import yaml

from .conftest import SAMPLES
from .test_gitops_argocd import PLUGIN, argocd_env, run_in_sidecar

GENERATE = PLUGIN["spec"]["generate"]
JOB = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
CLIMB = "../" * 14 + "bin/sh"


def evil(marker: Path, kind: str = CLIMB) -> str:
    """A plug-in config whose kind selects /bin/sh; its `run` line is the script sh runs."""
    return (
        f"apiVersion: team.example/v1\nkind: {kind}\nmetadata: {{name: x}}\nrun: |\n"
        f"  id > {marker}; printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata: {{name: pwned}}\\n'; exit 0\n"
    )


Files = Callable[[Path], dict[str, str]]

#: The places a plug-in config can hide: each case's files, and the file and line msgen names.
CASES: dict[str, tuple[Files, str]] = {
    "generators": (lambda m: {"app/kustomization.yaml": "resources: [job.yaml]\ngenerators: [evil.yaml]\n",
                              "app/evil.yaml": evil(m)}, "app/evil.yaml:1:1"),
    "transformers": (lambda m: {"app/kustomization.yaml": "resources: [job.yaml]\ntransformers: [evil.yaml]\n",
                                "app/evil.yaml": evil(m)}, "app/evil.yaml:1:1"),
    "validators": (lambda m: {"app/kustomization.yaml": "resources: [job.yaml]\nvalidators: [evil.yaml]\n",
                              "app/evil.yaml": evil(m)}, "app/evil.yaml:1:1"),
    "component": (lambda m: {"app/kustomization.yaml": "resources: [job.yaml]\ncomponents: [../part]\n",
                             "part/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\n"
                             "kind: Component\ngenerators: [evil.yaml]\n", "part/evil.yaml": evil(m)}, "part/evil.yaml:1:1"),
    "base": (lambda m: {"app/kustomization.yaml": "resources: [job.yaml, ../base]\n",
                        "base/kustomization.yaml": "transformers: [evil.yaml]\n", "base/evil.yaml": evil(m)}, "base/evil.yaml:1:1"),
    "list": (lambda m: {"app/kustomization.yaml": "resources: [job.yaml]\ngenerators: [list.yaml]\n",
                        "app/list.yaml": "apiVersion: v1\nkind: ConfigMapList\nitems:\n- "
                        + evil(m).replace("\n", "\n  ").rstrip() + "\n"}, "app/list.yaml:4:3"),
    "inline": (lambda m: {"app/kustomization.yaml": "resources: [job.yaml]\ngenerators:\n- |\n"
                          + "".join(f"  {line}\n" for line in evil(m).splitlines())}, "app/kustomization.yaml:3:3"),
    # one line of flow YAML, long enough that as a path it stays inside the application
    "inline-flow": (lambda m: {"app/kustomization.yaml": "resources: [job.yaml]\ngenerators:\n- '{x: "
                               + "s/" * 40 + f"s, apiVersion: team.example/v1, kind: {CLIMB}, metadata: {{name: x}}, "
                               f"run: \"id > {m}; exit 0\"}}'\n"}, "app/kustomization.yaml:3:3"),
}  # fmt: skip


def repository(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "job.yaml").write_text(JOB)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return repo


def generate(repo: Path, kustomize: str, app: str = "app", **extra: str) -> subprocess.CompletedProcess[str]:
    """`msgen argocd-generate` in the application's directory, as the cmp-server runs it, with
    `kustomize` on the sidecar's PATH."""
    tools = repo.parent / "tools"
    tools.mkdir(exist_ok=True)
    if not (tools / "kustomize").exists():
        (tools / "kustomize").symlink_to(kustomize)
    directory = repo / app
    env = {**argocd_env(directory, ARGOCD_APP_SOURCE_PATH=app, **extra), "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    return run_in_sidecar(GENERATE, directory, env)


def refused(done: subprocess.CompletedProcess[str], marker: Path, *named: str) -> None:
    assert not marker.exists(), "the repository's program ran in the sidecar"
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    for text in named:
        assert text in done.stderr, done.stderr
    assert "accepted:" in done.stderr, done.stderr


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_plugin_a_repository_names_never_runs(tmp_path: Path, any_kustomize: str, case: str) -> None:
    marker = tmp_path / "ran"
    files, where = CASES[case]
    repo = repository(tmp_path, files(marker))
    done = generate(repo, any_kustomize)
    refused(done, marker, f"{repo / where}: error:", "refused")
    if case != "inline-flow":
        assert repr(CLIMB) in done.stderr


# Only kustomize runs here (msgen is not asked): CI runs each case on one Python (tests/python_share.py).
@pytest.mark.spread
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_cases_run_a_program_without_msgen(tmp_path: Path, any_kustomize: str, case: str) -> None:
    """What msgen refuses above is what kustomize runs: the marker is written when kustomize
    builds the same tree with plug-ins enabled."""
    marker = tmp_path / "ran"
    repo = repository(tmp_path, CASES[case][0](marker))
    home = tmp_path / "plugins"
    home.mkdir()
    subprocess.run([any_kustomize, "build", "--enable-alpha-plugins", str(repo / "app")], capture_output=True,
                   env={**os.environ, "KUSTOMIZE_PLUGIN_HOME": str(home)}, stdin=subprocess.DEVNULL)  # fmt: skip
    assert marker.exists(), case


def test_an_exec_function_inside_a_list_is_refused_not_skipped(tmp_path: Path, any_kustomize: str) -> None:
    """kustomize expands a `*List`'s items into configs, and skips an exec function among them
    without a word when exec is off: the build would differ from the author's."""
    marker = tmp_path / "ran"
    script = f"#!/bin/sh\nid > {marker}\ncat\n"
    item = ("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: x\n    annotations:\n"
            "      config.kubernetes.io/function: |\n        exec:\n          path: ./evil.sh\n")  # fmt: skip
    repo = repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml]\ntransformers: [list.yaml]\n",
                                 "app/list.yaml": f"apiVersion: v1\nkind: ConfigMapList\nitems:\n{item}", "app/evil.sh": script})  # fmt: skip
    (repo / "app" / "evil.sh").chmod(0o755)
    done = generate(repo, any_kustomize)
    refused(done, marker, f"{repo / 'app/list.yaml'}:4:3: error:", "runs exec ./evil.sh")


def test_a_field_spelt_in_another_case_is_refused(tmp_path: Path, any_kustomize: str) -> None:
    """kustomize decodes a kustomization as JSON, field names without regard to case."""
    marker = tmp_path / "ran"
    repo = repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml]\nGenerators: [evil.yaml]\n",
                                 "app/evil.yaml": evil(marker)})  # fmt: skip
    done = generate(repo, any_kustomize)
    refused(done, marker, f"{repo / 'app/kustomization.yaml'}:2:1: error:", "'Generators' is read by kustomize as 'generators'")


def test_a_config_with_a_key_twice_is_refused(tmp_path: Path, any_kustomize: str) -> None:
    """kyaml reads a config's first `kind`: a second one must not be what msgen checks."""
    marker = tmp_path / "ran"
    twice = evil(marker).replace("metadata:", "apiVersion: builtin\nkind: PatchTransformer\nmetadata:", 1)
    repo = repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml]\ngenerators: [evil.yaml]\n",
                                 "app/evil.yaml": twice})  # fmt: skip
    refused(generate(repo, any_kustomize), marker, "duplicate key 'apiVersion'")


@pytest.mark.parametrize(
    "config, named",
    [
        ("apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata: {name: x}\nname: chart\n", "is no kustomize builtin"),
        ("apiVersion: builtin\nkind: ../../bin/sh\nmetadata: {name: x}\n", "is no kustomize builtin"),
        ("apiVersion: sidecar.msgen/v1\nkind: Function\nmetadata: {name: x}\nfunctionConfig: {}\n", "would make kustomize look"),
        ("apiVersion: mindspore.gitee.com/v1\nkind: ../msjob/MSJob\nmetadata: {name: x}\n", "would make kustomize look"),
    ],
    ids=["helm", "builtin-climbing", "msgen-step-written-by-the-repository", "job-kind-climbing"],
)
def test_only_the_listed_kinds_are_accepted(tmp_path: Path, any_kustomize: str, config: str, named: str) -> None:
    repo = repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml]\ntransformers: [c.yaml]\n", "app/c.yaml": config})
    refused(generate(repo, any_kustomize), tmp_path / "ran", f"{repo / 'app/c.yaml'}:1:1: error:", named)


def test_builtins_run_without_plugins_and_msgens_steps_with_them(tmp_path: Path, any_kustomize: str) -> None:
    builtin = "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\nlabels: {team: a}\nfieldSpecs: [{path: metadata/labels, create: true}]\n"
    repo = repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml]\ntransformers: [label.yaml]\n",
                                 "app/label.yaml": builtin})  # fmt: skip
    done = generate(repo, any_kustomize)
    assert done.returncode == 0, done.stderr
    assert {o["metadata"]["labels"]["team"] for o in yaml.safe_load_all(done.stdout) if o} == {"a"}


def test_a_directory_of_plugin_configs_is_refused_where_msgens_plugins_run(tmp_path: Path, any_kustomize: str) -> None:
    """kustomize builds a directory listed as plug-in configs and loads what the build outputs
    (its resources, generated and patched there) as configs: plain kustomize with plug-ins
    runs /bin/sh below. Where the build runs msgen's plug-ins msgen refuses the directory;
    without them kustomize runs builtins only and refuses the config itself."""
    marker = tmp_path / "ran"
    msgen_function = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: msgen\n  annotations:\n"
                      "    config.kubernetes.io/function: |\n      exec:\n        path: msgen-krm\n")  # fmt: skip
    files = {"app/kustomization.yaml": "resources: [job.yaml]\ntransformers: [msgen.yaml, ../configs]\n",
             "app/msgen.yaml": msgen_function,
             "configs/kustomization.yaml": "resources: [evil.yaml]\n", "configs/evil.yaml": evil(marker)}  # fmt: skip
    repo = repository(tmp_path, files)
    done = generate(repo, any_kustomize)
    refused(done, marker, f"{repo / 'app/kustomization.yaml'}:2:28: error:", "'../configs', a directory kustomize builds "
            "into plug-in configs", "msgen cannot check what kustomize loads")
    (repo / "app" / "kustomization.yaml").write_text("resources: [job.yaml]\ntransformers: [../configs]\n")
    done = generate(repo, any_kustomize)
    assert not marker.exists() and done.returncode == 1 and done.stdout == ""
    assert "external plugins disabled" in done.stderr, done.stderr
    home = tmp_path / "plugins"
    home.mkdir()
    subprocess.run([any_kustomize, "build", "--enable-alpha-plugins", str(repo / "app")], capture_output=True,
                   env={**os.environ, "KUSTOMIZE_PLUGIN_HOME": str(home)}, stdin=subprocess.DEVNULL)  # fmt: skip
    assert marker.exists()


@pytest.mark.parametrize("entry", ["https://github.com/team/bases//training?ref=v1", "github.com/team/bases/training",
                                   "git@github.com:team/bases.git/training"])  # fmt: skip
def test_a_remote_base_is_refused_where_msgens_plugins_run(tmp_path: Path, any_kustomize: str, entry: str) -> None:
    """A remote base is fetched by kustomize and never seen by msgen: with msgen's plug-ins
    loaded it could name a program (refused before any fetch)."""
    repo = repository(tmp_path, {"app/kustomization.yaml": f"resources: [job.yaml, '{entry}']\ngenerators: [gen.yaml]\n",
                                 "app/gen.yaml": JOB.replace("name: msjob-mnist", "name: other")})  # fmt: skip
    done = generate(repo, any_kustomize)
    refused(done, tmp_path / "ran", f"remote resources entry {entry!r}", "msgen cannot check what kustomize loads")


def test_a_file_repository_is_refused(tmp_path: Path, any_kustomize: str) -> None:
    repo = repository(tmp_path, {"app/kustomization.yaml": "resources: [job.yaml, 'file:///var/run/argocd/other.git']\n"})
    refused(generate(repo, any_kustomize), tmp_path / "ran", "clones a repository of the sidecar's own disk")
