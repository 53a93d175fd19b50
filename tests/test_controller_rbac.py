"""The controller's access is what its policies need, no more: read from the overlay as built.

RBAC names verbs on kinds: each write the ClusterRole grants is in the table below with the
policy that needs it, and nothing else is granted (no wildcard, no create of pods or
workloads). RBAC cannot say which fields a patch may change, so every kind the controller may
patch is guarded by a ValidatingAdmissionPolicy for its ServiceAccount that keeps the spec (a
batch Job's pod template) and labels as they were; its deletes are limited to objects msgen
rendered, and its Volcano Commands to CompleteJob. The live check (a token of the controller
cannot change an image nor create a pod) is at the end; it needs MSGEN_TEST_KUBECONFIG.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ROOT, kustomize_binary

#: Spread over the Pythons CI runs: its time is the real kustomize's (tests/python_share.py).
pytestmark = pytest.mark.spread

#: (API group, resource) -> the verbs the controller's ClusterRole grants, and why.
NEEDED = {
    ("", "pods"): ({"list", "watch", "patch", "delete"}, "cleanPodPolicy, TTL; msgen/status on bare Pods"),
    ("", "services"): ({"list", "watch", "patch", "delete"}, "a bare-Pod job's TTL; msgen/status"),
    ("", "events"): ({"create"}, "JobRunning, JobSucceeded, ... Events"),
    ("batch", "jobs"): ({"list", "watch", "patch", "delete"}, "suspend at the end; TTL of a suspended Job"),
    ("apps", "statefulsets"): ({"list", "watch", "patch"}, "msgen/status"),
    ("jobset.x-k8s.io", "jobsets"): ({"list", "watch", "patch"}, "msgen/status"),
    ("batch.volcano.sh", "jobs"): ({"list", "watch", "patch"}, "msgen/status"),
    ("trainer.kubeflow.org", "trainjobs"): ({"list", "watch", "patch"}, "msgen/status"),
    ("bus.volcano.sh", "commands"): ({"create"}, "CompleteJob when worker 0 succeeded"),
}  # fmt: skip
READ = {"get", "list", "watch"}


def built(overlay: str) -> list[dict[str, Any]]:
    binary = kustomize_binary()
    if binary is None:
        pytest.skip("kustomize is not installed (.ci/fetch-kustomize installs it)")
    text = subprocess.run([binary, "build", str(ROOT / "overlays" / overlay)], capture_output=True, text=True,
                          check=True, timeout=60).stdout  # fmt: skip
    return [d for d in yaml.safe_load_all(text) if d]


def grants(documents: list[dict[str, Any]], kind: str = "ClusterRole") -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for role in (d for d in documents if d["kind"] == kind):
        for rule in role["rules"]:
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    found.setdefault((group, resource), set()).update(rule["verbs"])
    return found


def user(documents: list[dict[str, Any]]) -> str:
    account = next(d for d in documents if d["kind"] == "ServiceAccount")
    return f"system:serviceaccount:{account['metadata']['namespace']}:{account['metadata']['name']}"


def guards(documents: list[dict[str, Any]], operation: str) -> dict[tuple[str, str], list[str]]:
    """(group, resource) -> the validations of the bound policies that hold the controller's
    requests of `operation` there."""
    bound = {d["spec"]["policyName"] for d in documents if d["kind"] == "ValidatingAdmissionPolicyBinding"
             and "Deny" in d["spec"]["validationActions"]}  # fmt: skip
    found: dict[tuple[str, str], list[str]] = {}
    for policy in (d for d in documents if d["kind"] == "ValidatingAdmissionPolicy"):
        conditions = [c["expression"] for c in policy["spec"].get("matchConditions") or []]
        if policy["metadata"]["name"] not in bound or conditions != [f'request.userInfo.username == "{user(documents)}"']:
            continue
        assert policy["spec"]["failurePolicy"] == "Fail"
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]:
            if operation in rule["operations"]:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        found.setdefault((group, resource), []).extend(
                            " ".join(v["expression"].split()) for v in policy["spec"]["validations"])
    return found


@pytest.mark.parametrize("overlay", ["controller", "controller-namespaces"])
def test_the_controller_may_do_what_its_policies_need_and_no_more(overlay: str) -> None:
    documents = built(overlay)
    granted = grants(documents)
    assert granted == {key: verbs for key, (verbs, _why) in NEEDED.items()}
    assert not any("*" in key or "*" in verbs for key, verbs in granted.items())
    lease = grants(documents, "Role")
    assert lease == {("coordination.k8s.io", "leases"): {"get", "update", "create"}}


MANAGED = 'oldObject.metadata.labels["app.kubernetes.io/managed-by"] == "msgen"'
UNCHANGED = "has(object.{0}) == has(oldObject.{0}) && (!has(object.{0}) || object.{0} == oldObject.{0})"


def written_annotations(key: tuple[str, str]) -> set[str]:
    """The annotations the controller writes on objects of `key` (group, resource): its
    published status everywhere, and what a suspension says on a batch Job."""
    from msgen.reconcile import actions, published

    found = {published.ANNOTATION}
    if key == ("batch", "jobs"):
        patch = actions.suspend_patch(actions.Action("suspend", "batch/v1", "Job", "j", "why", "t", generation="1"))
        found |= set(patch["metadata"]["annotations"])
    return found


def allowed_annotations(validations: list[str]) -> set[str]:
    """The annotation keys an update may change, read from the validation that lists them
    (both of its lists: added or changed, and removed)."""
    import re

    lists = [re.findall(r"k in \[(.*?)\]", v) for v in validations if "metadata.annotations.all(" in v]
    assert len(lists) == 1 and len(lists[0]) == 2 and lists[0][0] == lists[0][1], lists
    return set(json.loads(f"[{lists[0][0]}]"))


#: JobSpec fields a policy cannot name, as not every API server it runs on knows them (a
#: policy naming a field its server's schema lacks does not compile): the admission test says so.
NOT_NAMED = {"scheduling": "Kubernetes 1.37"}


def job_spec_fields(newest: bool = False) -> set[str]:
    """batch/v1 JobSpec's fields at every Kubernetes version a ValidatingAdmissionPolicy is
    served in (1.30 on), from kubernetes-validate's schemas (`newest`: at the newest)."""
    import kubernetes_validate

    from msgen.model import versions

    base = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    each = [set(json.loads((base / f"v1.{minor}.0-local-strict" / "jobspec-batch-v1.json").read_text())["properties"])
            for minor in range(30, versions.NEWEST[1] + 1)]
    assert len(each) >= 8
    return each[-1] if newest else set.intersection(*each)


