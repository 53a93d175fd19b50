"""One test per class of bad input: exit status 1, nothing on stdout, and one clear message
with file:line:column, the offending value and what is accepted."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .conftest import msgen, msgen_process


def job(replica_specs: str, *, name: str = "demo", extra_spec: str = "") -> str:
    """An MSJob document whose msReplicaSpecs block is `replica_specs` (YAML, 4-space indented)."""
    return (
        "apiVersion: mindspore.gitee.com/v1\n"
        "kind: MSJob\n"
        f"metadata:\n  name: {name}\n"
        "spec:\n"
        f"{extra_spec}"
        "  msReplicaSpecs:\n" + textwrap.indent(textwrap.dedent(replica_specs).strip("\n"), "    ") + "\n"
    )


GOOD_WORKER = """
Worker:
  template:
    spec:
      containers:
        - name: mindspore
          image: ms
"""
GOOD_SCHEDULER = GOOD_WORKER.replace("Worker:", "Scheduler:")
#: A Worker whose command `--scheduler-address dns` can wrap.
COMMAND_WORKER = GOOD_WORKER.replace("image: ms\n", "image: ms\n          command: [python, train.py]\n")


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return lines[occurrence - 1]


def fails(text: str, *args: str) -> str:
    """Render `text` from a file; assert it failed as bad input must, and return stderr."""
    run = msgen("render", "-", *args, input=text)
    assert run.exit_code == 1, run.stderr
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    return run.stderr


@pytest.mark.parametrize(
    "text,position,field,accepted",
    [
        (
            job(GOOD_WORKER, extra_spec="  runPolicy:\n    backofLimit: 3\n"),
            "<stdin>:7:5",
            "spec.runPolicy.backofLimit: unknown field 'backofLimit'",
            "accepted: activeDeadlineSeconds, backoffLimit, cleanPodPolicy",
        ),
        (
            job(GOOD_WORKER.replace("image: ms", "image: ms\n          imagePullPolicyy: Always")),
            "<stdin>:13:15",
            "containers[0].imagePullPolicyy: unknown field 'imagePullPolicyy'",
            "imagePullPolicy,",
        ),
        (
            job(GOOD_WORKER.replace("containers:", "contianers:")),
            "<stdin>:10:11",
            "template.spec.contianers: unknown field 'contianers' (did you mean 'containers'?)",
            "containers,",
        ),
    ],
    ids=["run-policy", "container", "pod-spec"],
)
def test_unknown_fields(text: str, position: str, field: str, accepted: str) -> None:
    err = fails(text)
    assert f"{position}: error: " in err
    assert field in err
    assert accepted in err


def test_wrong_type() -> None:
    err = fails(job(GOOD_WORKER.replace("Worker:", 'Worker:\n  replicas: "2"')))
    assert "<stdin>:8:17: error: spec.msReplicaSpecs.Worker.replicas: '2' is not accepted; accepted: an integer" in err


def test_env_value_that_is_not_a_string() -> None:
    err = fails(job(GOOD_WORKER.replace("image: ms", "image: ms\n          env: [{name: X, value: 1}]")))
    assert "env[0].value: 1 is not accepted; accepted: a string" in err


@pytest.mark.parametrize(
    "text,position,message",
    [
        (
            job(GOOD_WORKER.replace("Worker:", "Worker:\n  restartPolicy: Sometimes")),
            "<stdin>:8:22",
            "restartPolicy: 'Sometimes' is not accepted; accepted: 'Always', 'OnFailure', 'Never' or 'ExitCode'",
        ),
        (
            job(GOOD_WORKER, extra_spec="  runPolicy:\n    cleanPodPolicy: Some\n"),
            "<stdin>:7:21",
            "cleanPodPolicy: 'Some' is not accepted; accepted: 'All', 'Running' or 'None'",
        ),
    ],
    ids=["restart-policy", "clean-pod-policy"],
)
def test_enum_values(text: str, position: str, message: str) -> None:
    err = fails(text)
    assert f"{position}: error: " in err
    assert message in err


def test_negative_replicas() -> None:
    err = fails(job(GOOD_WORKER.replace("Worker:", "Worker:\n  replicas: -3")))
    assert "<stdin>:8:17: error: spec.msReplicaSpecs.Worker.replicas: -3 is not accepted" in err
    assert "greater than or equal to 0" in err


def test_input_that_is_not_yaml() -> None:
    err = fails("apiVersion: v1\nkind: [ConfigMap\nmetadata: {}\n")
    assert "<stdin>:3:9: error: not valid YAML:" in err


def test_input_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n".encode("latin-1"))
    run = msgen("render", str(path))
    assert run.exit_code == 1 and run.stdout == ""
    assert f"{path}:3:21: error: not UTF-8 text (byte 0xe9)" in run.stderr


def test_document_that_is_not_an_object() -> None:
    err = fails("- just\n- a list\n")
    assert "<stdin>:1:1: error: not a Kubernetes object" in err


def test_duplicate_keys() -> None:
    err = fails(job(GOOD_WORKER.replace("image: ms", "image: ms\n          image: other")))
    assert "<stdin>:13:15: error: duplicate key 'image' (first written on line 12)" in err


ALIAS_BOMB = "".join(
    f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}" if i else '"lol"'] * 9) + "]\n"
    for i in range(10)
)


def test_alias_bomb_fails_fast_in_bounded_memory() -> None:
    """9^10 nodes if expanded; under a 1 GiB address-space limit expansion could not finish."""
    limit = 1 << 30
    # The child caps its own memory, then runs `python -m msgen render` (a preexec_fn would run
    # Python between fork and exec, which may deadlock under the test runner's threads).
    capped = (f"import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit})); "
              "sys.argv = ['msgen', 'render']; runpy.run_module('msgen', run_name='__main__', alter_sys=True)")

    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", capped], input=ALIAS_BOMB, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert "<stdin>:1:1: error: YAML aliases expand this document to" in done.stderr
    assert "accepted: at most 100000 nodes added by aliases" in done.stderr


def test_recursive_alias() -> None:
    err = fails("a: &x [*x]\n")
    assert "an alias refers to a node that contains it" in err


def test_env_msgen_owns() -> None:
    text = job(
        GOOD_SCHEDULER
        + GOOD_WORKER.replace("image: ms", "image: ms\n          env: [{name: MS_ROLE, value: custom}]")
    )
    err = fails(text)
    assert "<stdin>:20:21: error: spec.msReplicaSpecs.Worker.template.spec.containers[0].env[0]:" in err
    assert "container 'mindspore' sets MS_ROLE, which msgen sets for MindSpore ('MS_WORKER')" in err
    assert "--allow-env-override" in err
    run = msgen("render", "-", "--allow-env-override", input=text)
    assert run.exit_code == 0, run.stderr
    worker = run.objects()[-1]["spec"]["template"]["spec"]["containers"][0]
    assert [e for e in worker["env"] if e["name"] == "MS_ROLE"] == [{"name": "MS_ROLE", "value": "custom"}]


def test_device_requests_that_differ_from_limits() -> None:
    text = job(
        GOOD_WORKER.replace(
            "image: ms",
            "image: ms\n          resources:\n            limits: {nvidia.com/gpu: 2}\n"
            "            requests: {nvidia.com/gpu: 1}",
        )
    )
    err = fails(text)
    assert "nvidia.com/gpu requests (1) differ from limits (2); accepted: equal values" in err


def test_service_links_off_with_cluster_ip_addressing() -> None:
    text = job(GOOD_SCHEDULER + COMMAND_WORKER.replace("spec:\n      containers", "spec:\n      enableServiceLinks: false\n      containers"))
    err = fails(text)
    assert "enableServiceLinks: false hides the scheduler Service's variables" in err
    assert msgen("render", "-", "--scheduler-address", "dns", input=text).exit_code == 0


def test_host_name_in_a_distributed_template() -> None:
    text = job(GOOD_SCHEDULER + GOOD_WORKER.replace("spec:\n      containers", "spec:\n      hostname: fixed\n      containers"))
    err = fails(text)
    assert "spec.msReplicaSpecs.Worker.template.spec.hostname: hostname 'fixed' is not accepted in a distributed job" in err


def test_label_msgen_owns() -> None:
    text = job(GOOD_WORKER.replace("template:\n", "template:\n    metadata:\n      labels: {training.kubeflow.org/replica-type: trainer}\n"))
    err = fails(text)
    assert "label training.kubeflow.org/replica-type='trainer' clashes with the value msgen sets ('worker')" in err


def test_every_error_is_reported_and_nothing_is_written(tmp_path: Path) -> None:
    good = tmp_path / "a-good.yaml"
    good.write_text(job(GOOD_WORKER, name="fine"))
    bad = tmp_path / "b-bad.yaml"
    bad.write_text(job(GOOD_WORKER.replace("Worker:", "Worker:\n  replicas: -1"), extra_spec="  successPolicy: Sometimes\n"))
    out = tmp_path.parent / f"{tmp_path.name}-out.yaml"
    out.write_text("previous content\n")
    run = msgen_process("render", str(tmp_path), "-o", str(out))
    assert run.exit_code == 1
    assert run.stdout == ""
    assert run.stderr.count(": error: ") == 2
    assert "msgen: 2 error(s); nothing was written" in run.stderr
    assert out.read_text() == "previous content\n"


@pytest.mark.parametrize(
    "args,message",
    [
        (["render", "--kube-version", "1.19"], "older than msgen supports; accepted: 1.25 to 1.37 (a newer 1.x renders as 1.37, with a warning)"),
        (["render", "--kube-version", "latest"], "is not a Kubernetes version; accepted: MAJOR.MINOR"),
        (["render", "--namespace", "Bad_NS"], "'Bad_NS' is not accepted: must be a lowercase RFC 1123 label"),
        (["render", "no/such/file.yaml"], "no such file or directory: no/such/file.yaml"),
        (["render", "--target", "deployment"], "'deployment' is not one of"),
        (["schema", "TFJob"], "unknown kind 'TFJob'; accepted: kubeflow.org/v1/MSJob, kubeflow.org/v1/MXJob"),
        (["schema", "mxjob"], "'mxjob' names 3 kinds; accepted: kubeflow.org/v1/MXJob or mlkube.io/v1beta1/MxJob or mxnet.mlkube.io/v1beta1/MxJob"),
        (["schema", "MSJob"], "'MSJob' names 2 kinds; accepted: kubeflow.org/v1/MSJob or mindspore.gitee.com/v1/MSJob"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    run = msgen_process(*args, input="")
    assert run.exit_code == 2
    assert run.stdout == ""
    assert message in run.stderr


@pytest.mark.parametrize(
    "annotation,position,message",
    [
        ("msgen/targt: pod", "6:5", "unknown msgen option 'msgen/targt' (did you mean 'msgen/target'?); accepted: msgen/target, msgen/kube-version"),
        ("msgen/target: deployment", "6:19", "msgen/target: 'deployment' is not accepted; accepted: indexed-job, pod"),
    ],
)
def test_bad_option_annotation(annotation: str, position: str, message: str) -> None:
    text = job(GOOD_WORKER).replace("  name: demo\n", f"  name: demo\n  annotations:\n    {annotation}\n")
    err = fails(text)
    assert f"<stdin>:{position}: error: metadata.annotations." in err
    assert message in err


@pytest.mark.parametrize(
    "target,length,host",
    [
        ("indexed-job", 52, "{name}-scheduler-0"),  # Job <name>-scheduler: 62, fits
        ("volcano", 52, "{name}-scheduler-0"),  # Volcano Job <name>: fits
        ("jobset", 50, "{name}-scheduler-0-0"),  # JobSet <name>: fits
    ],
)
def test_each_target_checks_the_pod_host_names_it_derives(target: str, length: int, host: str) -> None:
    # With DNS addressing no Service is named after a replica: only the host name is too long.
    name = "h" * length
    err = fails(job(GOOD_SCHEDULER + COMMAND_WORKER, name=name), "--target", target, "--scheduler-address", "dns")
    assert err.count(": error: ") == 1, err
    assert (
        f"<stdin>:4:9: error: metadata.name: job name '{name}' makes the name "
        f"'{host.format(name=name)}', which is not accepted: must be no more than 63 characters"
    ) in err
