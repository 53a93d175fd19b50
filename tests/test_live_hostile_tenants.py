"""Hostile tenants of a shared namespace against msgen's controller, on a real cluster.

The controller runs as a user deploys it (`overlays/controller-namespaces` with its lists
edited, the image built from this checkout: `tests/live_scoped_controller.py`), watching two
namespaces of its own run. Jobs are applied with `kubectl apply` of `msgen render`; their pods
run for real. A tenant there may create pods and Jobs of its own: it forges pods (another
job's labels, its controller reference, its run-policy copied) and Jobs carrying another
job's run-policy, and workloads whose annotations carry hostile values. The controller must
not act on any of them, and must still act on the real job. Its ServiceAccount can do what
docs/security.md says and no more, and the ValidatingAdmissionPolicies msgen ships refuse, on
this API server, what they say, and admit the controller's own writes to msgen's output.

Needs MSGEN_TEST_KUBECONFIG (and the controller's image: see tests/test_live_controller.py).
Everything it creates is in namespaces prefixed MSGEN_TEST_NAMESPACE_PREFIX, or cluster-scoped
with the run's suffix, and is deleted when the module ends.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from msgen.model import versions

from .live import (ADMISSION_POLICIES_FROM, IMAGE, admission_policies_served, get, kubectl, msgen, msjob,
                   needs_cluster, pods, release, script, wait_for, write)
from .live_scoped_controller import Deployment, Thief
from .test_controller_rbac import NEEDED
from .test_live_controller import image  # noqa: F401  (a fixture)

pytestmark = needs_cluster
JOB_LABELS = ("training.kubeflow.org/job-name", "training.kubeflow.org/replica-type",
              "training.kubeflow.org/replica-index", "app.kubernetes.io/managed-by")
POLICY = "msgen/run-policy"
#: Long enough for the controller to have seen a change and acted (it acts within a second).
SETTLE = 15


@pytest.fixture(scope="module")
def deployed(image: str) -> Iterator[Deployment]:  # noqa: F811
    yield from Deployment().running(image)


def apply_rendered(tmp_path: Path, namespace: str, name: str, text: str, *options: str) -> None:
    """`text` rendered for the cluster's release (unless `options` name one), as `msgen apply`
    would, and applied with kubectl."""
    if "--kube-version" not in options:
        options = (*options, "--kube-version", "{}.{}".format(*release()))
    out = msgen("render", str(write(tmp_path, name, text)), "-n", namespace, *options)
    assert out.exit_code == 0, out.stderr
    kubectl("apply", "-f", "-", input=out.stdout)


def create(namespace: str, obj: dict[str, Any]) -> None:
    kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(obj))


def tenant_pod(name: str, labels: dict[str, str], *, exit_code: int = 0, annotations: dict[str, str] | None = None,
               owner: dict[str, Any] | None = None) -> dict[str, Any]:
    """A pod a tenant may create: any name, labels, annotations and owner it likes."""
    metadata: dict[str, Any] = {"name": name, "labels": labels, "annotations": annotations or {}}
    if owner:
        metadata["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {
        "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "c", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                        "command": ["sh", "-c", f"exit {exit_code}"]}]}}  # fmt: skip


def phase(namespace: str, name: str) -> str:
    """The pod's phase; "" once it is gone (the controller may delete it meanwhile)."""
    done = kubectl("get", "pod", name, "-n", namespace, "-o", "jsonpath={.status.phase}", check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def present(namespace: str) -> set[str]:
    """Pods there that are not being deleted."""
    return {p["metadata"]["name"] for p in pods(namespace) if not p["metadata"].get("deletionTimestamp")}


def published(namespace: str, kind: str, name: str) -> str:
    text = (get(kind, namespace, name)["metadata"].get("annotations") or {}).get("msgen/status")
    return str(json.loads(text).get("phase")) if text else ""


# ---- what its ServiceAccount may do --------------------------------------------------------

ROW = re.compile(r"^(\S+)\s+\[(.*?)\]\s+\[(.*?)\]\s+\[(.*?)\]\s*$")


def listed(user: str, namespace: str) -> set[tuple[str, str, str]]:
    """(resource.group, resource name or "", verb) for each rule `kubectl auth can-i --list` shows."""
    out = kubectl("auth", "can-i", "--list", "-n", namespace, "--as", user).stdout
    found = set()
    for line in out.splitlines()[1:]:
        match = ROW.match(line)
        if match:
            resource, _urls, names, verbs = match.groups()
            for verb in verbs.split():
                for name in names.split() or [""]:
                    found.add((resource, name, verb))
    return found


def expected(grants: dict[tuple[str, str], set[str]]) -> set[tuple[str, str, str]]:
    return {(f"{r}.{g}" if g else r, "", v) for (g, r), verbs in grants.items() for v in verbs}


SUBRESOURCES = ("status", "exec", "log", "eviction", "token")


@functools.cache
def served_groups() -> dict[str, str]:
    """The API group of each resource the cluster serves, by plural (the core group where a
    name is served by two, as kubectl's `events`), from discovery."""
    groups: dict[str, str] = {}
    for name in kubectl("api-resources", "-o", "name").stdout.split():
        plural, _, group = name.partition(".")
        if groups.get(plural) != "":
            groups[plural] = group
    return groups


def served_group(plural: str) -> str:
    """An unqualified resource's group, as kubectl resolves it (`leases`: coordination.k8s.io);
    one the cluster does not serve (`users`, to impersonate) is the core group's."""
    return served_groups().get(plural, "")


def can(user: str, verb: str, resource: str, *where: str) -> bool:
    """What the API server's authorizer says of `user` (and a ServiceAccount's groups) doing
    `verb` on `resource`: `pods/exec` is a subresource, `leases/NAME` a resource's name;
    `where` is `-n NAMESPACE`, `--all-namespaces` or nothing (cluster scope). Asked as a
    SubjectAccessReview, as `kubectl auth can-i` does, but without its discovery, which
    answers "no" for a kind whose CRD this cluster does not serve (RBAC grants it all the same)."""
    kind, _, rest = resource.partition("/")
    plural, _, group = kind.partition(".")
    attributes = {"verb": verb, "resource": plural, "group": group if "." in kind else served_group(plural)}
    if rest:
        attributes["subresource" if rest in SUBRESOURCES else "name"] = rest
    if "-n" in where:
        attributes["namespace"] = where[where.index("-n") + 1]
    groups = ["system:authenticated"]
    if user.startswith("system:serviceaccount:"):
        groups += ["system:serviceaccounts", f"system:serviceaccounts:{user.split(':')[2]}"]
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": user, "groups": groups, "resourceAttributes": attributes}}
    answer = json.loads(kubectl("create", "-f", "-", "-o", "json", input=json.dumps(review)).stdout)
    return answer["status"].get("allowed") is True


ALLOWED = [("list", "pods"), ("watch", "pods"), ("patch", "pods"), ("delete", "pods"), ("delete", "services"),
           ("patch", "services"), ("create", "events"), ("patch", "jobs.batch"), ("delete", "jobs.batch"),
           ("patch", "statefulsets.apps"), ("patch", "jobsets.jobset.x-k8s.io"), ("patch", "jobs.batch.volcano.sh"),
           ("patch", "trainjobs.trainer.kubeflow.org"), ("create", "commands.bus.volcano.sh")]
REFUSED = [("create", "pods"), ("update", "pods"), ("get", "pods"), ("create", "pods/exec"), ("get", "pods/log"),
           ("patch", "pods/status"), ("create", "pods/eviction"), ("create", "jobs.batch"),
           ("update", "jobs.batch"), ("create", "statefulsets.apps"), ("delete", "statefulsets.apps"),
           ("patch", "deployments.apps"), ("create", "deployments.apps"), ("get", "secrets"), ("list", "secrets"),
           ("list", "configmaps"), ("create", "serviceaccounts/token"), ("create", "rolebindings"),
           ("patch", "roles"), ("delete", "jobsets.jobset.x-k8s.io"), ("delete", "jobs.batch.volcano.sh"),
           ("create", "trainjobs.trainer.kubeflow.org"), ("patch", "trainingruntimes.trainer.kubeflow.org"),
           ("update", "leases"), ("delete", "events"), ("delete", "persistentvolumeclaims"), ("patch", "commands.bus.volcano.sh")]
CLUSTER_REFUSED = [("list", "nodes"), ("patch", "nodes"), ("list", "namespaces"), ("delete", "namespaces"),
                   ("create", "clusterrolebindings"), ("create", "clusterroles"), ("escalate", "clusterroles"),
                   ("bind", "clusterroles"), ("impersonate", "users"), ("impersonate", "serviceaccounts"),
                   ("delete", "validatingadmissionpolicies"), ("patch", "validatingadmissionpolicybindings"),
                   ("list", "customresourcedefinitions"), ("create", "certificatesigningrequests"),
                   ("patch", "mutatingwebhookconfigurations")]
LEASE = {("leases.coordination.k8s.io", "msgen-controller", "get"),
         ("leases.coordination.k8s.io", "msgen-controller", "update"), ("leases.coordination.k8s.io", "", "create")}


def test_its_service_account_may_do_what_security_md_says_and_no_more(deployed: Deployment) -> None:
    """`kubectl auth can-i --list` as the controller, less what any ServiceAccount there may
    do: the table of docs/security.md in the namespaces it serves, its Lease in its own,
    nothing in another namespace nor at cluster scope; then verb by verb."""
    shared, other, system = deployed.watched[0], deployed.other, deployed.system
    anyone = f"system:serviceaccount:{shared}:default"
    for namespace, grants in ((shared, expected({k: v for k, (v, _why) in NEEDED.items()})), (other, set()),
                              (system, LEASE)):
        assert listed(deployed.user, namespace) - listed(anyone, namespace) == grants, namespace
    for verb, resource in ALLOWED:
        assert can(deployed.user, verb, resource, "-n", shared), (verb, resource)
        assert not can(deployed.user, verb, resource, "-n", other), (verb, resource, other)
        assert not can(deployed.user, verb, resource, "--all-namespaces"), (verb, resource, "all namespaces")
    for verb, resource in REFUSED:
        assert not can(deployed.user, verb, resource, "-n", shared), (verb, resource)
    for verb, resource in CLUSTER_REFUSED:
        assert not can(deployed.user, verb, resource), (verb, resource)
    assert can(deployed.user, "update", "leases/msgen-controller", "-n", system)
    assert not can(deployed.user, "update", "leases/kube-scheduler", "-n", system)
    assert not can(deployed.user, "delete", "leases/msgen-controller", "-n", system)


def test_the_cluster_wide_overlay_grants_the_same_verbs_everywhere_and_nothing_else(image: str) -> None:  # noqa: F811
    """overlays/controller (its RBAC only, in a namespace of this run): the same table in any
    namespace, nothing cluster-scoped, no other verb."""
    where = Deployment()
    documents = [d for d in where.documents(image, overlay="controller")
                 if d["kind"] in ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                                  "RoleBinding")]
    kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}))
    kubectl("create", "namespace", where.other)
    try:
        anyone = f"system:serviceaccount:{where.other}:default"
        grants = expected({k: v for k, (v, _why) in NEEDED.items()})
        wait_for("the binding to take effect", lambda: listed(where.user, where.other) - listed(anyone, where.other)
                 == grants, timeout=30)
        for verb, resource in ALLOWED:
            assert can(where.user, verb, resource, "--all-namespaces"), (verb, resource)
        for verb, resource in REFUSED:
            assert not can(where.user, verb, resource, "--all-namespaces"), (verb, resource)
        for verb, resource in CLUSTER_REFUSED:
            assert not can(where.user, verb, resource), (verb, resource)
    finally:
        kubectl("delete", "-f", "-", "--ignore-not-found", "--wait=false", check=False,
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}))
        kubectl("delete", "namespace", where.other, "--wait=false", check=False)


