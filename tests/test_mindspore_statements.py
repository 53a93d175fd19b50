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


def _ps_warning(*args: str) -> str:
    run = msgen("render", str(MS / "widedeep-ps.yaml"), *args)
    assert run.exit_code == 0
    line = next(line for line in run.stderr.splitlines() if "warning: spec.msReplicaSpecs.PS:" in line)
    assert line.startswith(f"{MS / 'widedeep-ps.yaml'}:31:7: warning: spec.msReplicaSpecs.PS: ")
    assert "ranks the nodes by host IP and node id, so a Worker's rank need not be its index" in line
    return line


def test_a_ps_job_is_warned_at_its_ps_spec_that_it_trains_nothing_on_mindspore_2_10() -> None:
    line = _ps_warning()
    assert "MindSpore 2.10.0 has no set_param_ps, so the PS pods train nothing" in line
    assert f"(parameter-server training: releases {PS_RELEASES})" in line
    assert "2.7.1 has no set_param_ps" in _ps_warning("--mindspore-version", "2.7.1")


def test_on_mindspore_2_7_0_a_ps_job_is_told_how_its_ps_pods_train() -> None:
    # 2.7.0's wheel still has Parameter.set_param_ps; 2.7.1's has not.
    line = _ps_warning("--mindspore-version", "2.7.0")
    assert "MindSpore 2.7.0 trains with them only under set_ps_context(enable_ps=True) with set_param_ps" in line
    assert "train nothing" not in line


def test_a_job_without_ps_gets_no_ps_warning() -> None:
    run = msgen("render", str(MS / "lenet-cpu.yaml"))
    assert run.exit_code == 0 and "PS pods" not in run.stderr


def test_readme_states_the_ps_releases_and_the_ranks_of_ps_jobs() -> None:
    text = one_line(README)
    assert f"parameter servers only in releases {PS_RELEASES}" in text
    assert PS_RELEASES == "0.6 to 2.7.0"
    assert "in a job without PS pods a Worker's rank is its index" in text
    assert "With PS pods the Scheduler ranks every role's nodes by (host IP, node id)" in text
    assert "ranks stay the same from run to run" not in text, "not for PS jobs"


def test_recovery_sets_what_each_mindspore_release_reads() -> None:
    for release, path in (("2.7.0", "/checkpoints"), ("2.7.1", None), ("2.10", None), (None, None)):
        args = ("--mindspore-version", release) if release else ()
        for _, template, _ in pod_templates(render(str(MS / "gpu-2x8-msrun.yaml"), *args)):
            env = env_of(template)
            assert env["MS_ENABLE_RECOVERY"]["value"] == "1", "every release reads it"
            if path is None:
                assert "MS_RECOVERY_PATH" not in env, f"{release}: no file of the package names it"
            else:
                assert env["MS_RECOVERY_PATH"]["value"] == path, "2.7.0's RecoveryContext reads it"
    text = one_line(README)
    assert "From 2.7.1 on MindSpore reads only `MS_ENABLE_RECOVERY`" in text
    assert "2.7.0 also reads `MS_RECOVERY_PATH` (its RecoveryContext keeps recovery's state there" in text


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
