"""msgen.kinds.msjob_legacy: the 2020 MSJob (kubeflow.org/v1): its Plan, and its refusals: the
operator's own example (seed `000`) as written, masterPort (a port, agreeing with the
container's), one MASTER, replica types."""

from __future__ import annotations

import re

from msgen import kinds
from msgen.kinds import msjob_legacy
from msgen.model.diagnostics import has_errors
from msgen.model.plan import Options

from .conftest import SAMPLES, shared_glob
from .plugin_plans import document_of, sample_plan
from .test_errors import fails

SAMPLE = "mindspore-legacy/msjob-mnist-dist.yaml"


def test_the_registry_serves_the_kind_from_this_module() -> None:
    assert kinds.lookup(*('kubeflow.org/v1', 'MSJob')) is msjob_legacy.KIND


def test_its_sample_compiles_to_the_roles_it_declares() -> None:
    made = sample_plan(SAMPLE)
    assert (made.api_version, made.kind) == ('kubeflow.org/v1', 'MSJob')
    assert made.framework == 'mindspore-legacy'
    assert [(r.replica_type, r.replicas) for r in made.roles] == [('MASTER', 1), ('WORKER', 3)]
    assert made.success_policy == 'AllWorkers'


def seed_example() -> str:
    """The distributed MSJob of the 2020 ms-operator's README, verbatim."""
    text = shared_glob("seeds", "000_*").read_text()
    match = re.search(r"```yaml\n(# WIP example.*?)```", text, re.S)
    assert match is not None
    return match.group(1)


def test_seed_example_as_written_names_its_repeated_keys() -> None:
    err = fails(seed_example())
    assert "<stdin>:32:11: error: duplicate key 'restartPolicy' (first written on line 24)" in err
    assert "<stdin>:56:11: error: duplicate key 'restartPolicy' (first written on line 48)" in err


def test_seed_example_names_each_volume_problem() -> None:
    text = seed_example().replace(
        "                defaultMode: 0755\n          restartPolicy: OnFailure\n",
        "                defaultMode: 0755\n",
    )
    # The pod template's own schema first: positioned, with what to do.
    err = fails(text)
    assert "<stdin>:44:17: error: spec.replicaSpecs[1].template.spec.containers[0].volumeMounts[1]: missing required field 'mountPath'" in err
    assert (
        "<stdin>:45:17: error: spec.replicaSpecs[1].template.spec.containers[0].volumeMounts[1]."
        "hostPath: unknown field 'hostPath' (a hostPath volume source belongs in the pod's volumes)"
    ) in err
    # With the mount written as a mount, the job's own consistency checks follow.
    text = text.replace(
        "                hostPath:\n                    path: /root/gopath/src/gitee.com/mindspore/ms-operator/examples\n",
        "                mountPath: /tmp/test\n",
    )
    err = fails(text)
    # Only container, not named mindspore: configured, with a warning.
    assert (
        "<stdin>:17:19: warning: spec.replicaSpecs[0].template.spec.containers[0].name: "
        "MASTER's only container is named 'msjob-mnist', not 'mindspore'"
    ) in err
    # Mounted but never declared, in both replicas.
    for line in (22, 44):
        assert (
            f"<stdin>:{line}:23: error: spec.replicaSpecs[{line // 40}].template.spec."
            "containers[0].volumeMounts[1].name: volume 'ms-mnist-local-file' is mounted but "
            "not declared in the pod's volumes; declared: 'training-result', 'entrypoint'"
        ) in err
    # Declared but never mounted: a warning.
    assert "<stdin>:28:21: warning: spec.replicaSpecs[0].template.spec.volumes[1].name: volume 'entrypoint' is declared but no container mounts it" in err


LEGACY = (SAMPLES / "mindspore-legacy" / "msjob-mnist-dist.yaml").read_text()


def test_legacy_master_port_must_be_a_port() -> None:
    err = fails(LEGACY.replace('masterPort: "23456"', 'masterPort: "tcp"'))
    assert "<stdin>:10:15: error: spec.masterPort: masterPort 'tcp' is not a port; accepted: a number from 1 to 65535" in err


def test_legacy_needs_one_master() -> None:
    err = fails(LEGACY.replace("    - replicas: 1\n      replicaType: MASTER", "    - replicas: 2\n      replicaType: MASTER"))
    assert "<stdin>:12:17: error: spec.replicaSpecs[0].replicas: the MASTER must have exactly one replica, not 2" in err
    err = fails(LEGACY.replace("replicaType: MASTER", "replicaType: WORKER"))
    assert "a second WORKER replica spec" in err
    assert "no MASTER replica spec; accepted: one MASTER (replicas 1) and any WORKERs" in err


def test_legacy_replica_type_is_checked() -> None:
    err = fails(LEGACY.replace("replicaType: MASTER", "replicaType: CHIEF"))
    assert "<stdin>:13:20: error: spec.replicaSpecs[0].replicaType:" in err
    assert "'MASTER'" in err and "'WORKER'" in err


def test_legacy_master_port_and_container_port_must_agree() -> None:
    text = LEGACY.replace(
        "            name: msjob-mnist\n            command",
        "            name: msjob-mnist\n            ports: [{name: msjob-port, containerPort: 3000}]\n            command",
        1,
    )
    err = fails(text)
    assert "<stdin>:10:15: error: spec.masterPort: masterPort 23456 differs from the msjob-port port 3000 of container 'msjob-mnist'" in err


def test_its_entry_points_on_its_sample() -> None:
    """`model` is the declaration the job is checked against; `to_plan` makes the Plan, or
    none and the errors that stop it."""
    assert msjob_legacy.KIND.model() is msjob_legacy.LegacyMSJob
    made, found = msjob_legacy.KIND.to_plan(document_of("mindspore-legacy/msjob-mnist-dist.yaml"), Options())
    assert made is not None and not has_errors(found), found
    assert (made.api_version, made.kind) == (msjob_legacy.KIND.api_version, msjob_legacy.KIND.kind)
    refused, found = msjob_legacy.KIND.to_plan(document_of("mindspore-legacy/msjob-mnist-dist.yaml", 'replicaType: MASTER', 'replicaType: WORKER'), Options())
    assert refused is None and has_errors(found)
