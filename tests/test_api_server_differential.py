"""Differential test: whatever msgen renders with exit 0, a real API server accepts.

Generated inputs (structure-aware mutations of the samples and the operators' files, across
every target, several --kube-version values and gang schedulers: `tests/mutations.py`) are
rendered; every object of every exit-0 render, and what the workload controllers would
create from it (a JobSet's Jobs, each workload's first pod: `dry_run.made_by_controllers`),
is created with a server-side dry run on the cluster named by MSGEN_TEST_KUBECONFIG, after
the upstream CRDs (../shared/crds) are installed there. Any object the server refuses fails
the test, with the input that made it.

The server is one Kubernetes release: an input drawn for a newer --kube-version is rendered
for the server's own instead (a newer release's rules can only be checked offline, by
tests/test_api_server_rules.py and the property campaign), and for older ones the server is a
lenient judge (what an older release refuses and a newer one accepts is checked offline too).
Custom resources whose CRD the server's release cannot serve (the add-on says so:
`upstream_crds.SERVED_FROM`) are not sent; what their controllers would make from them is. Refusals that come from the test
namespace lacking an object a pod names (a ServiceAccount, a PriorityClass) are counted, not
failures: they are about the cluster, not the object.

MSGEN_DIFFERENTIAL_INPUTS (default 300) sets how many inputs; the issue's campaign ran
10,000+ (docs/development.md gives the command).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import uuid
from collections import Counter
from typing import Any, Iterator, NamedTuple
from unittest import mock

import pytest
import yaml

from msgen import compile_documents

from .upstream_crds import crd_file, refused_for_its_release
from .dry_run import ENVIRONMENT, ApiServer, judged
from .mutations import RandomChooser, generate, seeds

KUBECONFIG = os.environ.get("MSGEN_TEST_KUBECONFIG")
pytestmark = pytest.mark.skipif(
    not KUBECONFIG,
    reason="MSGEN_TEST_KUBECONFIG names no API server: this test dry-runs msgen's output on a real one",
)
INPUTS = int(os.environ.get("MSGEN_DIFFERENTIAL_INPUTS", "300"))
SEED = int(os.environ.get("MSGEN_DIFFERENTIAL_SEED", "22"))
CRDS = ("jobset.x-k8s.io_jobsets.yaml", "batch.volcano.sh_jobs.yaml",
        "scheduling.volcano.sh_podgroups.yaml", "scheduling.x-k8s.io_podgroups.yaml",
        "trainer.kubeflow.org_trainjobs.yaml", "trainer.kubeflow.org_trainingruntimes.yaml")  # fmt: skip


def kubectl(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH: it installs the CRDs and the namespace")
    return subprocess.run([binary, "--kubeconfig", str(KUBECONFIG), *args], capture_output=True,
                          text=True, check=check, timeout=120)  # fmt: skip


#: What the server answers while another client of the cluster has deleted a CRD: not a
#: verdict on the object. The CRDs are installed again and the object is sent again.
CRD_GONE = ("404 page not found", "custom resource definition is terminating")


def install_crds(release: tuple[int, int]) -> dict[tuple[str, str], str]:
    """The CRDs, cluster-wide and shared: applied (idempotent), never deleted here. One the
    cluster serves already is left as it is: its controller installed it (the live harness's
    JobSet or Volcano), and ../shared's copy of it may be older. Returns the custom resources
    this release cannot serve, (group, kind) -> why: its API server refused their CRD as the
    add-on says it must (`upstream_crds.SERVED_FROM`); any other refusal fails."""
    unserved: dict[tuple[str, str], str] = {}
    installed = []
    for crd in CRDS:
        document = yaml.safe_load(crd_file(crd).read_text())
        name = document["metadata"]["name"]
        installed.append(crd)
        if subprocess.run([str(shutil.which("kubectl")), "--kubeconfig", str(KUBECONFIG), "get", "crd", name],
                          capture_output=True).returncode == 0:
            continue
        for _ in range(30):  # a CRD being deleted by another client cannot be applied yet
            done = subprocess.run([str(shutil.which("kubectl")), "--kubeconfig", str(KUBECONFIG),
                                   "apply", "--server-side", "--field-manager=msgen-tests", "-f",
                                   str(crd_file(crd))], capture_output=True, text=True)  # fmt: skip
            if done.returncode == 0:
                break
            why = refused_for_its_release(crd, release, done.stderr)
            if why is not None:
                unserved[(document["spec"]["group"], document["spec"]["names"]["kind"])] = why
                installed.pop()
                break
            time.sleep(2)
    for crd in installed:
        kubectl("wait", "--for=condition=Established", "--timeout=60s", "-f", str(crd_file(crd)))
    return unserved


class Server(NamedTuple):
    api: ApiServer
    namespace: str
    #: (group, kind) -> why this release cannot serve it: its objects are not sent
    unserved: dict[tuple[str, str], str]


def group_kind(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["apiVersion"].rpartition("/")[0], obj["kind"]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH: it installs the CRDs and the namespace")
    api = ApiServer(str(KUBECONFIG))
    namespace = f"msgen-differential-{uuid.uuid4().hex[:8]}"
    try:
        unserved = install_crds(api.version())
        kubectl("create", "namespace", namespace)
        yield Server(api, namespace, unserved)
    finally:
        api.close()
        kubectl("delete", "namespace", namespace, "--wait=false", check=False)


#: msgen refuses these although the server accepts them, on purpose (see the rules).
#: An entry is a part of msgen's error (`<field path>: <message>`), or parts that must all be in it.
DELIBERATELY_STRICTER: tuple[str | tuple[str, ...], ...] = (
    "it is negative",  # a negative PodGroup minResources: the CRD's pattern allows a sign
    "so there is nothing to render",  # an empty output: a generator host would prune
    "so there is nothing to run",  # every role at replicas: 0, the same
    # an emptyDir medium the kubelet cannot mount: the API server does not check it
    "accepted: Memory, HugePages, HugePages-<size>, or empty",
    # a template's invalid host name or subdomain, which target statefulset replaces (the
    # template is refused on every other target)
    "subdomain '", "hostname '",
    # an init container's restartPolicy (a sidecar) before 1.29: the server drops the field (its
    # gate is off), and the sidecar would run to its end before the pod's containers start
    "init containers with restartPolicy (sidecars) need Kubernetes",
    # a PodGroup's minResources key that no pod could request (its CRD does not check the keys)
    ("minResources.", "resource name '"),
)


def _stricter_on_purpose(error: str) -> bool:
    return any(all(part in error for part in ((why,) if isinstance(why, str) else why)) for why in DELIBERATELY_STRICTER)


class Campaign:
    """The generated inputs, what msgen made of them, and the server's verdicts."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.refused: list[dict[str, Any]] = []
        self.over_strict: list[dict[str, Any]] = []
        self.summary: dict[str, Any] = {}


