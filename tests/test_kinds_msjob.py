"""msgen.kinds.msjob: MSJob (mindspore.gitee.com/v1) as ms-operator accepted it: its Plan (roles,
framework, success policy), and its own refusals (the `mindspore` container, images, one
Scheduler, replica types and keys)."""

from __future__ import annotations

from msgen import kinds
from msgen.kinds import msjob
from msgen.model.diagnostics import has_errors
from msgen.model.plan import Options

from .conftest import msgen
from .plugin_plans import document_of, sample_plan
from .test_errors import GOOD_SCHEDULER, GOOD_WORKER, fails, job

SAMPLE = "mindspore/widedeep-ps.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('mindspore.gitee.com/v1', 'MSJob')) is msjob.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('mindspore.gitee.com/v1', 'MSJob')
    assert made.framework == 'mindspore'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('Scheduler', 1), ('PS', 1), ('Worker', 2)]
    assert made.success_policy == ''


def test_no_mindspore_container() -> None:
    err = fails(job(GOOD_WORKER.replace("name: mindspore", "name: trainer")))
    assert "<stdin>:11:13: error: spec.msReplicaSpecs.Worker.template.spec.containers:" in err
    assert "Worker has no container named 'mindspore' (found 'trainer')" in err
    assert "accepted: one container named 'mindspore'" in err


def test_container_without_image() -> None:
    err = fails(job(GOOD_WORKER.replace("image: ms", "imagePullPolicy: Always")))
    assert "<stdin>:11:15: error: spec.msReplicaSpecs.Worker.template.spec.containers[0]:" in err
    assert "container 'mindspore' of Worker has no image" in err


def test_more_than_one_scheduler_by_replicas() -> None:
    err = fails(job(GOOD_SCHEDULER.replace("Scheduler:", "Scheduler:\n  replicas: 2") + GOOD_WORKER))
    assert "<stdin>:8:17: error: spec.msReplicaSpecs.Scheduler.replicas:" in err
    assert "more than one Scheduler: replicas 2; accepted: 0 or 1" in err


def test_more_than_one_scheduler_by_keys() -> None:
    err = fails(job(GOOD_SCHEDULER + GOOD_SCHEDULER.replace("Scheduler:", "SCHEDULER:")))
    assert "<stdin>:14:5: error: spec.msReplicaSpecs.SCHEDULER:" in err
    assert "keys 'Scheduler' and 'SCHEDULER' name the same replica type" in err


def test_unknown_replica_type() -> None:
    err = fails(job(GOOD_WORKER.replace("Worker:", "Master:")))
    assert "<stdin>:7:5: error: spec.msReplicaSpecs.Master: unknown replica type 'Master'; accepted: Scheduler, PS, Worker" in err


def test_its_entry_points_on_its_sample() -> None:
    """`model` is the declaration the job is checked against; `to_plan` makes the Plan, or
    none and the errors that stop it."""
    assert msjob.KIND.model() is msjob.MSJob
    made, found = msjob.KIND.to_plan(document_of("mindspore/lenet-cpu.yaml"), Options())
    assert made is not None and not has_errors(found), found
    assert (made.api_version, made.kind) == (msjob.KIND.api_version, msjob.KIND.kind)
    refused, found = msjob.KIND.to_plan(document_of("mindspore/lenet-cpu.yaml", 'name: mindspore\n', 'name: trainer\n'), Options())
    assert refused is None and has_errors(found)


def test_a_templates_restart_policy_is_replaced_by_the_replicas_with_a_warning() -> None:
    text = job(GOOD_WORKER.replace("Worker:\n", "Worker:\n  restartPolicy: OnFailure\n")
               .replace("    spec:\n", "    spec:\n      restartPolicy: Always\n"))
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0, run.stderr
    assert ("<stdin>:11:26: warning: spec.msReplicaSpecs.Worker.template.spec.restartPolicy: restartPolicy in the pod "
            "template is replaced by the replica's restartPolicy (OnFailure), as ms-operator does; set it on the "
            "replica instead") in run.stderr
    assert "restartPolicy: Always" not in run.stdout
    # Unset on the replica: Never, named so.
    unset = msgen("render", "-", input=job(GOOD_WORKER.replace("    spec:\n", "    spec:\n      restartPolicy: Always\n")))
    assert "replica's restartPolicy (Never), as ms-operator does" in unset.stderr
    assert msgen("render", "-", input=job(GOOD_WORKER)).stderr == ""