# ---- what the admission policies refuse, on this API server --------------------------------

NOWHERE = {"nodeSelector": {"msgen.test/no-such-node": "true"}}  # pods that never start


def status_patch() -> dict[str, Any]:
    return {"metadata": {"annotations": {"msgen/status": json.dumps({"phase": "Running"})}}}


#: The targets whose output the admission test writes to, and the custom resource each needs
#: served (a harness started without `--with trainer` has no TrainJob).
ADMISSION_TARGETS = ("pod", "indexed-job", "statefulset", "jobset", "volcano", "trainjob")
CUSTOM_RESOURCES = {"jobset": ("jobsets.jobset.x-k8s.io",), "volcano": ("jobs.batch.volcano.sh",),
                    "trainjob": ("trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org")}
#: The Job controller clears a suspended Job's startTime, so its pod's scheduling may change
#: again, from this release (MutableSchedulingDirectivesForSuspendedJobs, beta in 1.36).
MUTABLE_SUSPENDED_TEMPLATES_FROM = (1, 36)
SPEC_KEPT = "never the spec"
LABELS_KEPT = "changes no labels"
RENDERED_ONLY = "deletes only what msgen rendered"
CHANGES_RENDERED_ONLY = "changes only what msgen rendered"
ANNOTATIONS_KEPT = "changes only the annotations"
JOB_SPEC_KEPT = "changes only a Job's suspend"


