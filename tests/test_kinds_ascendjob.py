"""msgen.kinds.ascendjob: AscendJob (mindxdl.gitee.com/v1): its Plan, ascend-operator's env on
every role (MS_LOCAL_WORKER, MS_NODE_RANK, single-device Workers too), and its refusals (the
framework label, another framework's replica types, the `ascend` container)."""

from __future__ import annotations

import pytest

from msgen import kinds
from msgen.kinds import ascendjob
from msgen.model.diagnostics import has_errors
from msgen.model.plan import Options

from .conftest import SAMPLES
from .multi_device_pods import (
    ACJOB,
    COMPLETION_INDEX,
    INDEX_TARGETS,
    resolved_env,
    worker_pods,
)
from .plugin_plans import document_of, sample_plan
from .test_errors import fails, line_of
from .test_frameworks_mindspore import env_of, pod_templates, render, role_of

SAMPLE = "ascend/mindspore-acjob.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('mindxdl.gitee.com/v1', 'AscendJob')) is ascendjob.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('mindxdl.gitee.com/v1', 'AscendJob')
    assert made.framework == 'mindspore'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('Scheduler', 1), ('Worker', 2)]
    assert made.success_policy == 'AllWorkers'


def test_ascendjob_of_another_framework() -> None:
    text = ACJOB.replace("framework: mindspore", "framework: pytorch")
    err = fails(text)
    assert f"<stdin>:{line_of(text, 'framework: pytorch')}:16: error: metadata.labels.framework: framework 'pytorch': msgen compiles MindSpore AscendJobs only" in err
    assert "accepted: mindspore" in err


def test_ascendjob_without_framework_label() -> None:
    err = fails(ACJOB.replace("    framework: mindspore\n", ""))
    assert "error: metadata.labels: an AscendJob needs the label 'framework'" in err


def test_ascendjob_replica_type_of_another_framework() -> None:
    text = ACJOB.replace("    Scheduler:\n", "    Master:\n")
    err = fails(text)
    assert f"<stdin>:{line_of(text, 'Master:')}:5: error: spec.replicaSpecs.Master: replica type 'Master' is not part of a MindSpore AscendJob; accepted: Scheduler, Worker" in err


def test_ascendjob_without_container_ascend() -> None:
    err = fails(ACJOB.replace("- name: ascend\n", "- name: trainer\n"))
    assert "Scheduler has no container named 'ascend' (found 'trainer'); accepted: one container named 'ascend', as ascend-operator expects" in err


@pytest.mark.parametrize("target", INDEX_TARGETS)
def test_ascendjob_has_ascend_operators_env(target: str) -> None:
    objects = render(str(SAMPLES / "ascend" / "mindspore-acjob.yaml"), "--target", target)
    ids = []
    for index, template in worker_pods(objects, "ascend"):
        env = resolved_env(template, index, "ascend")
        assert {k: env[k] for k in ("MS_ROLE", "MS_SERVER_NUM", "MS_WORKER_NUM", "MS_LOCAL_WORKER", "MS_SCHED_PORT")} == {
            "MS_ROLE": "MS_WORKER", "MS_SERVER_NUM": "0", "MS_WORKER_NUM": "16", "MS_LOCAL_WORKER": "8", "MS_SCHED_PORT": "2222",
        }
        assert "MS_NODE_ID" not in env, "the launch script derives each process's id"
        main = template["spec"]["containers"][0]
        assert main["command"][0] == "/bin/bash", "launcher none: the command runs as written"
        # ascend-operator's launch scripts: MS_NODE_ID = MS_NODE_RANK × MS_LOCAL_WORKER + i
        ids += [int(env["MS_NODE_RANK"]) * 8 + i for i in range(8)]
    assert sorted(ids) == list(range(16))
    scheduler = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "scheduler")
    assert env_of(scheduler, "ascend")["MS_WORKER_NUM"]["value"] == "16"


def test_ascendjob_single_device_workers_still_get_rank_and_local_worker() -> None:
    text = (SAMPLES / "ascend" / "mindspore-acjob.yaml").read_text().replace("huawei.com/Ascend910: 8", "huawei.com/Ascend910: 1")
    objects = render("-", input=text)
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    env = env_of(worker, "ascend")
    assert env["MS_LOCAL_WORKER"]["value"] == "1" and env["MS_WORKER_NUM"]["value"] == "2"
    assert env["MS_NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == COMPLETION_INDEX


def test_its_entry_points_on_its_sample() -> None:
    """`model` is the declaration the job is checked against; `to_plan` makes the Plan, or
    none and the errors that stop it."""
    assert ascendjob.KIND.model() is ascendjob.AscendJob
    made, found = ascendjob.KIND.to_plan(document_of("ascend/mindspore-acjob.yaml"), Options())
    assert made is not None and not has_errors(found), found
    assert (made.api_version, made.kind) == (ascendjob.KIND.api_version, ascendjob.KIND.kind)
    refused, found = ascendjob.KIND.to_plan(document_of("ascend/mindspore-acjob.yaml", 'framework: mindspore', 'framework: pytorch'), Options())
    assert refused is None and has_errors(found)
