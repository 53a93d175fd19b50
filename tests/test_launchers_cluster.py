"""msgen.launchers.cluster: MindSpore's timeouts and disaster recovery, per release and with Kueue.

What each release reads is contracts §2 ("MindSpore releases 2.7 to 2.10"); Kueue's timeout and
MindSpore's are docs/targets.md ("Kueue's timeout and MindSpore's").
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from msgen.launchers.cluster import KUEUE_PODS_READY_TIMEOUT
from msgen.model import mindspore_versions

from .conftest import ROOT, SAMPLES, msgen
from .test_frameworks_mindspore import env_of, main_container, pod_templates, render, role_of

MS = SAMPLES / "mindspore"
LENET = str(MS / "lenet-cpu.yaml")
MSRUN = str(MS / "gpu-2x8-msrun.yaml")


def test_kueues_default_timeout_is_mindsporess_own_topology_timeout() -> None:
    # Kueue 0.19's DefaultWaitForPodsReadyTimeout (30 min) and kDefaultTopoTimeOut (30 * 60)
    assert KUEUE_PODS_READY_TIMEOUT == mindspore_versions.DEFAULT_TOPO_TIMEOUT == 1800


@pytest.mark.parametrize("target", ["indexed-job", "pod", "jobset", "statefulset", "trainjob"])
def test_a_kueue_queued_job_waits_for_its_cluster_as_long_as_kueue_waits_for_its_pods(target: str) -> None:
    objects = render(LENET, "--target", target, "--kueue-queue", "team-a")
    templates = pod_templates(objects)
    assert {role_of(t) for _, t, _ in templates} == {"scheduler", "worker"}
    for _, template, _ in templates:
        assert env_of(template)["MS_TOPO_TIMEOUT"]["value"] == "1800"
    for _, template, _ in pod_templates(render(LENET, "--target", target)):
        assert "MS_TOPO_TIMEOUT" not in env_of(template), "without Kueue: MindSpore's own default"


def test_on_volcano_which_kueue_does_not_admit_nothing_is_written() -> None:
    for _, template, _ in pod_templates(render(LENET, "--target", "volcano", "--kueue-queue", "team-a")):
        assert "MS_TOPO_TIMEOUT" not in env_of(template)


def test_msrun_is_given_the_same_timeout_instead_of_its_own_600_seconds() -> None:
    queued = render(MSRUN, "--target", "jobset", "--kueue-queue", "team-a")
    workers = [t for _, t, _ in pod_templates(queued) if role_of(t) == "worker"]
    assert workers and all("--cluster_time_out=$(MS_TOPO_TIMEOUT)" in main_container(t)["command"] for t in workers)
    alone = render(MSRUN, "--target", "jobset")
    assert all("--cluster_time_out=$(MS_TOPO_TIMEOUT)" not in main_container(t)["command"]
               for _, t, _ in pod_templates(alone) if role_of(t) == "worker")


def test_the_templates_own_topology_timeout_wins() -> None:
    text = (MS / "lenet-cpu.yaml").read_text().replace(
        '              command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]\n',
        '              command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]\n'
        '              env: [{name: MS_TOPO_TIMEOUT, value: "3600"}]\n',
    )
    for _, template, _ in pod_templates(render("-", "--kueue-queue", "team-a", input=text)):
        assert env_of(template)["MS_TOPO_TIMEOUT"]["value"] == "3600"


def _with_worker_env(*pairs: tuple[str, str]) -> str:
    env = ", ".join(f"{{name: {name}, value: {value!r}}}" for name, value in pairs)
    text = (MS / "lenet-cpu.yaml").read_text()
    worker = text.index("    worker:")
    head, tail = text[:worker], text[worker:]
    tail = tail.replace(
        '              command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]\n',
        '              command: ["/bin/bash", "-c", "python /tmp/test/MNIST/lenet.py"]\n'
        f"              env: [{env}]\n",
        1,
    )
    return head + tail


@pytest.mark.parametrize(
    "pairs, refused",
    [
        ((("MS_NODE_TIMEOUT", "20"),), True),  # the default retry, 20 s, is not below it
        ((("MS_NODE_TIMEOUT", "21"),), False),
        ((("MS_HEARTBEAT_RETRY_TIMEOUT", "30"),), True),  # not below the default node timeout
        ((("MS_HEARTBEAT_RETRY_TIMEOUT", "29"),), False),
        ((("MS_HEARTBEAT_RETRY_TIMEOUT", "60"), ("MS_NODE_TIMEOUT", "90")), False),
        ((("MS_HEARTBEAT_RETRY_TIMEOUT", "$(RETRY)"), ("MS_NODE_TIMEOUT", "5")), False),  # known at run time only
    ],
)
def test_a_heartbeat_retry_not_below_the_node_timeout_is_refused_from_2_8(
    pairs: tuple[tuple[str, str], ...], refused: bool
) -> None:
    text = _with_worker_env(*pairs)
    for release in ("2.8.0", "2.9", "2.10.0"):
        run = msgen("render", "-", "--mindspore-version", release, input=text)
        assert run.exit_code == (1 if refused else 0), run.stderr
        if refused:
            assert "is not below MS_NODE_TIMEOUT" in run.stderr
            assert "spec.msReplicaSpecs.worker.template.spec.containers[0].env[" in run.stderr
    for release in ("2.7.0", "2.7.2"):
        run = msgen("render", "-", "--mindspore-version", release, input=text)
        assert run.exit_code == 0, run.stderr
        named = any(name == "MS_HEARTBEAT_RETRY_TIMEOUT" for name, _ in pairs)
        assert (f"MS_HEARTBEAT_RETRY_TIMEOUT is not read by MindSpore {release}" in run.stderr) == named


def test_the_release_comes_from_the_jobs_annotation_as_well() -> None:
    text = (MS / "gpu-2x8-msrun.yaml").read_text().replace(
        "    msgen/launcher: msrun\n", "    msgen/launcher: msrun\n    msgen/mindspore-version: 2.7.0\n")
    assert render("-", input=text) == render(MSRUN, "--mindspore-version", "2.7.0")
    assert render("-", input=text) != render(MSRUN)


def test_an_unknown_release_is_refused_at_the_annotation() -> None:
    text = (MS / "lenet-cpu.yaml").read_text().replace(
        "  name: msjob-mnist\n", "  name: msjob-mnist\n  annotations:\n    msgen/mindspore-version: '2.6'\n")
    run = msgen("render", "-", input=text)
    assert run.exit_code == 1 and run.stdout == ""
    assert "msgen/mindspore-version" in run.stderr and "MindSpore 2.6 is not a release msgen knows" in run.stderr


def _pinned_kueue() -> Path | None:
    """The Kueue release tests/live/go/kueue pins, in the Go module cache (None when absent)."""
    version = re.search(r"^\s*sigs\.k8s\.io/kueue (v\S+)", (ROOT / "tests/live/go/kueue/go.mod").read_text(), re.M)
    cache = os.environ.get("GOMODCACHE") or str(Path.home() / "go" / "pkg" / "mod")
    found = Path(cache) / "sigs.k8s.io" / f"kueue@{version.group(1)}" if version else None
    return found if found is not None and found.is_dir() else None


def test_the_timeout_is_the_pinned_kueues_default() -> None:
    found = _pinned_kueue()
    if found is None:
        pytest.skip("the Kueue release tests/live/go/kueue pins is not in the Go module cache (tests/live/cluster up --with kueue)")
    defaults = (found / "apis/config/v1beta2/defaults.go").read_text()
    minutes = re.search(r"DefaultWaitForPodsReadyTimeout\s*=\s*(\d+)\s*\*\s*time\.Minute", defaults)
    assert minutes is not None and int(minutes.group(1)) * 60 == KUEUE_PODS_READY_TIMEOUT
    # ... and on by default: an absent waitForPodsReady is defaulted to a value, not left nil
    assert "cfg.WaitForPodsReady = cmp.Or(" in defaults
