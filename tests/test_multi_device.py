"""Multi-device pods (contracts §2-4), read from the rendered objects as a cluster would run them.

The per-process identities are checked by executing the launcher shipped in the rendered
ConfigMap with each pod's rendered command, args and env, and a stub in place of the program.
"""

from __future__ import annotations




from .conftest import SAMPLES
from .test_frameworks_mindspore import pod_templates, render, role_of

MS = SAMPLES / "mindspore"


def test_options_come_from_annotations_and_the_command_line_alike() -> None:
    text = (MS / "gpu-2x8.yaml").read_text()
    annotated = text.replace("  name: ms-resnet50-gpu\n", "  name: ms-resnet50-gpu\n  annotations:\n    msgen/launcher: msrun\n")
    assert render("-", input=annotated) == render("-", "--launcher", "msrun", input=text)


def test_null_volume_lists_take_msgens_volumes() -> None:
    text = (MS / "gpu-2x8.yaml").read_text()
    text = text[: text.rindex("              volumeMounts:")] + "              volumeMounts: null\n          volumes: null\n"
    worker = next(t for _, t, _ in pod_templates(render("-", input=text)) if role_of(t) == "worker")
    assert [v["name"] for v in worker["spec"]["volumes"]] == ["msgen-launcher"]
    assert [m["name"] for m in worker["spec"]["containers"][0]["volumeMounts"]] == ["msgen-launcher"]
