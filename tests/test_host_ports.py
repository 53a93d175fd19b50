"""Ports that take ports of the node: refused at the job's port, as the API server refuses the
pods (`msgen.checks.apirules.host_ports`), for every input kind, target and Kubernetes minor.

Both classes were found by the differential campaign and confirmed on a real API server: a
hostPort other than the containerPort under `hostNetwork: true` ("must match containerPort
when hostNetwork is true"), and one host port taken by two containers of a pod ("Duplicate
value: TCP//7000"). msgen rendered both with exit 0.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest
import yaml

from msgen import compile_documents, kinds
from msgen.model.plan import Options
from msgen.targets import NAMES as TARGETS
from msgen.model.versions import NEWEST, OLDEST

from .conftest import SAMPLES, msgen
from .mutations import templates
from .test_api_server_rules import job, line_of, refused

MINORS = [(1, minor) for minor in range(OLDEST[1], NEWEST[1] + 1)]
W = "spec.msReplicaSpecs.Worker.template.spec"


def _seeds() -> dict[tuple[str, str], dict[str, Any]]:
    """One sample per input kind msgen compiles (a kind without a sample of its own: the
    sample of the kind it is read as, under its apiVersion)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(SAMPLES.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            key = (doc.get("apiVersion"), doc.get("kind")) if isinstance(doc, dict) else None
            if key in kinds.known_kinds() and key not in found:
                found[key] = doc
    for api, kind in kinds.known_kinds():
        if (api, kind) not in found:
            twin = next(doc for (a, k), doc in found.items() if k == kind)
            found[(api, kind)] = {**copy.deepcopy(twin), "apiVersion": api}
    return found


SEEDS = _seeds()


def _a_template(job_data: dict[str, Any]) -> dict[str, Any]:
    """The pod template edited: one role's."""
    return templates(job_data)[0]


def host_network_port(job_data: dict[str, Any], clash: bool) -> None:
    spec = _a_template(job_data)["spec"]
    spec["hostNetwork"] = True
    main = spec["containers"][0]
    port = {"name": "extra", "containerPort": 5000, "hostPort": 6000 if clash else 5000}
    main["ports"] = [*(main.get("ports") or []), port]


def shared_host_port(job_data: dict[str, Any], clash: bool) -> None:
    spec = _a_template(job_data)["spec"]
    main = spec["containers"][0]
    if job_data["apiVersion"] == "kubeflow.org/v1" and job_data["kind"] == "MSJob":
        for template in templates(job_data):  # beside a second container, the 2020 MSJob's
            template["spec"]["containers"][0]["name"] = "mindspore"  # main is named so
    main["ports"] = [*(main.get("ports") or []), {"containerPort": 7000, "hostPort": 7000}]
    side = 7000 if clash else 7001  # containerPort = hostPort: valid under hostNetwork too
    spec["containers"] = [*spec["containers"], {"name": "side", "image": "x",
                                                "ports": [{"containerPort": side, "hostPort": side}]}]  # fmt: skip


def _check_every_kind_target_and_minor(edit: Callable[[dict[str, Any], bool], None], fragment: str) -> None:
    checked: dict[tuple[str, str], int] = {key: 0 for key in SEEDS}
    problems: list[tuple[Any, ...]] = []
    for (api, kind), seed in SEEDS.items():
        edited, without = copy.deepcopy(seed), copy.deepcopy(seed)
        edit(edited, True)
        edit(without, False)
        text, plain_text = yaml.safe_dump(edited, sort_keys=False), yaml.safe_dump(without, sort_keys=False)
        for target in TARGETS:
            for minor in MINORS:
                options = Options(target=target, kube_version=minor)  # type: ignore[arg-type]
                if not compile_documents(plain_text, "job.yaml", options).ok:
                    continue  # the kind, target and minor do not go together, clash or not
                checked[(api, kind)] += 1
                done = compile_documents(text, "job.yaml", options)
                errors = [d for d in done.diagnostics if d.is_error]
                if done.ok or len(errors) != 1 or fragment not in errors[0].message:
                    problems.append((api, kind, target, minor, [e.message for e in errors]))
                elif not errors[0].field_path.endswith("hostPort") or errors[0].position is None:
                    problems.append((api, kind, target, minor, errors[0].field_path))
    assert all(checked.values()), checked  # every kind, on some target at some minor
    assert sum(checked.values()) > len(SEEDS) * len(TARGETS) * len(MINORS) // 2, checked
    assert not problems, problems[:5]


def test_a_host_port_other_than_the_container_port_under_host_network_is_refused_everywhere() -> None:
    _check_every_kind_target_and_minor(host_network_port, "is not accepted beside hostNetwork: true")


def test_a_host_port_taken_by_two_containers_is_refused_everywhere() -> None:
    _check_every_kind_target_and_minor(shared_host_port, "host port 7000/TCP is taken twice in one pod")


def test_host_network_port_error_is_at_the_host_port_with_nothing_on_stdout() -> None:
    text = job(spec="hostNetwork: true", container="ports: [{name: p, containerPort: 5000,\n        hostPort: 6000}]")
    err = refused(text)
    assert f"<stdin>:{line_of(text, 'hostPort: 6000')}:" in err, err
    assert f"error: {W}.containers[0].ports[0].hostPort: hostPort 6000 is not accepted beside" in err
    assert "accepted: hostPort 5000, or no hostPort" in err


@pytest.mark.parametrize("ports", ["[{containerPort: 5000}]", "[{containerPort: 5000, hostPort: 5000}]"])
def test_host_network_ports_that_match_or_default_are_accepted(ports: str) -> None:
    run = msgen("render", "-", input=job(spec="hostNetwork: true", container=f"ports: {ports}"))
    assert run.exit_code == 0, run.stderr


def test_without_host_network_a_host_port_may_differ() -> None:
    run = msgen("render", "-", input=job(container="ports: [{containerPort: 5000, hostPort: 6000}]"))
    assert run.exit_code == 0, run.stderr


def test_init_containers_host_port_is_not_held_to_the_container_port() -> None:
    # validatePodHostNetworkDeps reads the regular containers only.
    init = "initContainers: [{name: i, image: x, ports: [{containerPort: 5000, hostPort: 6000}]}]"
    run = msgen("render", "-", input=job(spec=f"hostNetwork: true\n{init}"))
    assert run.exit_code == 0, run.stderr


SIDE = "- name: side\n  image: x\n  ports: [{containerPort: 7001, hostPort: 7000{extra}}]"


def _with_sidecar(main_ports: str, side_extra: str = "", spec: str = "") -> str:
    text = job(container=f"ports: {main_ports}", spec=spec)
    side = "".join(" " * 12 + line + "\n" for line in SIDE.replace("{extra}", side_extra).splitlines())
    return text + side


def test_two_containers_on_one_host_port_error_is_at_the_second() -> None:
    text = _with_sidecar("[{containerPort: 7000, hostPort: 7000}]")
    err = refused(text)
    assert err.count(": error: ") == 1, err
    assert f"<stdin>:{line_of(text, 'containerPort: 7001')}:" in err, err
    assert (f"error: {W}.containers[1].ports[0].hostPort: host port 7000/TCP is taken twice in one pod,"
            " by containers[0].ports[0] and containers[1].ports[0]") in err  # fmt: skip


@pytest.mark.parametrize(
    "main_ports,side_extra",
    [
        ("[{containerPort: 7000, hostPort: 7000}]", ", protocol: UDP"),
        ("[{containerPort: 7000, hostPort: 7000, hostIP: 10.0.0.1}]", ", hostIP: 10.0.0.2"),
        # the server compares hostIP as written: 0.0.0.0 and none are two keys
        ("[{containerPort: 7000, hostPort: 7000, hostIP: 0.0.0.0}]", ""),
    ],
)
def test_another_protocol_or_host_ip_is_another_host_port(main_ports: str, side_extra: str) -> None:
    run = msgen("render", "-", input=_with_sidecar(main_ports, side_extra))
    assert run.exit_code == 0, run.stderr


def test_same_host_ip_and_protocol_clash() -> None:
    text = _with_sidecar("[{containerPort: 7000, hostPort: 7000, hostIP: 10.0.0.1, protocol: UDP}]",
                         ", hostIP: 10.0.0.1, protocol: UDP")  # fmt: skip
    assert "host port 7000/UDP on hostIP 10.0.0.1 is taken twice" in refused(text)


def test_under_host_network_container_ports_are_host_ports() -> None:
    text = job(spec="hostNetwork: true", container="ports: [{name: a, containerPort: 7000}]")
    text += "".join(" " * 12 + line + "\n" for line in
                    "- name: side\n  image: x\n  ports: [{name: b, containerPort: 7000}]".splitlines())  # fmt: skip
    err = refused(text)
    assert f"error: {W}.containers[1].ports[0]: host port 7000/TCP is taken twice" in err, err
    assert "a port without hostPort takes its containerPort on the node" in err
    assert msgen("render", "-", input=text.replace("hostNetwork: true", "hostNetwork: false")).exit_code == 0


def test_a_clash_with_the_port_msgen_adds_is_reported_at_the_users_port() -> None:
    # msgen adds msjob-port 2222 to the main container (ms-operator's default); under
    # hostNetwork a sidecar listed before it on 2222 takes the same port of the node.
    text = job(spec="hostNetwork: true").replace(
        "hostNetwork: true\n          containers:\n",
        "hostNetwork: true\n          containers:\n            - name: side\n              image: x\n"
        "              ports: [{containerPort: 2222}]\n",
    )
    err = refused(text)
    assert f"<stdin>:{line_of(text, 'containerPort: 2222')}:" in err, err
    assert f"error: {W}.containers[0].ports[0]: host port 2222/TCP is taken twice" in err, err
    assert "(containers[1].ports[0] is a port msgen adds)" in err


def test_init_containers_are_compared_each_by_itself() -> None:
    init = ("initContainers: [{name: i, image: x, ports: [{containerPort: 1, hostPort: 7000}]},"
            " {name: s, image: x, restartPolicy: Always, ports: [{containerPort: 2, hostPort: 7000}]}]")  # fmt: skip
    # each init container's ports against its own only, not the regular containers' (a sidecar too)
    run = msgen("render", "-", input=job(container="ports: [{containerPort: 3, hostPort: 7000}]", spec=init))
    assert run.exit_code == 0, run.stderr
    twice = "initContainers: [{name: i, image: x, ports: [{containerPort: 1, hostPort: 7000}, {containerPort: 2, hostPort: 7000}]}]"
    err = refused(job(spec=twice))
    assert f"error: {W}.initContainers[0].ports[1].hostPort: host port 7000/TCP is taken twice in one pod" in err


def test_one_container_listing_a_host_port_twice_is_refused() -> None:
    err = refused(job(container="ports: [{containerPort: 1, hostPort: 7000}, {containerPort: 2, hostPort: 7000}]"))
    assert f"error: {W}.containers[0].ports[1].hostPort: host port 7000/TCP is taken twice" in err