@pytest.mark.parametrize("overlay", ["controller", "controller-namespaces"])
def test_every_write_rbac_cannot_narrow_is_narrowed_by_admission(overlay: str) -> None:
    """An allowlist: each update the controller may make changes only an object msgen
    rendered, only the annotations it writes there (msgen/status; a Job's suspension marks),
    no label, ownerReference or finalizer, nothing of the spec (a Job: its `suspend`, to
    true only, every other field of JobSpec at every version compared); it deletes only
    what msgen rendered, and creates only its own Events, Lease and CompleteJob Commands."""
    documents = built(overlay)
    granted = {**grants(documents), **grants(documents, "Role")}
    updates, deletes, creates = guards(documents, "UPDATE"), guards(documents, "DELETE"), guards(documents, "CREATE")
    for key, verbs in granted.items():
        if verbs & {"patch", "update"} and key != ("coordination.k8s.io", "leases"):  # its Lease: by name in RBAC
            found = updates.get(key, [])
            assert any(MANAGED in v for v in found), f"{key}: it could change what msgen did not render"
            assert allowed_annotations(found) == written_annotations(key), key
            for field in ("metadata.labels", "metadata.ownerReferences", "metadata.finalizers"):
                assert UNCHANGED.format(field) in " && ".join(found), f"{key}: a patch could change {field}"
            if key == ("batch", "jobs"):
                kept = {field for field in job_spec_fields() if UNCHANGED.format(f"spec.{field}") in " && ".join(found)}
                kept |= {"template"} if "object.spec.template == oldObject.spec.template" in found else set()
                assert job_spec_fields() - kept == {"suspend"}, "a patch could change these fields of a Job"
                assert job_spec_fields(newest=True) - kept == {"suspend", *NOT_NAMED}
                assert ("(has(object.spec.suspend) && object.spec.suspend) || (has(object.spec.suspend) && "
                        "object.spec.suspend) == (has(oldObject.spec.suspend) && oldObject.spec.suspend)") in found
            else:
                assert "object.spec == oldObject.spec" in found, f"{key}: a patch could change its spec"
        if "delete" in verbs:
            assert any(MANAGED in v for v in deletes.get(key, [])), f"{key}: it could delete what msgen did not render"
        if "create" in verbs:
            assert creates.get(key), f"{key}: it could create anything of it"
    assert creates[("bus.volcano.sh", "commands")][0] == 'object.action == "CompleteJob"'
    assert 'object.source.component == "msgen-controller"' in creates[("", "events")][0]
    assert creates[("coordination.k8s.io", "leases")] == ['object.metadata.name == "msgen-controller"']
    for document in documents:
        if document["apiVersion"].startswith("admissionregistration.k8s.io/"):
            assert "namespace" not in document["metadata"], "cluster-scoped"