def event_of(component: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The Event the controller sends on `obj` (publisher.event), from `component`."""
    from msgen.reconcile.publisher import event

    found = event(obj, "a-pod", {"phase": "Running", "conditions": []})
    found["metadata"]["name"] += f"-{component}-{time.monotonic_ns()}"
    return {**found, "source": {"component": component}}


def lease(name: str) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
            "spec": {"holderIdentity": "thief", "leaseDurationSeconds": 15}}


def policies_in_effect(thief: Thief, system: Thief, pod: dict[str, Any]) -> Callable[[], bool]:
    """Whether each policy this test relies on denies a harmless write of a token of the
    controller (a policy takes a moment to take effect, each its own): an annotation on a pod
    and on a Job, an Event of another component, a Lease of another name."""
    tries = iter(range(1, 10_000))

    def check() -> bool:
        n = next(tries)
        marked = {"metadata": {"annotations": {"msgen.test/try": str(n)}}}
        return (ANNOTATIONS_KEPT in thief.patch("v1", "Pod", "a-pod-worker-0", marked)
                and ANNOTATIONS_KEPT in thief.patch("batch/v1", "Job", "a-indexedjob-worker", marked)
                and "only its own Events" in thief.create(event_of(f"probe{n}", pod))
                and "only its own Lease" in system.create(lease(f"probe-{n}")))
    return check


def test_the_admission_policies_refuse_what_they_say_and_admit_the_controllers_writes(
        deployed: Deployment, tmp_path: Path) -> None:
    """With a token of the controller's ServiceAccount, through msgen's own client, on msgen's
    output of every target (pods that never start): each change the policies forbid is
    denied with their message (an allowlist: anything but the controller's own writes, such
    as another annotation, an ownerReference, a finalizer, a Job's TTL, resuming a Job,
    suspending a Job msgen did not render, another component's Event, another Lease), and
    the writes the controller makes (msgen/status, a Job's suspend and its marks, deleting
    what msgen rendered, CompleteJob, its Events and its Lease) are admitted."""
    if not admission_policies_served():
        pytest.skip(f"Kubernetes {'.'.join(map(str, release()))} serves no ValidatingAdmissionPolicy (from "
                    f"{'.'.join(map(str, ADMISSION_POLICIES_FROM))}): the overlay runs without admission.yaml there")
    from msgen.reconcile.actions import Action, suspend_patch, volcano_command

    ns = deployed.watched[1]
    served = set(kubectl("api-resources", "-o", "name").stdout.split())
    targets = [t for t in ADMISSION_TARGETS if set(CUSTOM_RESOURCES.get(t, ("pods",))) <= served]
    if len(targets) < len(ADMISSION_TARGETS):  # said, not hidden: the output shows what was left out
        print(f"not served here, so not checked: {sorted(set(ADMISSION_TARGETS) - set(targets))}")
    for target in targets:
        name = f"a-{target.replace('-', '')}"
        apply_rendered(tmp_path, ns, name, msjob(name, script({}), pod_extra=NOWHERE), "--target", target)
    create(ns, tenant_pod("bystander", {"team": "other"}))
    kubectl("create", "service", "clusterip", "bystander", "--tcp=80:80", "-n", ns)
    tenant_job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "tenant-job", "labels": {"team": "other"}},
                  "spec": {"template": {"spec": {**tenant_pod("x", {})["spec"], **NOWHERE}}}}
    create(ns, tenant_job)
    stolen = deployed.token_kubeconfig(tmp_path / "stolen.kubeconfig")
    thief, system = Thief(stolen, ns), Thief(stolen, deployed.system)
    new_image = [{"op": "replace", "path": "/spec/containers/0/image", "value": "evil:1"}]
    tries = iter(range(2, 1000))  # a new image each time: a patch admitted before the policies took
    # effect leaves the image changed, and the same patch again would change nothing and pass
    wait_for("the policies to take effect", lambda: SPEC_KEPT in thief.patch(
        "v1", "Pod", "a-pod-worker-0", [{**new_image[0], "value": f"evil:{next(tries)}"}], "json"), timeout=60)
    worker_pod = get("pod", ns, "a-pod-worker-0")
    wait_for("each policy to take effect", policies_in_effect(thief, system, worker_pod), timeout=60)
    volcano = get("job.batch.volcano.sh", ns, "a-volcano") if "volcano" in targets else {}
    privileged = [{"op": "add", "path": "/spec/template/spec/containers/0/securityContext",
                   "value": {"privileged": True}}]
    evil_pod = tenant_pod("evil", {"app.kubernetes.io/managed-by": "msgen"})
    evil_pod["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    # (target whose output it needs, what, the write, the refusal's words), each write made once
    refused: list[tuple[str, str, Callable[[], str], str]] = [
        ("pod", "a pod's image", lambda: thief.patch("v1", "Pod", "a-pod-worker-1", new_image, "json"), SPEC_KEPT),
        ("pod", "a pod's labels", lambda: thief.patch("v1", "Pod", "a-pod-worker-0",
                                                      {"metadata": {"labels": {"x": "y"}}}), LABELS_KEPT),
        ("indexed-job", "a Job's parallelism", lambda: thief.patch("batch/v1", "Job", "a-indexedjob-worker",
                                                                   {"spec": {"parallelism": 9}}),
         "changes only a Job's suspend"),
        ("statefulset", "a StatefulSet's template", lambda: thief.patch("apps/v1", "StatefulSet", "a-statefulset-worker",
                                                                        privileged, "json"), SPEC_KEPT),
        ("jobset", "a JobSet's spec", lambda: thief.patch("jobset.x-k8s.io/v1alpha2", "JobSet", "a-jobset",
                                                          {"spec": {"suspend": True}}), SPEC_KEPT),
        ("volcano", "a Volcano Job's spec", lambda: thief.patch("batch.volcano.sh/v1alpha1", "Job", "a-volcano",
                                                                {"spec": {"minAvailable": 1}}), SPEC_KEPT),
        ("trainjob", "a TrainJob's spec", lambda: thief.patch("trainer.kubeflow.org/v1alpha1", "TrainJob", "a-trainjob",
                                                              {"spec": {"suspend": True}}), SPEC_KEPT),
        ("pod", "a Service's labels", lambda: thief.patch("v1", "Service", "a-pod", {"metadata": {"labels": {"x": "y"}}}),
         LABELS_KEPT),
        ("pod", "deleting a pod msgen did not render", lambda: thief.delete("v1", "Pod", "bystander"), RENDERED_ONLY),
        ("pod", "deleting a Service msgen did not render", lambda: thief.delete("v1", "Service", "bystander"),
         RENDERED_ONLY),
        ("volcano", "a Volcano Command other than CompleteJob",
         lambda: thief.create(volcano_command(volcano, "AbortJob")), "only completes a Volcano Job"),
        ("pod", "creating a privileged pod", lambda: thief.create(evil_pod), "forbidden"),
        ("statefulset", "deleting a StatefulSet", lambda: thief.delete("apps/v1", "StatefulSet", "a-statefulset-worker"),
         "forbidden"),
        ("pod", "deleting a Secret", lambda: thief.delete("v1", "Secret", "anything"), "forbidden"),
        # what the policies allowed before they became a list of the controller's writes
        ("pod", "a pod's ownerReferences", lambda: thief.patch("v1", "Pod", "a-pod-worker-1", {"metadata": {
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "bystander",
                                 "uid": get("pod", ns, "bystander")["metadata"]["uid"], "controller": True}]}}),
         "changes no ownerReferences"),
        ("statefulset", "a StatefulSet's finalizers", lambda: thief.patch(
            "apps/v1", "StatefulSet", "a-statefulset-worker", {"metadata": {"finalizers": ["msgen.test/keep"]}}),
         "changes no finalizers"),
        ("indexed-job", "a Job's ttlSecondsAfterFinished", lambda: thief.patch(
            "batch/v1", "Job", "a-indexedjob-worker", {"spec": {"ttlSecondsAfterFinished": 0}}), JOB_SPEC_KEPT),
        ("indexed-job", "suspending a Job msgen did not render", lambda: thief.patch(
            "batch/v1", "Job", "tenant-job", suspend_patch(Action("suspend", "batch/v1", "Job", "tenant-job", "x"))),
         CHANGES_RENDERED_ONLY),
        ("pod", "msgen/status on a pod msgen did not render", lambda: thief.patch("v1", "Pod", "bystander",
                                                                                 status_patch()), CHANGES_RENDERED_ONLY),
        ("pod", "another annotation", lambda: thief.patch("v1", "Pod", "a-pod-worker-0", {"metadata": {
            "annotations": {"example.com/note": "x"}}}), ANNOTATIONS_KEPT),
        ("pod", "a job's run-policy", lambda: thief.patch("v1", "Pod", "a-pod-worker-0", {"metadata": {
            "annotations": {"msgen/run-policy": "{}"}}}), ANNOTATIONS_KEPT),
        ("indexed-job", "msgen/run-policy on a Job", lambda: thief.patch("batch/v1", "Job", "a-indexedjob-worker", {
            "metadata": {"annotations": {"msgen/run-policy": "{}"}}}), ANNOTATIONS_KEPT),
        ("pod", "an Event of another component", lambda: thief.create(event_of("kubelet", worker_pod)),
         "only its own Events"),
        ("volcano", "a Volcano Command to another kind", lambda: thief.create({
            **volcano_command(volcano), "target": {**volcano_command(volcano)["target"], "kind": "Queue"}}),
         "Commands to Volcano Jobs only"),
        ("pod", "creating another Lease", lambda: system.create(lease("kube-scheduler")), "only its own Lease"),
    ]
    denied = {what: (write(), why) for target, what, write, why in refused if target in targets}
    if "statefulset" in targets:  # were the finalizer admitted, the namespace could never go
        kubectl("patch", "statefulset", "a-statefulset-worker", "-n", ns, "--type=merge", "-p",
                '{"metadata": {"finalizers": null}}')
    assert {what: why for what, (said, why) in denied.items() if why not in said} == {}, denied
    suspend = suspend_patch(Action("suspend", "batch/v1", "Job", "a-indexedjob-scheduler", "test"))
    allowed: list[tuple[str, str, Callable[[], str]]] = [
        ("pod", "msgen/status on a bare Pod", lambda: thief.patch("v1", "Pod", "a-pod-worker-0", status_patch())),
        ("indexed-job", "msgen/status on a Job", lambda: thief.patch("batch/v1", "Job", "a-indexedjob-worker",
                                                                     status_patch())),
        ("indexed-job", "a Job's suspend", lambda: thief.patch("batch/v1", "Job", "a-indexedjob-scheduler", suspend)),
        ("statefulset", "msgen/status on a StatefulSet", lambda: thief.patch("apps/v1", "StatefulSet",
                                                                             "a-statefulset-worker", status_patch())),
        ("jobset", "msgen/status on a JobSet", lambda: thief.patch("jobset.x-k8s.io/v1alpha2", "JobSet", "a-jobset",
                                                                   status_patch())),
        ("volcano", "msgen/status on a Volcano Job", lambda: thief.patch("batch.volcano.sh/v1alpha1", "Job", "a-volcano",
                                                                         status_patch())),
        ("trainjob", "msgen/status on a TrainJob", lambda: thief.patch("trainer.kubeflow.org/v1alpha1", "TrainJob",
                                                                       "a-trainjob", status_patch())),
        ("pod", "msgen/status on a Service", lambda: thief.patch("v1", "Service", "a-pod", status_patch())),
        ("volcano", "CompleteJob", lambda: thief.create(volcano_command(volcano))),
        ("pod", "deleting a pod msgen rendered", lambda: thief.delete("v1", "Pod", "a-pod-worker-1")),
        ("pod", "deleting a Service msgen rendered", lambda: thief.delete("v1", "Service", "a-pod-scheduler-0")),
        ("indexed-job", "deleting a Job msgen rendered", lambda: thief.delete("batch/v1", "Job", "a-indexedjob-worker")),
    ]
    admitted = {what: write() for target, what, write in allowed if target in targets}
    assert {what: said for what, said in admitted.items() if said != "admitted"} == {}
    # Its Lease exists (the controller made it): created again, it is admitted, then refused
    # by the store as one that exists.
    assert "already exists" in system.create(lease("msgen-controller"))
    assert thief.create(event_of("msgen-controller", worker_pod)) == "admitted"
    said = thief.patch("batch/v1", "Job", "a-indexedjob-scheduler", {"spec": {"suspend": False}})
    assert "never resumes" in said, said  # suspended above: the controller never resumes a Job
    assert "bystander" in present(ns)
    # A suspended Job that has not started again may change its pod's scheduling for the API
    # server (once the Job controller cleared its startTime): not for the controller. Before
    # 1.36 (MutableSchedulingDirectivesForSuspendedJobs) a Job that started keeps its startTime
    # when suspended, so the API server itself refuses the change, before any policy.
    if release() < MUTABLE_SUSPENDED_TEMPLATES_FROM:
        pytest.skip(f"everything else checked; not the pod template of a suspended Job, which Kubernetes "
                    f"{'.'.join(map(str, release()))} keeps immutable once the Job started (the API server "
                    f"refuses the change before any policy; mutable from "
                    f"{'.'.join(map(str, MUTABLE_SUSPENDED_TEMPLATES_FROM))})")
    template = {"spec": {"template": {"spec": {"nodeSelector": {"b": "c"}}}}}
    wait_for("the API server to allow the change", lambda: kubectl(
        "patch", "job", "a-indexedjob-scheduler", "-n", ns, "--type=merge", "-p", json.dumps(template),
        "--dry-run=server", check=False).returncode == 0, timeout=60)
    said = thief.patch("batch/v1", "Job", "a-indexedjob-scheduler", template)
    assert "never changes a Job's pod template" in said, said


# ---- forged pods and workloads --------------------------------------------------------------

def labels_of(namespace: str, pod: str) -> dict[str, str]:
    found = get("pod", namespace, pod)["metadata"]["labels"]
    return {k: v for k, v in found.items() if k in JOB_LABELS}


def acted_on(deployed: Deployment, namespace: str, job: str) -> list[str]:
    return [line for line in deployed.logs().splitlines() if f"{namespace}/{job}: policy:" in line]


def test_a_forged_worker_0_does_not_end_a_bare_pod_job_and_the_real_one_does(
        deployed: Deployment, tmp_path: Path) -> None:
    """A tenant's pod with worker 0's labels and its run-policy annotation copied, which
    succeeds: the job keeps running, none of its pods is deleted, no verdict is published;
    then the job's own worker 0 succeeds and the controller ends the job (cleanPodPolicy
    Running), leaving the tenant's pod alone."""
    ns = deployed.watched[0]
    apply_rendered(tmp_path, ns, "vb", msjob("vb", script({0: (45, 0)}, default=(600, 0))), "--target", "pod")
    copied = {POLICY: get("pod", ns, "vb-worker-0")["metadata"]["annotations"][POLICY]}
    create(ns, tenant_pod("not-yours", labels_of(ns, "vb-worker-0"), annotations=copied))
    wait_for("the forged pod to succeed", lambda: phase(ns, "not-yours") == "Succeeded")
    time.sleep(SETTLE)
    assert phase(ns, "vb-worker-0") != "Succeeded", "too slow a node: worker 0 ended before the check"
    assert present(ns) >= {"vb-scheduler-0", "vb-worker-0", "vb-worker-1", "not-yours"}
    assert published(ns, "pod", "vb-worker-0") in ("", "Created", "Running")
    assert acted_on(deployed, ns, "vb") == []
    wait_for("the job's own worker 0 to end it", lambda: present(ns) & {"vb-scheduler-0", "vb-worker-1"} == set(),
             timeout=240)
    assert published(ns, "pod", "vb-worker-0") == "Succeeded"
    assert "not-yours" in present(ns)
    lines = acted_on(deployed, ns, "vb")
    assert sorted(line.split("policy: ")[1].split(":")[0] for line in lines) == [
        "delete Pod vb-scheduler-0", "delete Pod vb-worker-1"], lines


def test_a_forged_pod_or_job_does_not_end_an_indexed_job_and_the_real_one_does(
        deployed: Deployment, tmp_path: Path) -> None:
    """Against Indexed Jobs: a tenant's pod with worker 0's labels and a controller reference
    to the job's Worker Job (copied from it), which succeeds; and a tenant's Job carrying the
    job's labels and its run-policy annotation copied, whose worker-0 pod fails. Neither ends
    the job nor suspends its Jobs; the job's own worker 0 then does."""
    ns = deployed.watched[0]
    apply_rendered(tmp_path, ns, "vi", msjob("vi", script({0: (60, 0)}, default=(600, 0))))
    worker = get("job", ns, "vi-worker")
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "vi-worker", "uid": worker["metadata"]["uid"],
             "controller": True}
    labels = {"training.kubeflow.org/job-name": "vi", "training.kubeflow.org/replica-type": "worker",
              "training.kubeflow.org/replica-index": "0", "app.kubernetes.io/managed-by": "msgen"}
    create(ns, tenant_pod("owned-by-you", labels, owner=owner))
    forged_job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "vi-tenant", "labels": {k: labels[k] for k in (JOB_LABELS[0], JOB_LABELS[3])},
        "annotations": {POLICY: worker["metadata"]["annotations"][POLICY]}},
        "spec": {"completionMode": "Indexed", "completions": 1, "parallelism": 1, "backoffLimit": 0,
                 "template": {"metadata": {"labels": labels}, "spec": tenant_pod("x", {}, exit_code=1)["spec"]}}}
    create(ns, forged_job)
    wait_for("the forged pod to succeed", lambda: phase(ns, "owned-by-you") == "Succeeded")
    wait_for("the forged Job to fail", lambda: any(
        c["type"] == "Failed" and c["status"] == "True"
        for c in (get("job", ns, "vi-tenant").get("status") or {}).get("conditions") or []))
    time.sleep(SETTLE)
    jobs = {name: get("job", ns, name) for name in ("vi-scheduler", "vi-worker")}
    assert not any(j["spec"].get("suspend") for j in jobs.values()), "the forgery stopped the job"
    assert published(ns, "job", "vi-worker") in ("", "Created", "Running")
    assert acted_on(deployed, ns, "vi") == []
    wait_for("the job's own worker 0 to end it", lambda: get("job", ns, "vi-scheduler")["spec"].get("suspend"),
             timeout=300)
    assert published(ns, "job", "vi-worker") == "Succeeded", (
        get("job", ns, "vi-worker")["metadata"]["annotations"].get("msgen/status"),
        [(p["metadata"]["name"], (p.get("status") or {}).get("phase"), p["metadata"].get("ownerReferences"))
         for p in pods(ns)])
    # From 1.31 the Worker Job ends itself when worker 0 succeeds (its successPolicy); before,
    # the controller stops the other workers by suspending it too.
    by_itself = versions.enabled("JobSuccessPolicy", release())
    assert [line.split("policy: ")[1].split(":")[0] for line in acted_on(deployed, ns, "vi")] == [
        "suspend Job vi-scheduler", *([] if by_itself else ["suspend Job vi-worker"])]
    assert "owned-by-you" in present(ns) and get("job", ns, "vi-tenant")


