"""Values the API server refuses are refused by msgen first: one error at the field, exit 1.

One minimised job per rule: each passed with exit 0 before (the schema check sees field names
and types only), and the cluster then refused the objects (or, for a StatefulSet or a device
count, accepted objects that could never work). The rules and their sources are in
`msgen.checks.apirules`; tests/test_api_server_differential.py checks them against a real API server.
"""

from __future__ import annotations

import pytest

from .conftest import msgen

JOB = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: j
{meta}spec:
{job}  msReplicaSpecs:
    Scheduler:
      template:
        spec:
          containers:
            - name: mindspore
              image: ms
{scheduler}    Worker:
      replicas: 2
      template:
        spec:
{spec}          containers:
            - name: mindspore
              image: ms
{container}"""


def job(container: str = "", spec: str = "", meta: str = "", scheduler: str = "", run: str = "") -> str:
    def indent(text: str, by: int) -> str:
        return "".join(" " * by + line + "\n" for line in text.splitlines())

    return JOB.format(
        container=indent(container, 14),
        spec=indent(spec, 10),
        meta=indent(meta, 2),
        scheduler=indent(scheduler, 14),
        job=indent(run, 2),
    )


def refused(text: str, *args: str) -> str:
    run = msgen("render", *args, "-", input=text)
    assert run.exit_code == 1, run.stderr
    assert run.stdout == ""
    return run.stderr


def line_of(text: str, marker: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if marker in line)


W = "spec.msReplicaSpecs.Worker.template.spec"
C = f"{W}.containers[0]"

CASES = [
    # env
    ("env: [{name: A, valueFrom: {}}]", "", f"{C}.env[0].valueFrom", "valueFrom names no source"),
    ("env: [{name: A, value: x, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]", "",
     f"{C}.env[0].valueFrom", "valueFrom is not accepted beside a non-empty value"),
    ("env: [{name: A, valueFrom: {configMapKeyRef: {name: c, key: ''}}}]", "",
     f"{C}.env[0].valueFrom.configMapKeyRef.key", "a key is needed"),
    ("env: [{name: A, valueFrom: {fieldRef: {fieldPath: spec.schedulerName}}}]", "",
     f"{C}.env[0].valueFrom.fieldRef.fieldPath", "'spec.schedulerName' is not accepted in env"),
    # ports
    ("ports: [{name: Bad_Port, containerPort: 1}]", "", f"{C}.ports[0].name", "port name 'Bad_Port'"),
    ("ports: [{name: a, containerPort: 1}, {name: a, containerPort: 2}]", "", f"{C}.ports[1].name",
     "port name 'a' is used twice"),
    # volumes and mounts
    ("", "volumes: [{name: Bad, emptyDir: {}}]", f"{W}.volumes[0].name", "volume name 'Bad'"),
    ("", "volumes: [{name: v, emptyDir: {}}, {name: v, emptyDir: {}}]", f"{W}.volumes[1].name",
     "volume name 'v' is used twice"),
    ("", "volumes: [{name: v, emptyDir: {}, hostPath: {path: /x}}]", f"{W}.volumes[0].hostPath",
     "volume 'v' has emptyDir and hostPath"),
    ("volumeMounts: [{name: nope, mountPath: /x}]", "", f"{C}.volumeMounts[0].name",
     "volume 'nope' is not a volume of this pod"),
    ("volumeMounts: [{name: v, mountPath: ''}]", "volumes: [{name: v, emptyDir: {}}]",
     f"{C}.volumeMounts[0].mountPath", "mountPath must not be empty"),
    ("volumeMounts: [{name: v, mountPath: /x, subPath: ../up}]", "volumes: [{name: v, emptyDir: {}}]",
     f"{C}.volumeMounts[0].subPath", "must not contain '..'"),
    # containers
    ("", "initContainers: [{name: Init, image: x}]", f"{W}.initContainers[0].name",
     "container name 'Init'"),
    ("", "initContainers: [{name: mindspore, image: x}]", f"{W}.initContainers[0].name",
     "container name 'mindspore' is used twice"),
    ("", "initContainers: [{name: i}]", f"{W}.initContainers[0]", "a container needs an image"),
    # resources
    ("resources: {limits: {CPU: 1}}", "", f"{C}.resources.limits.CPU", "resource name 'CPU'"),
    ("resources: {requests: {nvidia.com/gpu: 1}}", "", f"{C}.resources.requests.nvidia.com/gpu",
     "requested without a limit"),
    ("resources: {limits: {memory: -1Gi}}", "", f"{C}.resources.limits.memory", "it is negative"),
    ("resources: {limits: {memory: abc}}", "", f"{C}.resources.limits.memory", "quantity 'abc'"),
    ("resources: {limits: {nvidia.com/gpu: '0.5'}}", "", f"{C}.resources.limits.nvidia.com/gpu",
     "counts whole devices"),
    # pod
    ("", "dnsPolicy: None", f"{W}.dnsPolicy", "dnsPolicy None needs a dnsConfig"),
    ("", "activeDeadlineSeconds: 0", f"{W}.activeDeadlineSeconds", "accepted: 1 to 2147483647"),
    ("", "priorityClassName: High", f"{W}.priorityClassName", "priorityClassName 'High'"),
    ("", "serviceAccountName: Bad_SA", f"{W}.serviceAccountName", "serviceAccountName 'Bad_SA'"),
    ("", "nodeSelector: {'-x': ok}", f"{W}.nodeSelector.-x", "label key '-x'"),
    ("", "nodeSelector: {ok: bad value}", f"{W}.nodeSelector.ok", "label value 'bad value'"),
    # found by the differential test
    ("env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: p, key: K}}}]", "",
     f"{C}.env[0].valueFrom.fileKeyRef.volumeName", "is not an emptyDir volume of this pod"),
    ("resources: {limits: {hugepages-2Mi: 1, memory: 1Gi}}", "", f"{C}.resources.limits.hugepages-2Mi",
     "is not a whole number of 2Mi pages"),
    ("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: '1e3'}}}]", "",
     f"{C}.env[0].valueFrom.resourceFieldRef.divisor", "divisor '1e3' is not accepted for limits.cpu"),
    # unquoted, 1e3 is the number 1000 to kubectl, and so to msgen
    ("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1e3}}}]", "",
     f"{C}.env[0].valueFrom.resourceFieldRef.divisor", "divisor 1000.0 is not accepted for limits.cpu"),
    ("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: '1.'}}}]", "",
     f"{C}.env[0].valueFrom.resourceFieldRef.divisor", "divisor '1.' is not accepted"),
    ("imagePullPolicy: ok", "", f"{C}.imagePullPolicy", "'ok' is not accepted; accepted: Always"),
    ("", "dnsPolicy: '-1'", f"{W}.dnsPolicy", "'-1' is not accepted; accepted: ClusterFirstWithHostNet"),
    ("", "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
     "[{topologyKey: k, labelSelector: {matchExpressions: [{key: '-b', operator: In, values: [x]}]}}]}}",
     f"{W}.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector"
     ".matchExpressions[0].key", "key '-b' is not accepted"),
]  # fmt: skip


@pytest.mark.parametrize("container,spec,path,fragment", CASES)
def test_pod_template_values_the_api_server_refuses(container: str, spec: str, path: str, fragment: str) -> None:
    text = job(container=container, spec=spec)
    err = refused(text)
    assert err.count(": error: ") == 1, err
    marker = (container or spec).split(":")[0]
    assert f"<stdin>:{line_of(text, marker)}:" in err, err
    assert f"error: {path}: " in err and fragment in err, err


@pytest.mark.parametrize(
    "container,version,accepted",
    [
        ("env: [{name: 1st var, value: x}]", "1.31", False),
        ("env: [{name: 1st var, value: x}]", "1.32", True),
        ("envFrom: [{prefix: '1 ', configMapRef: {name: c}}]", "1.31", False),
        ("envFrom: [{prefix: '1 ', configMapRef: {name: c}}]", "1.36", True),
        ("env: [{name: H, valueFrom: {fieldRef: {fieldPath: status.hostIPs}}}]", "1.28", False),
        ("env: [{name: H, valueFrom: {fieldRef: {fieldPath: status.hostIPs}}}]", "1.29", True),
    ],
)
def test_rules_follow_the_kube_version(container: str, version: str, accepted: bool) -> None:
    run = msgen("render", "--kube-version", version, "-", input=job(container=container))
    assert run.exit_code == (0 if accepted else 1), run.stderr
    if not accepted:
        assert "--kube-version is" in run.stderr or "is not accepted" in run.stderr


@pytest.mark.parametrize(
    "init,version,accepted",
    [
        ("restartPolicy: Always", "1.28", False),  # the field exists, the gate is off: dropped
        ("restartPolicy: Always", "1.29", True),
        ("restartPolicy: Never", "1.34", False),
        ("restartPolicy: Never", "1.35", True),  # ContainerRestartRules, beta
    ],
)
def test_init_container_restart_policy_by_version(init: str, version: str, accepted: bool) -> None:
    text = job(spec=f"initContainers: [{{name: side, image: x, {init}}}]")
    run = msgen("render", "--kube-version", version, "-", input=text)
    assert run.exit_code == (0 if accepted else 1), run.stderr
    if not accepted:
        assert f"{W}.initContainers[0].restartPolicy" in run.stderr


@pytest.mark.parametrize("target", ["jobset", "volcano"])
@pytest.mark.parametrize(
    "container,path,fragment",
    [
        ("env: [{name: A, value: '1'}, {name: A, value: '2'}]", f"{C}.env[1]", "name 'A' is listed twice"),
        ("ports: [{name: a, containerPort: 7}, {name: b, containerPort: 7}]", f"{C}.ports[1]",
         "containerPort 7, protocol 'TCP' is listed twice"),
    ],
)  # fmt: skip
def test_crd_targets_refuse_the_duplicates_their_list_maps_refuse(
    target: str, container: str, path: str, fragment: str
) -> None:
    text = job(container=container)
    assert msgen("render", "-", input=text).exit_code == 0  # a Job accepts them (with a warning)
    err = refused(text, "--target", target)
    assert f"error: {path}: {fragment}" in err, err


@pytest.mark.parametrize("target", ["jobset", "volcano"])
@pytest.mark.parametrize("value", ["1e3", "1000.0", "-0.0", "9007199254740991.0"])
def test_crd_targets_take_a_whole_number_written_as_a_float_as_an_integer(target: str, value: str) -> None:
    """The API server's schema check takes a float that is a whole JSON integer for an integer
    (a Volcano Job with `cpu: 1000.0` was accepted by Kubernetes 1.30's API server)."""
    text = job(container=f"resources: {{limits: {{memory: {value}}}}}")
    run = msgen("render", "--target", target, "-", input=text)
    assert run.exit_code == 0, run.stderr


@pytest.mark.parametrize("target", ["jobset", "volcano"])
@pytest.mark.parametrize("value", ["2.5", "9223372036854775808", "9007199254740992.0"])
def test_crd_targets_take_quantities_as_integers_or_strings(target: str, value: str) -> None:
    text = job(container=f"resources: {{limits: {{memory: {value}}}}}")
    assert msgen("render", "-", input=text).exit_code == 0  # a Job reads the number
    err = refused(text, "--target", target)
    assert f"error: {C}.resources.limits.memory: quantity {value} is not accepted here" in err


def test_statefulset_pods_take_no_active_deadline() -> None:
    err = refused(job(spec="activeDeadlineSeconds: 60"), "--target", "statefulset")
    assert f"error: {W}.activeDeadlineSeconds: activeDeadlineSeconds is not accepted in a StatefulSet" in err


def test_a_volume_without_a_source_is_an_empty_dir_as_the_server_defaults_it() -> None:
    text = job(container="volumeMounts: [{name: v, mountPath: /v}]", spec="volumes: [{name: v}]")
    assert msgen("render", "-", input=text).exit_code == 0


def test_every_role_at_zero_replicas_runs_nothing() -> None:
    text = job().replace("replicas: 2", "replicas: 0").replace("Scheduler:\n", "Scheduler:\n      replicas: 0\n")
    err = refused(text, "--target", "volcano")
    assert "has replicas: 0, so there is nothing to run" in err


@pytest.mark.parametrize(
    "meta,path,fragment",
    [
        ("namespace: Team_A", "metadata.namespace", "namespace 'Team_A'"),
        ("namespace: " + "n" * 64, "metadata.namespace", "no more than 63 characters"),
        ("namespace: $(FOO)", "metadata.namespace", "namespace '$(FOO)'"),
        ("labels: {'-x': ok}", "metadata.labels.-x", "label key '-x'"),
        ("labels: {ok: bad value}", "metadata.labels.ok", "label value 'bad value'"),
    ],
)
def test_job_metadata_copied_onto_every_object_is_checked(meta: str, path: str, fragment: str) -> None:
    err = refused(job(meta=meta))
    assert "<stdin>:5:" in err and f"error: {path}: " in err and fragment in err, err


@pytest.mark.parametrize(
    "run,args,path,fragment",
    [
        ("runPolicy: {backoffLimit: 2147483648}", (), "spec.runPolicy.backoffLimit",
         "less than or equal to 2147483647"),
        ("runPolicy: {ttlSecondsAfterFinished: 2147483648}", (), "spec.runPolicy.ttlSecondsAfterFinished",
         "less than or equal to 2147483647"),
        ("runPolicy: {activeDeadlineSeconds: 9223372036854775808}", (), "spec.runPolicy.activeDeadlineSeconds",
         "less than or equal to 9223372036854775807"),
        ("runPolicy: {activeDeadlineSeconds: 2147483648}", ("-t", "pod"), "spec.runPolicy.activeDeadlineSeconds",
         "target pod writes it on the pods"),
        ("runPolicy: {activeDeadlineSeconds: 2147483648}", ("-t", "volcano"), "spec.runPolicy.activeDeadlineSeconds",
         "target volcano writes it on the pods"),
        ("runPolicy: {schedulingPolicy: {minAvailable: 0}}", ("--gang-scheduler", "scheduler-plugins"),
         "spec.runPolicy.schedulingPolicy.minAvailable", "needs minMember 1 or more"),
        ("runPolicy: {schedulingPolicy: {queue: UPPER}}", ("-t", "volcano"),
         "spec.runPolicy.schedulingPolicy.queue", "queue 'UPPER'"),
        ("runPolicy: {schedulingPolicy: {queue: UPPER}}", ("--gang-scheduler", "volcano"),
         "spec.runPolicy.schedulingPolicy.queue", "queue 'UPPER'"),
        ("runPolicy: {schedulingPolicy: {minResources: {memory: abc}}}", ("--gang-scheduler", "volcano"),
         "spec.runPolicy.schedulingPolicy.minResources.memory", "quantity 'abc'"),
        ("runPolicy: {schedulingPolicy: {minAvailable: 4}}", ("-t", "volcano"),
         "spec.runPolicy.schedulingPolicy.minAvailable", "cannot be more than its tasks' replicas, 3"),
        ("runPolicy: {schedulingPolicy: {priorityClass: High}}", (),
         "spec.runPolicy.schedulingPolicy.priorityClass", "priorityClass 'High'"),
    ],
)  # fmt: skip
def test_values_msgen_writes_into_its_own_objects_fit_them(
    run: str, args: tuple[str, ...], path: str, fragment: str
) -> None:
    err = refused(job(run=run), *args)
    assert f"error: {path}: " in err and fragment in err, err


@pytest.mark.parametrize("args", [("-t", "volcano"), ("--gang-scheduler", "volcano"), ("-t", "pod")])
def test_an_empty_priority_class_or_queue_is_not_set(args: tuple[str, ...]) -> None:
    """The operators' Go types read `priorityClass: ''` and `queue: ''` as fields not set
    (omitempty), and the API server takes an empty priorityClassName for none."""
    run = msgen("render", *args, "-", input=job(run="runPolicy: {schedulingPolicy: {priorityClass: '', queue: ''}}"))
    assert run.exit_code == 0, run.stderr
    assert "priorityClassName" not in run.stdout and "queue:" not in run.stdout, run.stdout


def test_a_scheduler_port_named_twice_would_list_it_twice_in_the_service() -> None:
    # msgen adds msjob-port 2222 (MS_SCHED_PORT's default) beside the user's port `other`.
    text = job(scheduler="ports: [{name: other, containerPort: 2222}]")
    err = refused(text)
    assert f"<stdin>:{line_of(text, 'name: other')}:" in err
    assert "containers[0].ports[0]: port 2222/TCP is named both 'other' and 'msjob-port'" in err


def test_a_job_without_replicas_is_refused_rather_than_rendered_empty() -> None:
    text = "apiVersion: mindspore.gitee.com/v1\nkind: MSJob\nmetadata: {name: j}\nspec:\n  msReplicaSpecs: {}\n"
    err = refused(text)
    assert "<stdin>:5:19: error: spec.msReplicaSpecs: MSJob 'j' has no replicas" in err
    assert msgen("render", "-t", "volcano", "-", input=text).exit_code == 1  # not `tasks: []`


def test_two_device_resources_in_one_container_are_ambiguous() -> None:
    text = job(container="resources: {limits: {huawei.com/Ascend910: 16, huawei.com/Ascend310P: 2}}")
    err = refused(text)
    assert f"<stdin>:{line_of(text, 'resources:')}:" in err
    assert "huawei.com/Ascend310P and huawei.com/Ascend910: msgen cannot tell which" in err
