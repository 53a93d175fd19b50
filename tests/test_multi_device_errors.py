"""Bad multi-device and AscendJob input: one positioned message each, exit 1, nothing written."""

from __future__ import annotations

from .conftest import SAMPLES, msgen
from .test_errors import fails

MS = SAMPLES / "mindspore"
GPU = (MS / "gpu-2x8.yaml").read_text()
ASCEND = (MS / "ascend-2x8.yaml").read_text()
ACJOB = (SAMPLES / "ascend" / "mindspore-acjob.yaml").read_text()


def test_bad_option_values() -> None:
    text = ASCEND.replace("msgen/shm-size: 32Gi", "msgen/shm-size: lots")
    err = fails(text)
    assert "metadata.annotations.msgen/shm-size: msgen/shm-size: 'lots' is not accepted; accepted: a size such as 16Gi or 512Mi" in err
    run = msgen("render", str(MS / "ascend-2x8.yaml"), "--accelerator-type", "bad value!")
    assert run.exit_code == 2 and "'bad value!' is not accepted: must consist of letters" in run.stderr


def test_null_ports_get_the_default_port() -> None:
    for text, port in ((ACJOB, "ascendjob-port"), (GPU, "msjob-port")):
        text = text.replace("              ports:\n                - containerPort: 2222\n                  name: ascendjob-port\n", "              ports: null\n", 1)
        text = text.replace("              command: [\"python\", \"/data/resnet/train.py\", \"--device_target=GPU\", \"--run_distribute=True\"]\n              volumeMounts", "              command: [\"python\", \"/data/resnet/train.py\", \"--device_target=GPU\", \"--run_distribute=True\"]\n              ports: null\n              volumeMounts", 1)
        assert "ports: null" in text
        run = msgen("render", "-", input=text)
        assert run.exit_code == 0, run.stderr
        scheduler = next(o for o in run.objects() if o["kind"] == "Job" and o["metadata"]["name"].endswith("-scheduler"))
        assert scheduler["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 2222, "name": port}]
