"""Reaching a cluster: kubectl's kubeconfig rules, a server that cannot be reached named at
once, the Kubernetes client missing, and the command lines the reconciler accepts.

No cluster is needed: a closed local port is a real server that is not there."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from msgen.reconcile import kubeconfig

from .conftest import ROOT, Run, msgen_process

JOB = """\
apiVersion: mindspore.gitee.com/v1
kind: MSJob
metadata:
  name: lenet
  namespace: team-a
spec:
  msReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers:
            - name: mindspore
              image: mindspore/mindspore:2.2.14
"""


def _closed_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def config(server: str, context: str = "lab", **more: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": f"{context}-cluster", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": f"{context}-user", "user": {"token": "t"}}],
        "contexts": [{"name": context, "context": {"cluster": f"{context}-cluster", "user": f"{context}-user"}}],
        **more,
    }  # fmt: skip


@pytest.fixture
def closed(tmp_path: Path) -> Path:
    path = tmp_path / "closed.kubeconfig"
    path.write_text(json.dumps(config(f"https://127.0.0.1:{_closed_port()}")))
    return path


# --- kubeconfig: kubectl's rules ----------------------------------------------------------------


def test_a_kubeconfig_list_merges_as_kubectl_first_file_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "config", tmp_path / "b" / "config"
    a = config("https://a:6443", "alpha")
    a["clusters"][0]["cluster"] = {"server": "https://a:6443", "certificate-authority": "ca.crt"}
    b = config("https://b:6443", "beta")
    b["contexts"].append({"name": "alpha", "context": {"cluster": "beta-cluster", "user": "beta-user"}})
    merged = kubeconfig.merged([(first, a), (second, b)])
    assert merged["current-context"] == "alpha"
    # The first file's "alpha" wins; the second file's entries of other names are kept.
    assert [c["name"] for c in merged["contexts"]] == ["alpha", "beta"]
    assert merged["contexts"][0]["context"]["cluster"] == "alpha-cluster"
    # A relative path is relative to the file that names it, not to the first file.
    assert merged["clusters"][0]["cluster"]["certificate-authority"] == str(tmp_path / "a" / "ca.crt")


def test_kubeconfig_sources_follow_kubectl(tmp_path: Path) -> None:
    listed = f"{tmp_path / 'a'}{os.pathsep}{os.pathsep}{tmp_path / 'b'}"
    assert kubeconfig.sources(None, {"KUBECONFIG": listed}) == [tmp_path / "a", tmp_path / "b"]
    assert kubeconfig.sources("x.yaml", {"KUBECONFIG": listed}) == [Path("x.yaml")]


def test_connect_reads_a_kubeconfig_list_and_picks_the_second_files_context(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from msgen.reconcile import kube

    (tmp_path / "a").write_text(json.dumps(config("https://a.example:6443", "alpha")))
    (tmp_path / "b").write_text(json.dumps(config("https://b.example:6443", "beta")))
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}{os.pathsep}{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}")
    assert kube.where(kube.connect(None, None)) == "https://a.example:6443 (context alpha)"
    assert kube.where(kube.connect(None, "beta")) == "https://b.example:6443 (context beta)"
    with pytest.raises(kube.KubeError, match="Context 'gamma' not found"):
        kube.connect(None, "gamma")


# --- a server that cannot be reached ------------------------------------------------------------


def test_a_server_that_cannot_be_reached_is_named_at_once(monkeypatch: pytest.MonkeyPatch, closed: Path) -> None:
    """No silent retries for a refused connection; the message names the server and the
    context, as kubectl's does."""
    import httpx2

    from msgen.reconcile import kube

    slept: list[float] = []
    monkeypatch.setattr(kube.time, "sleep", slept.append)
    client = kube.connect(str(closed), None)
    server = json.loads(closed.read_text())["clusters"][0]["cluster"]["server"]

    def refused() -> str:
        raise httpx2.ConnectError("[Errno 111] Connection refused")

    with pytest.raises(kube.KubeError) as caught:
        kube.call("Namespace n", refused, client)
    assert str(caught.value) == f"Namespace n: no answer from {server} (context lab): Connection refused (ConnectError)"
    # And through a real connection to the closed port.
    with pytest.raises(kube.KubeError, match=rf"no answer from {server} \(context lab\): .*ConnectError"):
        kube.namespace_exists(client, "n")
    with pytest.raises(kube.KubeError, match=rf"watching Pod: no answer from {server}"):
        next(kube.watch_events(client, "v1", "Pod", "n", {}, None))
    assert slept == []