def _render_unchecked(text: str, options: Any) -> Any:
    """What msgen would write for `text` without the API-server rules (`msgen.checks.apirules`)."""
    from msgen.checks import apirules

    # Each call is a compile session of its own: no template is remembered from a call with
    # the rules.
    with mock.patch.object(apirules, "check_template", lambda *a, **k: []), \
            mock.patch.object(apirules, "check_plan", lambda *a, **k: []):  # fmt: skip
        return compile_documents(text, "job.yaml", options)


def _in_idle_roles(text: str, errors: list[Any]) -> bool:
    """Whether every error is in the pod template of a role with replicas: 0, which targets
    leave out (msgen checks it anyway: the template is refused as soon as the role runs)."""
    job = yaml.safe_load(text)
    for error in errors:
        head, found, _ = error.field_path.partition(".template")
        node: Any = job
        for part in re.findall(r"[^.\[\]]+", head) if found else []:
            node = node[int(part)] if isinstance(node, list) else (node or {}).get(part)
        if not found or not isinstance(node, dict) or node.get("replicas") != 0:
            return False
    return True


@pytest.fixture(scope="module")
def campaign(server: Server, request: pytest.FixtureRequest) -> Campaign:  # noqa: C901 - the campaign's steps: generate, render, dry-run, compare, report
    api, namespace, unserved = server
    cluster = api.version()
    pool = seeds()
    chooser = RandomChooser(SEED)
    result = Campaign()
    counts = result.counts
    started = time.monotonic()
    render_seconds = 0.0
    batch: list[tuple[dict[str, Any], dict[str, Any]]] = []
    probes: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []

    def verdicts_for(objects: list[dict[str, Any]]) -> list[tuple[int, str]]:
        verdicts = api.dry_run_all(objects, namespace)
        for _ in range(3):
            if not any(any(gone in message for gone in CRD_GONE) for _, message in verdicts):
                break
            counts["batches sent again after another client deleted a CRD"] += 1
            install_crds(cluster)
            api.forget(lambda verdict: any(gone in verdict[1] for gone in CRD_GONE))
            verdicts = api.dry_run_all(objects, namespace)
        return verdicts

    def judge() -> None:
        verdicts = verdicts_for([obj for obj, _ in batch])
        for (obj, origin), (status, message) in zip(batch, verdicts, strict=True):
            counts["objects judged"] += 1
            if status >= 300 and any(reason in message for reason in ENVIRONMENT):
                counts["refused for the namespace's missing objects"] += 1
            elif status >= 300:
                result.refused.append({**origin, "object": f"{obj['kind']} {obj['metadata']['name']}",
                                       "status": status, "server": message})  # fmt: skip
        batch.clear()

    for _ in range(INPUTS):
        seed_name, text, options = generate(chooser, pool)
        if options.kube_version > cluster:
            options = options._replace(kube_version=cluster)
            counts["drawn for a newer release, rendered for the cluster's"] += 1
        origin = {"seed": seed_name, "options": options._asdict(), "input": text}
        counts["inputs"] += 1
        began = time.monotonic()
        compilation = compile_documents(text, "job.yaml", options)
        render_seconds += time.monotonic() - began
        if not compilation.ok or not compilation.objects:
            counts["exit 1"] += 1
            if options.kube_version == cluster:  # would the server have refused it too?
                unchecked = _render_unchecked(text, options)
                errors = [d for d in compilation.diagnostics if d.is_error]
                if unchecked.ok and unchecked.objects and _in_idle_roles(text, errors):
                    counts["exit 1 for a template of a role with replicas: 0 (not written)"] += 1
                elif unchecked.ok and unchecked.objects:
                    probes.append((unchecked.objects, {**origin, "msgen": [f"{d.field_path}: {d.message}" for d in errors]}))
            continue
        counts["exit 0"] += 1
        for obj in compilation.objects:
            for made in judged(obj):
                if group_kind(made) in unserved:
                    counts[f"objects not sent: {made['kind']}, a kind this release cannot serve"] += 1
                else:
                    batch.append((made, origin))
        if len(batch) >= 400:
            judge()
    judge()
    for objects, origin in probes:
        counts["exit 1 for an API-server rule, probed"] += 1
        everything = [o for obj in objects for o in judged(obj)]
        if any(group_kind(o) in unserved for o in everything):
            counts["exit 1, probe inconclusive (an object of a kind this release cannot serve)"] += 1
            continue
        verdicts = verdicts_for(everything)
        if any(any(r in message for r in ENVIRONMENT) for _, message in verdicts):
            counts["exit 1, probe inconclusive (a pod names an object the namespace lacks)"] += 1
        elif all(status < 300 for status, _ in verdicts):
            if any(_stricter_on_purpose(e) for e in origin["msgen"]):
                counts["exit 1, accepted by the server, deliberately"] += 1
            else:
                result.over_strict.append(origin)
    result.summary = {**counts, "dry-run requests": api.requests, "render seconds": round(render_seconds, 1),
                      "total seconds": round(time.monotonic() - started, 1),
                      "refused": len(result.refused), "over-strict": len(result.over_strict),
                      "kinds not served": sorted(kind for _, kind in unserved)}  # fmt: skip
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"differential test: {json.dumps(result.summary)}")
    report = os.environ.get("MSGEN_DIFFERENTIAL_REPORT")
    if report:
        with open(report, "w", encoding="utf-8") as stream:
            json.dump(result.__dict__, stream, indent=1, default=str)
    return result


