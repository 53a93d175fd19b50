"""What msgen says about PS pods, ranks, disaster recovery and msrun's logs, with what it emits.

What MindSpore then does with the output (PS ranks re-assigned by address, a crashed worker
taken back only with recovery on, msrun's logs in the pod's log) is asserted on a real cluster
by `tests/test_live_training.py`; these tests pin the statements and the rendered objects.
"""

from __future__ import annotations

from msgen.frameworks.mindspore import PS_RELEASES
from msgen.launchers.launcher import MSRUN_LOG_DIR, MSRUN_LOG_VOLUME

from .conftest import ROOT, SAMPLES, msgen
from .test_frameworks_mindspore import env_of, pod_templates, render, role_of

MS = SAMPLES / "mindspore"
README = (ROOT / "docs" / "mindspore.md").read_text()  # the MindSpore page the README links


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_a_ps_job_is_warned_at_its_ps_spec_that_it_trains_nothing_on_mindspore_2_10() -> None:
    run = msgen("render", str(MS / "widedeep-ps.yaml"))
    assert run.exit_code == 0
    line = next(line for line in run.stderr.splitlines() if "warning: spec.msReplicaSpecs.PS:" in line)
    assert line.startswith(f"{MS / 'widedeep-ps.yaml'}:31:7: warning: spec.msReplicaSpecs.PS: ")
    assert f"parameter servers only in releases {PS_RELEASES}" in line
    assert "2.10 has no set_param_ps, so there the PS pods train nothing" in line
    assert "ranks the nodes by host IP and node id, so a Worker's rank need not be its index" in line


def test_a_job_without_ps_gets_no_ps_warning() -> None:
    run = msgen("render", str(MS / "lenet-cpu.yaml"))
    assert run.exit_code == 0 and "PS pods" not in run.stderr


def test_readme_states_the_ps_releases_and_the_ranks_of_ps_jobs() -> None:
    text = one_line(README)
    assert f"parameter servers only in releases {PS_RELEASES}" in text
    assert "in a job without PS pods a Worker's rank is its index" in text
    assert "With PS pods the Scheduler ranks every role's nodes by (host IP, node id)" in text
    assert "ranks stay the same from run to run" not in text, "not for PS jobs"


def test_recovery_sets_what_each_mindspore_release_reads() -> None:
    for _, template, _ in pod_templates(render(str(MS / "gpu-2x8-msrun.yaml"))):
        env = env_of(template)
        assert env["MS_ENABLE_RECOVERY"]["value"] == "1", "the only variable MindSpore 2.10 reads"
        assert env["MS_RECOVERY_PATH"]["value"] == "/checkpoints", "required by 1.7-2.5 with recovery on"
    text = one_line(README)
    assert "MindSpore 2.10 reads only `MS_ENABLE_RECOVERY`" in text
    assert "(1.7 to 2.5) also need it (they refuse to start without it when recovery is on)" in text


def test_recovery_with_dns_addressing_warns_at_the_scheduler() -> None:
    run = msgen("render", str(MS / "gpu-2x8-msrun.yaml"), "--scheduler-address", "dns")
    assert run.exit_code == 0
    assert (
        "16:7: warning: spec.msReplicaSpecs.Scheduler: --recovery-volume with "
        "--scheduler-address dns: the other pods resolve the Scheduler's name"
    ) in run.stderr
    assert "warning" not in msgen("render", str(MS / "gpu-2x8-msrun.yaml")).stderr


def test_msrun_writes_its_logs_to_a_volume_of_its_own() -> None:
    objects = render(str(MS / "gpu-2x8-msrun.yaml"), "--target", "pod")
    for _, template, _ in pod_templates(objects):
        spec = template["spec"]
        main = spec["containers"][0]
        if role_of(template) != "worker":
            assert all(v["name"] != MSRUN_LOG_VOLUME for v in spec["volumes"])
            continue
        assert f"--log_dir={MSRUN_LOG_DIR}" in main["command"] and "--join=True" in main["command"]
        assert {"name": MSRUN_LOG_VOLUME, "mountPath": MSRUN_LOG_DIR} in main["volumeMounts"]
        assert {"name": MSRUN_LOG_VOLUME, "emptyDir": {}} in spec["volumes"]
    text = one_line(README)
    assert "not to the container log" not in text
    assert f"msgen passes `--log_dir={MSRUN_LOG_DIR}`, an emptyDir it mounts there" in text
    assert "with `--join=True` msrun also copies every process's output to the container's log" in text
