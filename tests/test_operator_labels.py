"""Each kind's pods carry the labels its operator gave them, read from the rendered objects.

kubeflow/common-based operators (`GenLabels`, `SetReplicaType`, `IsMasterRole`): ms-operator
(`msjob-controller`), ascend-operator (`ascendjob-controller`, Scheduler is master),
training-operator's MXJob (`mxjob-controller`, Servers are master). The older operators did
not use kubeflow/common, and their kinds get msgen's labels only.
"""

from __future__ import annotations

import pytest

from msgen.targets import NAMES as TARGETS
from msgen.targets import lookup

from .conftest import SAMPLES, msgen
from .test_frameworks_mindspore import pod_templates

KUBEFLOW_COMMON = {
    "mindspore/widedeep-ps.yaml": ("mindspore.gitee.com", "msjob-controller", set()),
    "ascend/mindspore-acjob.yaml": ("mindxdl.gitee.com", "ascendjob-controller", {"scheduler"}),
    "mxnet/mxjob-gpu-workers.yaml": ("kubeflow.org", "mxjob-controller", {"server"}),
}
OLDER = ["mxnet/mx-job-dist.yaml", "caffe2/resnet50-redis.yaml", "mindspore-legacy/msjob-mnist-dist.yaml"]
CAFFE2 = "caffe2/resnet50-redis.yaml"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("sample", KUBEFLOW_COMMON)
def test_kubeflow_common_labels(sample: str, target: str) -> None:
    group, operator, masters = KUBEFLOW_COMMON[sample]
    run = msgen("render", str(SAMPLES / sample), "--target", target)
    assert run.exit_code == 0, run.stderr
    templates = pod_templates(run.objects())
    assert templates
    for _, template, count in templates:
        labels = template["metadata"]["labels"]
        role = labels["training.kubeflow.org/replica-type"]
        assert labels["replica-type"] == role
        if lookup(target).facts.job_templates:
            # The API server sets a Job pod's `job-name` to the Job's own name and refuses
            # another value (Kubernetes' Job validation, checked in test_reconcile_live.py).
            assert "job-name" not in labels
        else:
            assert labels["job-name"] == labels["training.kubeflow.org/job-name"]
        assert labels["group-name"] == group
        assert labels["training.kubeflow.org/operator-name"] == operator
        assert (labels.get("training.kubeflow.org/job-role") == "master") == (role in masters)
        # an index as a label value only where this template is one pod's
        static = "training.kubeflow.org/replica-index" in labels
        assert ("replica-index" in labels) == static
        if static:
            assert labels["replica-index"] == labels["training.kubeflow.org/replica-index"]
        else:
            assert count > 1 or target != "pod"


@pytest.mark.parametrize("sample", OLDER)
def test_older_kinds_get_msgens_labels_only(sample: str) -> None:
    run = msgen("render", str(SAMPLES / sample), "--target", "pod")
    assert run.exit_code == 0, run.stderr
    for _, template, _ in pod_templates(run.objects()):
        labels = template["metadata"]["labels"]
        assert not {"job-name", "replica-type", "group-name", "training.kubeflow.org/operator-name"} & set(labels)


@pytest.mark.parametrize("target", TARGETS)
def test_caffe2_operators_own_labels(target: str) -> None:
    """caffe2-operator's `genLabels` plus its replica labels (pkg/controller), no runtime_id."""
    run = msgen("render", str(SAMPLES / CAFFE2), "--target", target, "-n", "training")
    assert run.exit_code == 0, run.stderr
    templates = pod_templates(run.objects())
    assert templates
    indexes = []
    for _, template, _ in templates:
        labels = template["metadata"]["labels"]
        job = labels["training.kubeflow.org/job-name"]
        assert labels["group_name"] == "kubeflow.org"
        assert labels["caffe2_replica_type"] == "worker"
        assert labels["caffe2_job_key"] == f"training-{job}"
        assert "runtime_id" not in labels
        # an index as a label value only where this template is one pod's
        assert ("caffe2_replica_index" in labels) == ("training.kubeflow.org/replica-index" in labels)
        indexes.append(labels.get("caffe2_replica_index"))
    if target == "pod":
        assert sorted(indexes) == [str(i) for i in range(len(templates))]


def test_caffe2_job_key_is_left_out_where_it_would_be_no_label_value() -> None:
    """A key over 63 characters would make the API server refuse every pod."""
    run = msgen("render", str(SAMPLES / CAFFE2), "--target", "pod", "-n", "n" * 60)
    assert run.exit_code == 0, run.stderr
    for _, template, _ in pod_templates(run.objects()):
        labels = template["metadata"]["labels"]
        assert "caffe2_replica_type" in labels and "caffe2_job_key" not in labels


def test_caffe2_job_key_needs_a_namespace() -> None:
    run = msgen("render", str(SAMPLES / CAFFE2), "--target", "pod")
    assert run.exit_code == 0, run.stderr
    for _, template, _ in pod_templates(run.objects()):
        labels = template["metadata"]["labels"]
        assert "caffe2_replica_type" in labels
        assert ("caffe2_job_key" in labels) == (template["metadata"].get("namespace") is not None)


SPREAD = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: spread
spec:
  msReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          affinity:
            podAntiAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                - topologyKey: kubernetes.io/hostname
                  labelSelector:
                    matchLabels: {job-name: spread, replica-type: worker}
          containers:
            - name: mindspore
              image: mindspore/mindspore:2.2.14
"""


@pytest.mark.parametrize("target", ["indexed-job", "jobset", "pod"])
def test_an_affinity_on_job_name_selects_job_pods_by_the_prefixed_label(target: str) -> None:
    run = msgen("render", "-", "--target", target, input=SPREAD)
    assert run.exit_code == 0, run.stderr
    for _, template, _ in pod_templates(run.objects()):
        term = template["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        selector = term["labelSelector"]["matchLabels"]
        labels = template["metadata"]["labels"]
        assert all(labels[k] == v for k, v in selector.items())
        if target == "pod":
            assert "job-name" in selector and "job-name=spread" not in run.stderr
        else:
            assert selector == {"training.kubeflow.org/job-name": "spread", "replica-type": "worker"}
            assert "selects by training.kubeflow.org/job-name=spread instead" in run.stderr
