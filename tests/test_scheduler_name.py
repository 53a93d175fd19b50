"""`--scheduler-address dns`: the name resolver that wraps PS and Worker commands.

MindSpore takes `MS_SCHED_HOST` as an IP address only, so in `dns` mode msgen wraps the main
container's command in a small POSIX-sh resolver (`msgen/launchers/resolve_scheduler.sh`, inlined
as `/bin/sh -c`). These tests run that script, as the rendered pods carry it, with real shells,
a stub program and stand-in resolvers; `tests/test_live_training.py` runs it on a cluster.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from msgen.launchers import resolve

from .conftest import SAMPLES, msgen
from .test_launcher import SHELLS
from .test_frameworks_mindspore import pod_templates, render, role_of

MS = SAMPLES / "mindspore"
#: Prints what the wrapped program sees: its scheduler address and arguments.
SHOW = 'echo "host=$MS_SCHED_HOST args=$*"'


def run_resolver(shell: list[str], env: dict[str, str], *command: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    base = {"PATH": path if path is not None else os.environ["PATH"]}
    argv = [*shell, "-c", resolve.script(), "msgen-resolve", *command]
    return subprocess.run(argv, env={**base, **env}, capture_output=True, text=True, timeout=60)


def tool_dir(tmp_path: Path, *tools: str) -> str:
    """A PATH of only these programs (symlinks), to take getent or Python away."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in tools:
        found = shutil.which(tool)
        assert found, f"{tool} is needed on this machine for the test"
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_the_address_replaces_the_name_and_the_command_runs(shell: list[str]) -> None:
    done = run_resolver(shell, {"MS_SCHED_HOST": "localhost"}, "sh", "-c", SHOW, "prog", "--epochs=1", "a b")
    assert done.returncode == 0, done.stderr
    host, args = done.stdout.strip().split(" args=")
    assert ipaddress.ip_address(host.removeprefix("host=")).is_loopback
    assert args == "--epochs=1 a b", "the command's arguments pass through unchanged"
    assert "msgen-resolve: MS_SCHED_HOST localhost is " in done.stderr


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_it_retries_until_the_name_resolves(shell: list[str], tmp_path: Path) -> None:
    # A getent that knows the name only from its third call: the Scheduler pod gets its
    # address (and its DNS record) some time after the Workers start.
    fake = tmp_path / "bin" / "getent"
    fake.parent.mkdir()
    fake.write_text(
        '#!/bin/sh\necho x >> "$CALLS"\n'
        '[ "$(wc -l < "$CALLS")" -ge 3 ] && echo "10.244.0.7      job-scheduler-0.job"\n'
    )
    fake.chmod(0o755)
    calls = tmp_path / "calls"
    path = f"{fake.parent}:{os.environ['PATH']}"
    done = run_resolver(shell, {"MS_SCHED_HOST": "job-scheduler-0.job", "CALLS": str(calls)}, "sh", "-c", SHOW, path=path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "host=10.244.0.7 args="
    assert len(calls.read_text().split()) == 3


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_it_gives_up_saying_why_instead_of_hanging(shell: list[str]) -> None:
    env = {"MS_SCHED_HOST": "no-such-scheduler.invalid", "MSGEN_RESOLVE_TIMEOUT": "1"}
    done = run_resolver(shell, env, "sh", "-c", "echo ran")
    assert done.returncode == 1 and done.stdout == ""
    assert "the scheduler's name no-such-scheduler.invalid did not resolve within 1s" in done.stderr


def test_without_getent_it_asks_python(tmp_path: Path) -> None:
    path = tool_dir(tmp_path, "sh", "date", "expr", "sleep")
    Path(path, "python3").symlink_to(os.path.realpath(sys.executable))
    done = run_resolver([f"{path}/sh"], {"MS_SCHED_HOST": "localhost"}, "sh", "-c", SHOW, path=path)
    assert done.returncode == 0, done.stderr
    assert ipaddress.ip_address(done.stdout.split()[0].removeprefix("host=")).is_loopback


@pytest.mark.parametrize(
    "env,tools,message",
    [
        ({"MS_SCHED_HOST": "x"}, ("sh", "date", "expr", "sleep"), "the image has neither getent nor python to resolve x"),
        ({}, ("sh",), "MS_SCHED_HOST is empty"),
        ({"MS_SCHED_HOST": "x", "MSGEN_RESOLVE_TIMEOUT": "soon"}, ("sh",), "MSGEN_RESOLVE_TIMEOUT must be a whole number, got 'soon'"),
    ],
)
def test_what_it_cannot_do_is_a_usage_error(env: dict[str, str], tools: tuple[str, ...], message: str, tmp_path: Path) -> None:
    path = tool_dir(tmp_path, *tools)
    done = run_resolver([f"{path}/sh"], env, "echo", "ran", path=path)
    assert done.returncode == 2 and done.stdout == ""
    assert f"msgen-resolve: {message}" in done.stderr


def test_the_script_holds_nothing_kubernetes_would_expand() -> None:
    # The kubelet expands $(NAME) in command and args, and $$ to $: the inline script must
    # reach the shell unchanged.
    text = resolve.script()
    assert "$(" not in text and "$$" not in text


def _main(template: dict[str, Any]) -> dict[str, Any]:
    main: dict[str, Any] = template["spec"]["containers"][0]
    return main


@pytest.mark.parametrize("launcher", ["per-device", "msrun"])
def test_the_resolver_wraps_the_launcher(launcher: str) -> None:
    # Outermost: the launcher (and msrun's --master_addr) then find MS_SCHED_HOST an address.
    objects = render(str(MS / "gpu-2x8.yaml"), "--scheduler-address", "dns", "--launcher", launcher)
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    main = _main(worker)
    assert main["command"] == ["/bin/sh", "-c", resolve.script(), "msgen-resolve"]
    inner = main["args"]
    if launcher == "per-device":
        assert inner[:2] == ["/bin/sh", "/opt/msgen/per-device.sh"]
    else:
        assert inner[0] == "msrun" and "--master_addr=$(MS_SCHED_HOST)" in inner
    assert inner[-4:] == ["python", "/data/resnet/train.py", "--device_target=GPU", "--run_distribute=True"]


def test_a_container_without_command_is_refused_in_dns_mode_only() -> None:
    text = (MS / "widedeep-ps.yaml").read_text()
    # The PS keeps its image's entrypoint: nothing msgen can wrap.
    ps = text[text.index("    PS:") : text.index("    Worker:")]
    command = next(line for line in ps.splitlines(keepends=True) if line.strip().startswith("command:"))
    text = text.replace(ps, ps.replace(command, ""))
    assert msgen("render", "-", input=text).exit_code == 0, "cluster-ip: the entrypoint may stay"
    run = msgen("render", "-", "--scheduler-address", "dns", input=text)
    assert run.exit_code == 1 and run.stdout == ""
    assert run.stderr.count(": error: ") == 1, run.stderr
    assert (
        "error: spec.msReplicaSpecs.PS.template.spec.containers[0]: container 'mindspore' of PS "
        "sets no command: MindSpore reads MS_SCHED_HOST as an IP address only, so with "
        "--scheduler-address dns msgen resolves the scheduler's name when the container starts"
    ) in run.stderr
    assert "accepted: the full command in `command` (and `args`), or --scheduler-address cluster-ip" in run.stderr


def test_cluster_ip_mode_wraps_nothing() -> None:
    for _, template, _ in pod_templates(render(str(MS / "widedeep-ps.yaml"))):
        assert _main(template)["command"][0] == "/bin/bash"


#: ascend-2x8.yaml without the dnsPolicy its host-network Workers set.
NO_POLICY = (MS / "ascend-2x8.yaml").read_text().replace("          dnsPolicy: ClusterFirstWithHostNet\n", "")


def test_host_network_pods_resolve_with_the_cluster_dns() -> None:
    # A host-network pod's default DNS is its node's resolver, which knows no cluster names.
    assert "dnsPolicy" not in NO_POLICY
    objects = render("-", "--scheduler-address", "dns", input=NO_POLICY)
    worker = next(t for _, t, _ in pod_templates(objects) if role_of(t) == "worker")
    assert worker["spec"]["hostNetwork"] is True
    assert worker["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    for _, template, _ in pod_templates(render("-", input=NO_POLICY)):
        assert "dnsPolicy" not in template["spec"], "cluster-ip: the Service's address needs no DNS"


@pytest.mark.parametrize("policy", ["ClusterFirst", "Default"])
def test_a_host_network_pod_told_to_use_its_nodes_resolver_is_refused_in_dns_mode(policy: str) -> None:
    text = NO_POLICY.replace("hostNetwork: true", f"hostNetwork: true\n          dnsPolicy: {policy}")
    assert msgen("render", "-", input=text).exit_code == 0
    run = msgen("render", "-", "--scheduler-address", "dns", input=text)
    assert run.exit_code == 1 and run.stderr.count(": error: ") == 1, run.stderr
    assert (
        f"error: spec.msReplicaSpecs.Worker.template.spec.dnsPolicy: dnsPolicy {policy} makes a "
        "host-network Worker pod resolve with its node's resolver"
    ) in run.stderr
    assert msgen("render", str(MS / "ascend-2x8.yaml"), "--scheduler-address", "dns").exit_code == 0
