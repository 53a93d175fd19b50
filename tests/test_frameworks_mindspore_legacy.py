"""msgen.frameworks.mindspore_legacy: the 2020 ms-operator's env (MS_CONFIG, RANK counted across
roles, WORLD_SIZE, MASTER_ADDR), on the configured container only."""

from __future__ import annotations

import json

import pytest

from msgen import frameworks
from msgen.frameworks import mindspore_legacy
from msgen.model.plan import Options

from .conftest import SAMPLES, msgen
from .plugin_plans import addresses, patch_env, pod_env, sample_plan, slot_of
from .rendered_pods import PER_POD_TARGETS, pods, render

SAMPLE = "mindspore-legacy/msjob-mnist-dist.yaml"
#: variable -> value in pod msjob-mnist-dist-worker-1
EXPECTED = {'RANK': '2', 'WORLD_SIZE': '4', 'MASTER_PORT': '23456', 'MASTER_ADDR': 'msjob-mnist-dist-master-0.msjob-mnist-dist'}


def test_the_registry_serves_this_module() -> None:
    assert frameworks.lookup('mindspore-legacy') is mindspore_legacy
    assert sample_plan(SAMPLE).framework == 'mindspore-legacy'


@pytest.mark.parametrize("variable", EXPECTED)
def test_a_worker_gets_the_frameworks_env(variable: str) -> None:
    assert pod_env(sample_plan(SAMPLE), 'msjob-mnist-dist-worker-1').get(variable) == EXPECTED[variable]


@pytest.mark.parametrize("variable", ['MS_ROLE'])
def test_a_worker_gets_no_other_frameworks_env(variable: str) -> None:
    assert variable not in pod_env(sample_plan(SAMPLE), 'msjob-mnist-dist-worker-1')


@pytest.mark.parametrize("target", PER_POD_TARGETS)
def test_legacy_msjob_ranks_and_master(target: str) -> None:
    found = pods(render(str(SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml"), "--target", target))
    found.sort(key=lambda p: (p["role"] != "master", p["index"]))
    assert [(p["role"], p["index"]) for p in found] == [
        ("master", 0), ("worker", 0), ("worker", 1), ("worker", 2),
    ]  # fmt: skip
    master_host = found[0]["host"]
    # Fixed: ranks 0..WORLD_SIZE-1, master first (the operator gave master 0 and worker 0 rank 0).
    assert [p["env"]["msjob-mnist"]["RANK"] for p in found] == ["0", "1", "2", "3"]
    for pod in found:
        env = pod["env"]["msjob-mnist"]
        assert env["WORLD_SIZE"] == "4"
        assert env["MASTER_PORT"] == "23456"
        # Fixed: only master 0 is localhost to itself (the operator also told worker 0 so).
        assert env["MASTER_ADDR"] == ("localhost" if pod["role"] == "master" else master_host)
        config = json.loads(env["MS_CONFIG"])
        assert list(config) == ["cluster", "task", "environment"]
        assert config["environment"] == "cloud"
        assert config["task"] == {"type": pod["role"], "index": pod["index"]}
        assert config["cluster"] == {
            "master": [f"{master_host}:23456"],
            "worker": [f"{p['host']}:23456" for p in found[1:]],
        }


def test_legacy_msjob_env_only_on_the_mindspore_container() -> None:
    text = (SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml").read_text()
    text = text.replace("name: msjob-mnist\n", "name: mindspore\n")
    text = text.replace(
        "          restartPolicy: OnFailure\n",
        "          - {name: sidecar, image: busybox}\n          restartPolicy: OnFailure\n",
    )
    run = msgen("render", "-", "--target", "pod", input=text)
    assert run.exit_code == 0, run.stderr
    assert "warning" not in run.stderr
    for pod in pods(run.objects()):
        assert "RANK" in pod["env"]["mindspore"]
        assert pod["env"]["sidecar"] == {}


# --- the module's entry points, on its sample ------------------------------------------------


def test_every_replica_is_reached_by_name_and_each_pod_needs_its_index() -> None:
    made = sample_plan(SAMPLE)
    found = mindspore_legacy.endpoints(made)
    assert [(e.role.replica_type, e.index, e.by_name) for e in found] == [
        ("MASTER", 0, True), ("WORKER", 0, True), ("WORKER", 1, True), ("WORKER", 2, True),
    ]  # fmt: skip
    assert mindspore_legacy.needs_pod_index(made)
    assert mindspore_legacy.check(made, Options()) == []


def test_a_worker_gets_its_rank_counted_across_roles() -> None:
    made = sample_plan(SAMPLE)
    env = patch_env(mindspore_legacy.contribute(made, slot_of(made, "WORKER", 1), addresses(made, "pod")))
    assert (env["RANK"], env["WORLD_SIZE"], env["MASTER_PORT"]) == ("2", "4", "23456")
    assert json.loads(str(env["MS_CONFIG"]))["task"] == {"type": "worker", "index": 1}
