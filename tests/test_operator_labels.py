"""Each kind's pods carry the labels its operator gave them, read from the rendered objects.

kubeflow/common-based operators (`GenLabels`, `SetReplicaType`, `IsMasterRole`): ms-operator
(`msjob-controller`), ascend-operator (`ascendjob-controller`, Scheduler is master),
training-operator's MXJob (`mxjob-controller`, Servers are master). The older operators did
not use kubeflow/common, and their kinds get msgen's labels only.
"""

from __future__ import annotations

import pytest

from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen
from .test_mindspore_contract import pod_templates

KUBEFLOW_COMMON = {
    "mindspore/widedeep-ps.yaml": ("mindspore.gitee.com", "msjob-controller", set()),
    "ascend/mindspore-acjob.yaml": ("mindxdl.gitee.com", "ascendjob-controller", {"scheduler"}),
    "mxnet/mxjob-gpu-workers.yaml": ("kubeflow.org", "mxjob-controller", {"server"}),
}
OLDER = ["mxnet/mx-job-dist.yaml", "caffe2/resnet50-redis.yaml", "mindspore-legacy/msjob-mnist-dist.yaml"]


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
