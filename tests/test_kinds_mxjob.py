"""msgen.kinds.mxjob: MXJob (kubeflow.org/v1) and the original MxJob (v1beta1), one package: the
Plan, jobMode's replica types, PsRootPort, the `mxnet` container, the run policy as the CRD has
it, and the original operator's GPU example (seed `002`) as written."""

from __future__ import annotations

import re

from msgen import kinds
from msgen.kinds.mxjob import v1, v1beta1
from msgen.kinds.mxjob.model import MXJob
from msgen.model.diagnostics import has_errors
from msgen.model.plan import Options

from .conftest import SAMPLES, msgen, shared_glob
from .plugin_plans import document_of, sample_plan
from .test_errors import fails

MX_GPU = (SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml").read_text()

SAMPLE = "mxnet/mxjob-gpu-workers.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('kubeflow.org/v1', 'MXJob')) is v1.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('kubeflow.org/v1', 'MXJob')
    assert made.framework == 'mxnet'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('Scheduler', 1), ('Server', 2), ('Worker', 2)]
    assert made.success_policy == 'Scheduler'


def test_the_original_mxjob_is_the_same_package() -> None:
    made = sample_plan("mxnet/mx-job-dist.yaml")
    assert (made.api_version, made.kind, made.framework) == ("mlkube.io/v1beta1", "MxJob", "mxnet-original")
    assert [(r.replica_type, r.replicas) for r in made.roles] == [("Scheduler", 1), ("Server", 2), ("Worker", 3)]
    assert made.success_policy == "Scheduler"


MX_DIST = (SAMPLES / "mxnet" / "mx-job-dist.yaml").read_text()


def test_mxjob_dist_needs_every_replica_type() -> None:
    start = MX_DIST.index("    - replicas: 2\n      mxReplicaType: SERVER")
    end = MX_DIST.index("    - replicas: 3\n")
    err = fails(MX_DIST[:start] + MX_DIST[end:])
    assert "<stdin>:8:12: error: spec.jobMode: jobMode dist needs SCHEDULER, SERVER and WORKER replica specs; missing: SERVER" in err


def test_mxjob_local_is_one_worker() -> None:
    err = fails(MX_DIST.replace("jobMode: dist", "jobMode: local"))
    assert "<stdin>:8:12: error: spec.jobMode: jobMode local runs one process" in err


def test_mxjob_ps_root_port_and_container_port_must_agree() -> None:
    text = MX_DIST.replace(
        "              name: mxnet\n              command: [\"python\"]\n              args: [\"train_cifar10.py\"]\n              workingDir: /incubator-mxnet/example/image-classification\n          restartPolicy: OnFailure\n    - replicas: 2",
        "              name: mxnet\n              ports: [{name: mxjob-port, containerPort: 9000}]\n          restartPolicy: OnFailure\n    - replicas: 2",
        1,
    )
    err = fails(text)
    assert "<stdin>:12:19: error: spec.replicaSpecs[0].PsRootPort: PsRootPort 9091 differs from the mxjob-port port 9000" in err


def test_mxjob_one_scheduler_and_mode_roles() -> None:
    err = fails(MX_GPU.replace("    Scheduler:\n      replicas: 1", "    Scheduler:\n      replicas: 2"))
    assert "<stdin>:13:17: error: spec.mxReplicaSpecs.Scheduler.replicas: more than one Scheduler: replicas 2; accepted: 1" in err
    err = fails(MX_GPU.replace("    Server:", "    Tuner:"))
    assert "error: spec.mxReplicaSpecs.Tuner: replica type 'Tuner' is not accepted in jobMode MXTrain (a MXTune replica type); accepted: Scheduler, Server, Worker" in err
    err = fails(MX_GPU.replace("    Server:", "    TunerServer:"))
    assert "replica type 'TunerServer' is not accepted in jobMode MXTrain (a MXTune replica type)" in err


def test_mxjob_needs_the_mxnet_container() -> None:
    err = fails(MX_GPU.replace("- name: mxnet\n              image: kubeflow/mxnet-gpu:latest\n              ports", "- name: trainer\n              image: kubeflow/mxnet-gpu:latest\n              ports"))
    assert "spec.mxReplicaSpecs.Scheduler.template.spec.containers: Scheduler has no container named 'mxnet' (found 'trainer')" in err


def test_seed_mxjob_gpu_example_gets_field_level_messages() -> None:
    """The original mxnet-operator's GPU example, a tf-operator leftover, as written."""
    text = shared_glob("seeds", "002_*").read_text()
    match = re.search(r'```\n(apiVersion: "mlkube.io/v1beta1".*?)```', text, re.S)
    assert match is not None
    err = fails(match.group(1))
    assert "<stdin>:6:3: error: spec.replica_specs: unknown field 'replica_specs' (did you mean 'replicaSpecs'?)" in err
    err = fails(match.group(1).replace("replica_specs", "replicaSpecs").replace("spec:\n", "spec:\n  jobMode: dist\n", 1))
    assert "<stdin>:10:22: error: spec.replicaSpecs[0].mxReplicaType: 'MASTER' is not accepted; accepted: 'SCHEDULER', 'SERVER' or 'WORKER'" in err


def test_mxjob_run_policy_as_the_crd_has_it() -> None:
    text = MX_GPU.replace(
        "  runPolicy:\n    backoffLimit: 2\n",
        "  runPolicy:\n    backoffLimit: 2\n    suspend: true\n    schedulingPolicy: {scheduleTimeoutSeconds: 60}\n",
    )
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0, run.stderr
    assert "<stdin>:11:14: warning: spec.runPolicy.suspend: suspend: true is not expressed" in run.stderr
    assert "schedulingPolicy: it asks for gang scheduling, which target indexed-job expresses as a PodGroup" in run.stderr


def test_its_entry_points_on_its_samples() -> None:
    """Each module's `model` is the declaration its jobs are checked against; `to_plan` makes
    the Plan, or none and the errors that stop it."""
    assert v1.KIND.model() is MXJob and v1beta1.KIND.model() is v1beta1.MxJob
    made, found = v1.KIND.to_plan(document_of("mxnet/mxjob-gpu-workers.yaml"), Options())
    assert made is not None and not has_errors(found), found
    refused, found = v1.KIND.to_plan(document_of("mxnet/mxjob-gpu-workers.yaml", "name: mxnet\n", "name: trainer\n"), Options())
    assert refused is None and has_errors(found)
    original = document_of("mxnet/mx-job-dist.yaml", "mlkube.io/v1beta1", "mxnet.mlkube.io/v1beta1")
    made, found = v1beta1.KIND.to_plan(original, Options())
    assert made is not None and not has_errors(found) and made.api_version == "mxnet.mlkube.io/v1beta1"
    refused, found = v1beta1.KIND.to_plan(document_of("mxnet/mx-job-dist.yaml", "jobMode: dist", "jobMode: local"), Options())
    assert refused is None and has_errors(found)


def test_a_templates_restart_policy_is_replaced_by_the_replicas_with_a_warning() -> None:
    lines = MX_GPU.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if i > 37 and line.strip() == "spec:")  # the Worker's pod spec
    lines.insert(at + 1, " " * (len(lines[at]) - len(lines[at].lstrip()) + 2) + "restartPolicy: Always\n")
    run = msgen("render", "-", input="".join(lines))
    assert run.exit_code == 0, run.stderr
    assert (f"<stdin>:{at + 2}:26: warning: spec.mxReplicaSpecs.Worker.template.spec.restartPolicy: restartPolicy in "
            "the pod template is replaced by the replica's restartPolicy (OnFailure), as the operator does; set it on "
            "the replica instead") in run.stderr