def test_apply_against_a_closed_port_fails_promptly_naming_the_server(tmp_path: Path, closed: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    started = time.monotonic()
    run = msgen_process("apply", str(job), "--kubeconfig", str(closed))
    assert run.exit_code == 1, run.stderr
    assert "no answer from https://127.0.0.1:" in run.stderr and "(context lab)" in run.stderr
    assert "Traceback" not in run.stderr
    assert time.monotonic() - started < 20  # no minute of silent retries (generous: 2 shared cores)


def test_controller_once_against_a_closed_port_fails_and_says_why(closed: Path) -> None:
    run = msgen_process("controller", "--once", "--no-leader-elect", "--kubeconfig", str(closed))
    assert run.exit_code == 1, (run.stdout, run.stderr)
    assert "the controller cannot watch what it acts on:\n  watching " in run.stderr
    assert " in every namespace: listing " in run.stderr and "no answer from https://127.0.0.1:" in run.stderr


def test_a_long_running_controller_logs_a_watch_it_cannot_start(closed: Path) -> None:
    """Without leader election nothing else would say it: the first lines name the problem."""
    proc = subprocess.Popen([sys.executable, "-m", "msgen", "controller", "--no-leader-elect", "--kubeconfig",
                             str(closed), "-n", "team-a"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert lines[0].startswith("msgen controller: watching namespaces team-a through https://127.0.0.1:")
    assert any("watching" in line and "no answer from" in line and line.rstrip().endswith("; retrying")
               for line in lines[1:]), lines


# --- without the Kubernetes client --------------------------------------------------------------


@pytest.mark.parametrize("command", [["apply", "job.yaml"], ["status", "lenet"], ["controller", "--once"],
                                     ["delete", "--applyset", "x"], ["diff", "job.yaml"]])
def test_without_the_apply_extra_the_command_says_what_to_install(command: list[str]) -> None:
    blocked = ("import sys; sys.modules['httpx2'] = None; sys.argv = ['msgen', *sys.argv[1:]]; "
               "from msgen.hosts.command_line.entry import main; main()")
    done = subprocess.run([sys.executable, "-c", blocked, *command], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert "pip install 'msgen-k8s[apply]'" in done.stderr and f"msgen {command[0]} talks to a cluster" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


# --- the command lines --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["delete", "status"])
def test_delete_and_status_take_the_render_options_apply_takes(tmp_path: Path, closed: Path, command: str) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    options = ["--target", "pod", "--kube-version", "1.30", "--scheduler-address", "dns"]
    run: Run = msgen_process(command, str(job), *options, "--kubeconfig", str(closed))
    # Past the command line (no "No such option"), to the cluster that is not there.
    assert "No such option" not in run.stderr and run.exit_code == 1, run.stderr
    assert "no answer from" in run.stderr
    # The file's own namespace: the set (or job) is looked for in team-a.
    assert "team-a" in run.stderr


def test_controller_namespaces_are_listed_or_repeated() -> None:
    import click

    from msgen.hosts.command_line.reconcile.controller_command import namespaces_of

    assert namespaces_of(()) == ["*"]
    assert namespaces_of(("a,b", "c", "a")) == ["a", "b", "c"]
    with pytest.raises(click.BadParameter, match="'Team_A'"):
        namespaces_of(("Team_A",))


def test_the_probes_answer_as_the_checks_say() -> None:
    from urllib.error import HTTPError
    from urllib.request import urlopen

    from msgen.reconcile.probes import serve

    class Checks:
        ready_now = False

        def ready(self) -> bool:
            return self.ready_now

        def alive(self) -> bool:
            return True

    checks = Checks()
    server = serve(checks, 0, "127.0.0.1")
    port = server.server_address[1]
    try:
        with pytest.raises(HTTPError) as refused:
            urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10)
        assert refused.value.code == 503
        checks.ready_now = True
        assert urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10).status == 200
        assert urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10).status == 200
    finally:
        server.shutdown()


@pytest.mark.parametrize("command", ["apply", "diff"])
def test_an_unreachable_server_is_not_blamed_on_its_version(command: str, closed: Path) -> None:
    """`--kube-version` would not make a server that does not answer reachable: apply and
    diff say it does not answer, and nothing else."""
    done = msgen_process(command, str(ROOT / "samples" / "mindspore" / "lenet-cpu.yaml"), "--kubeconfig", str(closed))
    assert done.exit_code == (1 if command == "apply" else 2), done.stderr
    assert "no answer from https://127.0.0.1:" in done.stderr and "--kube-version" not in done.stderr, done.stderr


def test_a_context_without_a_user_is_used_anonymously_as_kubectl_does(tmp_path: Path) -> None:
    anonymous = config(f"https://127.0.0.1:{_closed_port()}")
    del anonymous["users"]
    del anonymous["contexts"][0]["context"]["user"]
    path = tmp_path / "anonymous.kubeconfig"
    path.write_text(json.dumps(anonymous))
    done = msgen_process("status", "lenet", "--kubeconfig", str(path))
    assert done.exit_code == 1 and "no answer from https://127.0.0.1:" in done.stderr, done.stderr
    assert "internal error" not in done.stderr