def test_every_object_msgen_renders_with_exit_0_is_accepted(campaign: Campaign) -> None:
    assert campaign.counts["exit 0"] > INPUTS // 5, campaign.summary  # the inputs reach the server
    assert not campaign.refused, json.dumps(campaign.refused[:3], indent=1, default=str)


def test_what_the_rules_refuse_the_server_refuses_too(campaign: Campaign) -> None:
    """Inputs msgen refuses at the cluster's version only for an API-server rule: rendered
    without the rules, the server must refuse one of their objects (or the rule is listed in
    DELIBERATELY_STRICTER)."""
    assert not campaign.over_strict, json.dumps(campaign.over_strict[:3], indent=1, default=str)


def test_every_upstream_crd_is_served(server: Server) -> None:
    """What the campaign could not judge on this release, and why (the add-on's own
    requirement); on a release that serves them all, each CRD is Established."""
    if server.unserved:
        pytest.skip("; ".join(f"{kind}: {why}" for (_, kind), why in sorted(server.unserved.items())))
    for crd in CRDS:
        found = json.loads(kubectl("get", "-f", str(crd_file(crd)), "-o", "json").stdout)
        conditions = {c["type"]: c["status"] for c in found["status"]["conditions"]}
        assert conditions.get("Established") == "True", (crd, conditions)
