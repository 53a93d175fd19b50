"""Pod templates are checked against Kubernetes' own schema, at each field's position."""

from __future__ import annotations

import subprocess
import sys

import kubernetes_validate
import pytest

from .generators import pod_schema_build

from .conftest import ROOT, SAMPLES, msgen

JOB_TEXT = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
SCHEDULER = "spec.msReplicaSpecs.scheduler.template.spec"
WORKER = "spec.msReplicaSpecs.worker.template.spec"


def test_the_checked_in_schema_is_built_from_the_newest_bundled_kubernetes() -> None:
    built = pod_schema_build.build()
    assert pod_schema_build.OUTPUT.read_text() == built, (
        "msgen/checks/pod_template_schema.py is out of date: "
        "run python -m tests.generators.pod_schema_build"
    )
    latest = kubernetes_validate.utils.major_minor(kubernetes_validate.utils.latest_version())
    from msgen.checks import pod_template_schema

    assert pod_template_schema.KUBERNETES == latest


def render_error(old: str, new: str) -> str:
    assert old in JOB_TEXT
    run = msgen("render", "-", input=JOB_TEXT.replace(old, new))
    assert run.exit_code == 1 and run.stdout == "", run.stderr
    return run.stderr


@pytest.mark.parametrize(
    "old,new,expected",
    [
        (
            "hostPath:\n                path: /data/ms-operator/examples\n    worker",
            "hostPathx:\n                path: /data/ms-operator/examples\n    worker",
            f"<stdin>:23:15: error: {SCHEDULER}.volumes[0].hostPathx: unknown field 'hostPathx' "
            "(did you mean 'hostPath'?); accepted: awsElasticBlockStore,",
        ),
        (
            "emptyDir: {}",
            "emptyDir: {sizeLimt: 1Gi}",
            f"<stdin>:42:26: error: {WORKER}.volumes[0].emptyDir.sizeLimt: unknown field 'sizeLimt' "
            "(did you mean 'sizeLimit'?); accepted: medium, mode, sizeLimit\n",
        ),
        (
            "emptyDir: {}",
            "hostPath: {}",
            f"<stdin>:42:25: error: {WORKER}.volumes[0].hostPath: missing required field 'path'\n",
        ),
        (
            "emptyDir: {}",
            "hostPath: -2",
            f"<stdin>:42:25: error: {WORKER}.volumes[0].hostPath: -2 is not accepted; accepted: a mapping\n",
        ),
        (
            "imagePullPolicy: IfNotPresent",
            "imagePullPolicy: 0",
            f"<stdin>:16:32: error: {SCHEDULER.replace('.spec', '.spec', 1)}.containers[0].imagePullPolicy: 0 "
            "is not accepted; accepted: a string",
        ),
        (
            "          volumes:\n            - name: ms-mnist",
            "          dnsPolicy: -1\n          volumes:\n            - name: ms-mnist",
            f"<stdin>:21:22: error: {SCHEDULER}.dnsPolicy: -1 is not accepted; accepted: a string",
        ),
        (
            "          volumes:\n            - name: ms-mnist",
            "          affinity: [1]\n          volumes:\n            - name: ms-mnist",
            f"<stdin>:21:21: error: {SCHEDULER}.affinity: a list is not accepted; accepted: a mapping\n",
        ),
        (
            "          volumes:\n            - name: ms-mnist",
            "          terminationGracePeriodSeconds: 1e400\n          volumes:\n            - name: ms-mnist",
            f"<stdin>:21:42: error: {SCHEDULER}.terminationGracePeriodSeconds: '1e400' is not "
            "accepted; accepted: an integer\n",
        ),
        (
            "          volumes:\n            - name: ms-mnist",
            "          priority: 2147483648\n          volumes:\n            - name: ms-mnist",
            f"<stdin>:21:21: error: {SCHEDULER}.priority: 2147483648 is not accepted: it is an int32; "
            "accepted: -2147483648 to 2147483647\n",
        ),
    ],
    ids=["volume-source", "emptydir-field", "hostpath-empty", "hostpath-number", "image-pull-policy",
         "dns-policy", "affinity", "not-a-number", "int32"],
)  # fmt: skip
def test_what_the_api_server_would_reject_is_an_error_where_written(
    old: str, new: str, expected: str
) -> None:
    assert expected in render_error(old, new)


def test_null_optional_fields_and_int_or_string_pass() -> None:
    text = JOB_TEXT.replace(
        "imagePullPolicy: IfNotPresent",
        "imagePullPolicy: null\n              livenessProbe: {tcpSocket: {port: http}, "
        "periodSeconds: 3}\n              readinessProbe: {tcpSocket: {port: 8080}}",
        1,
    )
    run = msgen("render", "-", input=text)
    assert run.exit_code == 0, run.stderr


def test_the_typed_fields_keep_their_own_messages() -> None:
    err = render_error("- name: mindspore\n              image: mindspore/mindspore-cpu:2.2.14\n              imagePullPolicy",
                       "- name: mindspore\n              imagee: x\n              imagePullPolicy")  # fmt: skip
    assert "unknown field 'imagee' (did you mean 'image'?)" in err
    # once per role (both templates have it), not again from the schema check
    assert err.count("unknown field 'imagee'") == 2 and "msgen: 2 error(s)" in err


def test_the_schema_is_read_on_first_use_not_at_import() -> None:
    code = (
        "import msgen.hosts.command_line.cli, msgen.compile.pipeline, msgen.hosts.kustomize.krm\n"
        "from msgen.checks import pod_schema\n"
        "print(pod_schema._schema.cache_info().currsize)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.strip() == "0", done.stderr


def test_a_field_newer_than_the_clusters_kubernetes_is_an_error_there() -> None:
    text = JOB_TEXT.replace(
        "imagePullPolicy: IfNotPresent", "imagePullPolicy: IfNotPresent\n              resizePolicy: []", 1
    )
    run = msgen("render", "--kube-version", "1.26", "-", input=text)
    assert run.exit_code == 1
    assert (
        f"<stdin>:17:15: error: {SCHEDULER}.containers[0].resizePolicy: field 'resizePolicy' needs "
        "Kubernetes 1.27 or newer, and the cluster is 1.26 (--kube-version); accepted: args,"
    ) in run.stderr
    assert msgen("render", "--kube-version", "1.27", "-", input=text).exit_code == 0
