"""What a hostile repository or neighbour can try on msgen's hosts, and what msgen does instead.

A symbolic link out of the application's directory is refused unread (no line of the file it
points at in any message); the legacy plug-in reads no file outside the kustomization's root
that a config's `argsOneLiner` names; names, labels and namespaces with a final line break are
refused (a `$` anchor let them through); JSON nested 50,000 deep in ARGOCD_APP_PARAMETERS is a
positioned error, exit 1; the controller's health port closes idle connections and serves a
bounded number at once.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from msgen.reconcile import probes

from .conftest import SAMPLES, msgen

JOB = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
SECRET = "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\nstringData: {token: hunter2}\n"


def generate(directory: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "msgen", "argocd-generate", str(directory)], capture_output=True,
                          text=True, env={**os.environ, "ARGOCD_APP_NAMESPACE": "team-a", **env}, cwd=directory)  # fmt: skip


@pytest.mark.parametrize("target", ["not-yaml.txt", "secret.yaml"])
def test_a_link_out_of_the_application_is_refused_unread(tmp_path: Path, target: str) -> None:
    outside = tmp_path / target
    outside.write_text("hunter2: the first line\n" if target.endswith(".txt") else SECRET)
    app = tmp_path / "app"
    app.mkdir()
    (app / "job.yaml").write_text(JOB)
    (app / "stolen.yaml").symlink_to(outside)
    for done in (msgen("render", str(app)), generate(app)):
        stderr = getattr(done, "stderr")
        assert getattr(done, "exit_code", getattr(done, "returncode", None)) == 1, stderr
        assert getattr(done, "stdout") == ""
        assert "stolen.yaml:1:1: error: a symbolic link out of the directory" in stderr, stderr
        assert "hunter2" not in stderr


def test_a_link_inside_the_application_is_read(tmp_path: Path) -> None:
    app = tmp_path / "app"
    (app / "jobs").mkdir(parents=True)
    (app / "jobs" / "job.yaml").write_text(JOB)
    (app / "again.yaml").symlink_to(app / "jobs" / "job.yaml")
    done = msgen("render", str(app))
    assert done.exit_code == 1 and "makes too" in done.stderr  # read: the same job twice


def test_the_legacy_plugin_reads_no_file_outside_the_kustomization(tmp_path: Path) -> None:
    root = tmp_path / "kustomization"
    root.mkdir()
    config = tmp_path / "kust-plugin-config-1"
    config.write_text(JOB)
    outside = tmp_path / "passwd"
    outside.write_text("root:x:0:0:hunter2:/root:/bin/bash\n")
    env = {**os.environ, "KUSTOMIZE_PLUGIN_CONFIG_ROOT": str(root)}
    done = subprocess.run([sys.executable, "-m", "msgen", "kustomize-plugin", str(config), str(outside)],
                          capture_output=True, text=True, env=env, cwd=root)  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert "outside the kustomization's directory" in done.stderr and "hunter2" not in done.stderr
    (root / "more.yaml").write_text(JOB.replace("name: msjob-mnist", "name: more"))
    inside = subprocess.run([sys.executable, "-m", "msgen", "kustomize-plugin", str(config), "more.yaml"],
                            capture_output=True, text=True, env=env, cwd=root)  # fmt: skip
    assert inside.returncode == 0, inside.stderr


@pytest.mark.parametrize(
    "where, value",
    [("namespace", '"team\\n"'), ("labels", '{team: "a\\n"}'), ("name", '"lenet\\n"')],
)
def test_a_final_line_break_is_no_name(tmp_path: Path, where: str, value: str) -> None:
    job = JOB.replace("  name: msjob-mnist\n", f"  {where}: {value}\n" + ("" if where == "name" else "  name: msjob-mnist\n"))
    (tmp_path / "job.yaml").write_text(job)
    done = msgen("render", str(tmp_path / "job.yaml"))
    assert done.exit_code == 1 and done.stdout == "", done.stdout
    assert "job.yaml:7:" in done.stderr


def test_a_final_line_break_is_no_option_value() -> None:
    from msgen.options import text as options
    from msgen.options.option_table import BY_NAME

    for name, text in (("kueue-queue", "queue\n"), ("accelerator-type", "module\n"), ("shm-size", "16Gi\n")):
        with pytest.raises(options.OptionError):
            options.value_of(BY_NAME[name], name, text)


def test_deep_json_parameters_are_a_positioned_error(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "job.yaml").write_text(JOB)
    done = generate(app, ARGOCD_APP_PARAMETERS="[" * 50_000 + "]" * 50_000)
    assert done.returncode == 1 and done.stdout == ""
    assert "ARGOCD_APP_PARAMETERS nests deeper than 32 levels at line 1 column 33" in done.stderr
    assert "internal error" not in done.stderr
    flat = [{"name": "target", "string": "pod"}]
    assert generate(app, ARGOCD_APP_PARAMETERS=json.dumps(flat)).returncode == 0


class _Always:
    def ready(self) -> bool:
        return True

    def alive(self) -> bool:
        return True


def test_the_health_port_closes_idle_connections_and_bounds_them() -> None:
    """(tests/test_reconcile_probes.py: probes answered while a hundred are held)"""
    server = probes.serve(_Always(), 0, "127.0.0.1", request_seconds=0.3, max_connections=4)
    port = server.server_address[1]
    try:
        before = threading.active_count()
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(12)]
        time.sleep(0.1)
        assert threading.active_count() == before
        for connection in idle:  # every one is closed: the oldest beyond the bound, else at its deadline
            assert connection.recv(1) == b""
            connection.close()
        probe = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        probe.request("GET", "/readyz")
        assert probe.getresponse().status == 200
        probe.close()
    finally:
        server.shutdown()
        server.server_close()