def hostile_policy(job: str, replicas: float = 1, **more: Any) -> str:
    return json.dumps({"job": job, "target": "pod", "successPolicy": "Worker0", "cleanPodPolicy": "All",
                       "roles": {"Worker": {"replicas": replicas, "restartPolicy": "Never"}}, **more},
                      sort_keys=True, separators=(",", ":"))


def test_hostile_annotations_make_the_controller_delete_nothing_outside_their_job(
        deployed: Deployment, tmp_path: Path) -> None:
    """A tenant's bare Pods whose run-policy claims two billion or Infinity workers, is JSON
    nested 100,000 deep, names another tenant's job, a worker that job does not have, or a
    job name of control characters, with
    TTL 0 and cleanPodPolicy All, and a 200 KB annotation of control characters: once they
    end, nothing of another job, nor any other object, is deleted (a tenant's own
    consistent job loses its own pods only); the controller neither restarts nor prints a
    control character, and still carries out a real job's policy."""
    ns = deployed.watched[0]
    apply_rendered(tmp_path, ns, "vh", msjob("vh", script({}, default=(600, 0))), "--target", "pod")
    kubectl("create", "service", "clusterip", "bystander", "--tcp=80:80", "-n", ns)
    create(ns, tenant_pod("bystander", {"team": "other"}))
    noise = "".join(chr(c) for c in range(1, 32) if c != 10) + "\x7f\u2028\u202e"
    hostile = {
        "huge-worker-0": ("huge", hostile_policy("huge", replicas=2_000_000_000, ttlSecondsAfterFinished=0)),
        "evil-worker-0": ("evil", hostile_policy("vh", ttlSecondsAfterFinished=0)),
        "vh-worker-7": ("vh", hostile_policy("vh", replicas=8, ttlSecondsAfterFinished=0)),
        "ctl-worker-0": ("ctl", hostile_policy("ctl\x1b[2J\r\n" + noise, ttlSecondsAfterFinished=0)),
        "big-worker-0": ("big", hostile_policy("big", ttlSecondsAfterFinished=0)),
        "inf-worker-0": ("inf", hostile_policy("inf", replicas=float("inf"))),  # JSON's Infinity
        "deep-worker-0": ("deep", "[" * 100_000 + "]" * 100_000),
    }
    for name, (job, policy) in hostile.items():
        labels = {JOB_LABELS[0]: job, JOB_LABELS[1]: "worker", JOB_LABELS[2]: name.rsplit("-", 1)[1],
                  JOB_LABELS[3]: "msgen"}
        annotations = {POLICY: policy, "msgen/status": noise * 3}
        if job == "big":
            annotations["x"] = (noise * 8000)[:200_000]
        create(ns, tenant_pod(name, labels, annotations=annotations))
    for name in hostile:
        def ended(name: str = name) -> bool:
            return phase(ns, name) in ("Succeeded", "")

        wait_for(f"{name} to end", ended)
    time.sleep(SETTLE)
    kept = {"vh-scheduler-0", "vh-worker-0", "vh-worker-1", "bystander"}
    assert present(ns) >= kept, kept - present(ns)
    services = {s["metadata"]["name"] for s in get("services", ns) if not s["metadata"].get("deletionTimestamp")}
    assert {"vh", "vh-scheduler-0", "bystander"} <= services
    assert deployed.restarts() == 0
    not_rendered = {"evil-worker-0", "vh-worker-7", "ctl-worker-0", "inf-worker-0", "deep-worker-0"}
    assert present(ns) & not_rendered == not_rendered, "a policy msgen did not render was carried out"
    # A tenant's own jobs (their policy and names agree), TTL 0: their own pods go, nothing else.
    wait_for("the tenant's own jobs to end", lambda: not present(ns) & {"huge-worker-0", "big-worker-0"}, timeout=60)
    assert present(ns) >= kept and present(ns) & not_rendered == not_rendered
    said = deployed.logs()
    assert not any(c in said for c in "\x1b\r\x7f\u2028\u202e"), "a control character reached the log"
    apply_rendered(tmp_path, ns, "alive", msjob("alive", script({0: (5, 0)}, default=(600, 0))), "--target", "pod")
    wait_for("the controller to end a real job still", lambda: present(ns) & {"alive-scheduler-0", "alive-worker-1"}
             == set() and "alive-worker-0" in present(ns), timeout=240)


def test_the_admission_policies_never_refused_the_controller(deployed: Deployment) -> None:
    """Last in the module: every write the controller made above (statuses, Events,
    suspensions, deletions, under the policies of its own overlay) was admitted."""
    if not admission_policies_served():
        pytest.skip(f"Kubernetes {'.'.join(map(str, release()))} serves no ValidatingAdmissionPolicy (from "
                    f"{'.'.join(map(str, ADMISSION_POLICIES_FROM))}): the overlay runs without admission.yaml there")
    said = deployed.logs()
    assert "policy: " in said
    assert not any(word in said for word in ("forbidden", "denied", "ValidatingAdmissionPolicy")), said
