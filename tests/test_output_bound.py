"""A run's whole output is bounded, and msgen-krm reads only inside the kustomization's root.

Each job was capped, the run was not: 50 KB of input made half a gigabyte. Past
max-output-objects or max-output-size a run fails with one positioned error naming the option
that raises the bound, and writes nothing, on every host. msgen-krm re-reads the files of the
kustomization directory for positions: it reads each once, never beyond the root, never one
past a size bound.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from msgen.hosts.kustomize import krm
from msgen.yamlio import origin
from msgen.yamlio.emit import to_yaml

from .conftest import SAMPLES, msgen, msgen_process

JOB = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()


def jobs(directory: Path, count: int) -> Path:
    directory.mkdir(exist_ok=True)
    for i in range(count):
        (directory / f"job{i}.yaml").write_text(JOB.replace("name: msjob-mnist", f"name: job-{i}"))
    return directory


def test_too_many_objects_is_one_error_and_no_output(tmp_path: Path) -> None:
    done = msgen("render", str(jobs(tmp_path / "jobs", 3)), "--max-output-objects", "5")
    assert done.exit_code == 1
    assert done.stdout == ""
    assert "job1.yaml:5:7: error: kind: with this job the run's output reaches 8 objects, past " \
           "max-output-objects 5" in done.stderr, done.stderr
    assert "--max-output-objects N" in done.stderr
    assert "job2.yaml" not in done.stderr  # the run stopped there


def test_too_much_output_is_one_error(tmp_path: Path) -> None:
    big = JOB.replace("replicas: 2", "replicas: 40").replace(
        'command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]',
        'command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]\n'
        f'              env: [{{name: BIG, value: "{"x" * 50_000}"}}]')
    (tmp_path / "big.yaml").write_text(big)
    done = msgen("render", str(tmp_path / "big.yaml"), "--target", "pod", "--max-output-size", "1Mi")
    assert done.exit_code == 1 and done.stdout == ""
    assert "past max-output-size 1Mi" in done.stderr, done.stderr
    raised = msgen("render", str(tmp_path / "big.yaml"), "--target", "pod", "--max-output-size", "8Mi")
    assert raised.exit_code == 0, raised.stderr


def test_the_bound_is_an_option_everywhere(tmp_path: Path) -> None:
    directory = jobs(tmp_path / "app", 3)
    env = {"ARGOCD_APP_NAMESPACE": "team-a", "ARGOCD_ENV_MSGEN_MAX_OUTPUT_OBJECTS": "5"}
    done = subprocess.run([sys.executable, "-m", "msgen", "argocd-generate", str(directory)],
                          capture_output=True, text=True, env={**os.environ, **env})  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert "past max-output-objects 5" in done.stderr
    bad = msgen_process("render", str(directory), "--max-output-objects", "many")
    assert bad.exit_code == 2 and "a whole number" in bad.stderr


def test_argocd_generate_writes_what_render_writes(tmp_path: Path) -> None:
    directory = jobs(tmp_path / "app", 3)
    env = {"ARGOCD_APP_NAMESPACE": "team-a", "KUBE_VERSION": "1.30"}
    done = subprocess.run([sys.executable, "-m", "msgen", "argocd-generate", str(directory)],
                          capture_output=True, text=True, env={**os.environ, **env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    rendered = msgen("render", str(directory), "-n", "team-a", "--kube-version", "1.30", "--gitops")
    assert done.stdout == rendered.stdout


def resource_list(items: list[dict[str, object]], config: dict[str, object] | None = None) -> str:
    envelope: dict[str, object] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config is not None:
        envelope["functionConfig"] = config
    return to_yaml([envelope])


def test_the_krm_function_is_bounded_too(tmp_path: Path) -> None:
    passing = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {"x": "y" * 1000}}
               for i in range(10)]  # fmt: skip
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "msgen"}, "data": {"max-output-size": "4k"}}
    status, output, messages = krm.run(resource_list(passing, config), str(tmp_path))
    assert status == 1 and "more than max-output-size 4k" in "\n".join(messages)
    config["data"] = {"max-output-size": "1Mi"}
    assert krm.run(resource_list(passing, config), str(tmp_path))[0] == 0


def test_krm_reads_no_file_outside_the_kustomization(tmp_path: Path) -> None:
    """An item's config.kubernetes.io/path naming a file elsewhere is not read: a broken job
    is reported in the ResourceList's text, not with a line of that file."""
    secret = tmp_path / "outside.yaml"
    job = yaml.safe_load(JOB)
    secret.write_text("# hunter2\n" + yaml.safe_dump(job))
    root = tmp_path / "kustomization"
    root.mkdir()
    job["spec"]["msReplicaSpecs"]["worker"]["replicas"] = -1
    job["metadata"]["annotations"] = {"config.kubernetes.io/path": str(secret)}
    status, _output, messages = krm.run(resource_list([job]), str(root))
    text = "\n".join(messages)
    assert status == 1 and str(secret) not in text and "hunter2" not in text, text
    files = origin.OriginFiles(str(root))
    assert files.inside(str(secret)) is None and files.inside("../outside.yaml") is None


def test_krm_parses_each_file_once(tmp_path: Path, monkeypatch: object) -> None:
    root = tmp_path / "kustomization"
    root.mkdir()
    (root / "many.yaml").write_text("".join(f"---\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n" for i in range(50)))
    items = [yaml.safe_load(JOB.replace("name: msjob-mnist", f"name: job-{i}")) for i in range(20)]
    for item in items:
        item["metadata"]["annotations"] = {"config.kubernetes.io/path": "many.yaml"}
    parsed: list[str] = []
    real = origin._parse

    def counting(path: str) -> list[object]:
        parsed.append(path)
        return real(path)  # type: ignore[return-value]

    monkeypatch.setattr(origin, "_parse", counting)  # type: ignore[attr-defined]
    status, _output, _messages = krm.run(resource_list(items), str(root))
    assert status == 0
    assert sorted(parsed) == sorted(set(parsed)) == [str(root / "many.yaml")]


def test_krm_does_not_read_a_huge_file_for_positions(tmp_path: Path) -> None:
    root = tmp_path / "k"
    root.mkdir()
    (root / "huge.yaml").write_text("a: b\n" * (origin.MAX_ORIGIN_BYTES // 5 + 1))
    assert origin.OriginFiles(str(root)).documents("huge.yaml") == []