def test_the_controllers_lease_is_the_one_the_admission_policy_admits() -> None:
    """`--lease-name` in the Deployment and the name the Lease policy admits agree."""
    documents = built("controller")
    args = next(d for d in documents if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert creates_lease(documents) == f'object.metadata.name == "{args[args.index("--lease-name") + 1]}"'


def creates_lease(documents: list[dict[str, Any]]) -> str:
    return guards(documents, "CREATE")[("coordination.k8s.io", "leases")][0]


def test_the_admission_policies_are_valid_kubernetes_from_1_30() -> None:
    import kubernetes_validate

    from msgen.model import versions

    documents = [d for d in built("controller") if d["apiVersion"].startswith("admissionregistration.k8s.io/")]
    assert len(documents) == 12
    for minor in range(30, versions.NEWEST[1] + 1):
        for document in documents:
            kubernetes_validate.validate(document, f"1.{minor}", strict=True)


# ---- against a real API server --------------------------------------------------------------

KUBECONFIG = os.environ.get("MSGEN_TEST_KUBECONFIG")


@pytest.mark.skipif(not KUBECONFIG, reason="MSGEN_TEST_KUBECONFIG names no API server to test against")
def test_live_the_controllers_token_cannot_change_an_image_nor_create_a_pod(tmp_path: Path) -> None:
    """The overlay's RBAC and policies applied (moved into namespaces of their own, its
    cluster-scoped objects suffixed: tests/live_scoped_controller.py); with a token of the
    controller's ServiceAccount, through msgen's own client (kubectl patch reads the object
    first, which the controller may not): creating a privileged pod is forbidden, changing a
    pod's image or a StatefulSet's template is denied, writing msgen/status is admitted."""
    from .live import kubectl, wait_for
    from .live_scoped_controller import Deployment, Thief

    served = kubectl("api-resources", "--api-group=admissionregistration.k8s.io", "-o", "name").stdout
    if "validatingadmissionpolicies" not in served:
        pytest.skip("the cluster serves no ValidatingAdmissionPolicy (Kubernetes before 1.30)")
    where = Deployment()
    documents = [d for d in where.documents("unused", overlay="controller") if d["kind"] != "Deployment"]
    where.apply(documents)
    namespace = where.watched[0]
    try:
        nowhere = {"nodeSelector": {"msgen.test/no-such-node": "true"}}
        template = {"metadata": {"labels": {"app": "victim"}},
                    "spec": {**nowhere, "containers": [{"name": "c", "image": "busybox:1"}]}}
        victims: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "victim", "labels": {
                        "app.kubernetes.io/managed-by": "msgen"}}, "spec": template["spec"]},
                   {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "victim", "labels": {
                        "app.kubernetes.io/managed-by": "msgen"}},
                    "spec": {"serviceName": "victim", "selector": {"matchLabels": {"app": "victim"}},
                             "replicas": 0, "template": template}}]  # fmt: skip
        kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                       "items": victims}))
        thief = Thief(where.token_kubeconfig(tmp_path / "stolen.kubeconfig"), namespace)
        tries = iter(range(1, 1000))

        def denied() -> str | None:
            # a new image each time: a patch the policy admitted before it took effect (a
            # policy takes a moment) leaves the image changed, and the same patch again
            # would change nothing and be admitted however long one waited
            image = [{"op": "replace", "path": "/spec/containers/0/image", "value": f"evil:{next(tries)}"}]
            found = thief.patch("v1", "Pod", "victim", image, "json")
            return found if "never the spec" in found else None

        said = wait_for("the policies to take effect", denied, timeout=60)
        assert "msgen's controller changes only annotations" in said, said
        privileged = {**victims[0], "metadata": {"name": "evil"},
                      "spec": {**nowhere, "containers": [{"name": "c", "image": "busybox:1",
                                                          "securityContext": {"privileged": True}}]}}
        assert "forbidden" in thief.create(privileged)
        escalated = [{"op": "add", "path": "/spec/template/spec/containers/0/securityContext",
                      "value": {"privileged": True}}]
        assert "never the spec" in thief.patch("apps/v1", "StatefulSet", "victim", escalated, "json")
        status = {"metadata": {"annotations": {"msgen/status": "{}"}}}
        assert thief.patch("v1", "Pod", "victim", status) == "admitted"
    finally:
        where.delete(documents)
