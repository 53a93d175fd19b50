"""Which modules a render imports: start-up is most of a render's cost, so heavy ones stay out.

Argo CD and kustomize start msgen afresh on every refresh and build. pydantic (only to explain
invalid input), ruamel.yaml (`msgen convert`), jsonschema and kubernetes-validate (tests), the
reconciler's Kubernetes client and the standard library's slower helpers must not load when
valid input is rendered. Each check runs msgen in a fresh interpreter and lists `sys.modules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, SAMPLES, sample_files

TYPICAL = SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml"

#: Top-level modules a valid render must not import, and why they would be there.
NOT_ON_THE_RENDER_PATH = {
    "pydantic": "explains invalid input only",
    "pydantic_core": "explains invalid input only",
    "annotated_types": "pydantic's",
    "ruamel": "msgen convert only",
    "jsonschema": "tests only",
    "kubernetes_validate": "tests only",
    "lightkube": "the reconciler's client",
    "httpx": "the reconciler's client",
    "prometheus_client": "the controller's /metrics",
    "difflib": "did-you-mean hints, for mistakes only",
    "tempfile": "importlib.resources and others pull it in",
    "shutil": "importlib.resources and others pull it in",
    "dataclasses": "the render path's records are NamedTuples and slotted classes (msgen.model.plan)",
    "inspect": "imported by dataclasses; ~6 ms with ast, dis and tokenize",
    "copy": "plain data is copied by model.patch.copy_data; copy imports weakref",
}

_WRAPPER = """
import io, json, sys
entry, out = sys.argv[1], sys.argv[2]
sys.argv = [entry, *sys.argv[3:]]
module, _, function = {"msgen": "msgen.hosts.command_line.entry:run", "msgen-krm": "msgen.hosts.kustomize.krm:run_function",
                          "msgen-script": "msgen.hosts.command_line.entry:main"}[entry].partition(":")
try:
    getattr(__import__(module, fromlist=[function]), function)()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
with open(out, "w") as stream:
    import gc
    json.dump({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules}),
               "collecting": gc.isenabled()}, stream)
"""


def imported(
    tmp_path: Path, entry: str, *args: str, stdin: bytes = b"", top_level: bool = True
) -> tuple[object, set[str], bytes]:
    """The exit code, the (top-level) modules loaded and stderr of one `entry ARGS` process."""
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSGEN_")}
    wrapper = _WRAPPER if top_level else _WRAPPER.replace('m.split(".")[0] for m', "m for m")
    done = subprocess.run(
        [sys.executable, "-c", wrapper, entry, str(out), *args],
        input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=env,
        check=False,
    )
    found = json.loads(out.read_text())
    return found["code"], set(found["modules"]), done.stderr


def _unwanted(modules: set[str]) -> dict[str, str]:
    return {name: why for name, why in NOT_ON_THE_RENDER_PATH.items() if name in modules}


@pytest.mark.parametrize(
    "args",
    [("render", str(TYPICAL)), ("render", "--target", "pod", str(TYPICAL)),
     ("render", "--target", "volcano", str(TYPICAL)),
     *[("render", str(path)) for path in sample_files() if path != TYPICAL]],
    ids=lambda args: " ".join(Path(a).name for a in args[1:]),
)
def test_a_valid_render_imports_nothing_heavy(tmp_path: Path, args: tuple[str, ...]) -> None:
    code, modules, stderr = imported(tmp_path, "msgen", *args)
    assert code in (0, None)
    assert "msgen" in modules and "yaml" in modules  # the wrapper did see the render's imports
    assert _unwanted(modules) == {}
    assert "click" not in modules  # warnings, too, are written without it


def test_the_krm_function_imports_nothing_heavy(tmp_path: Path) -> None:
    job = TYPICAL.read_text().replace("\n", "\n    ")
    resource_list = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
        f"functionConfig:\n    {job}\n"
    )
    code, modules, _ = imported(tmp_path, "msgen-krm", stdin=resource_list.encode())
    assert code in (0, None)
    assert _unwanted(modules) == {}


def test_decimal_is_loaded_only_for_a_podgroup_that_sums_requests(tmp_path: Path) -> None:
    # PodGroup minResources are summed exactly (msgen.model.quantity, with decimal); nothing else needs it
    _, plain, _ = imported(tmp_path, "msgen", "render", str(TYPICAL))
    code, gang, _ = imported(tmp_path, "msgen", "render", "--gang-scheduler", "volcano", str(TYPICAL))
    assert code in (0, None)
    assert "decimal" not in plain and "decimal" in gang


def test_ascend_modules_load_only_for_ascend_work(tmp_path: Path) -> None:
    ascend = {"msgen.devices.ascend", "msgen.launchers.ascend"}
    _, gpu_job, _ = imported(tmp_path, "msgen", "render", str(TYPICAL), top_level=False)
    npu_sample = SAMPLES / "mindspore" / "ascend-single-npu.yaml"
    _, npu_job, _ = imported(tmp_path, "msgen", "render", str(npu_sample), top_level=False)
    _, option, _ = imported(tmp_path, "msgen", "render", "--accelerator-type", "module-910b-8",
                            str(TYPICAL), top_level=False)
    assert not ascend & gpu_job
    assert ascend <= npu_job and "msgen.launchers.ascend" in option


def test_an_invalid_input_does_load_pydantic_to_explain_it(tmp_path: Path) -> None:
    # The other side of the bargain, and proof that the wrapper sees lazily imported modules.
    bad = tmp_path / "bad.yaml"
    bad.write_text(TYPICAL.read_text().replace("msReplicaSpecs:", "msReplicaSpecs:\n    Wroker: {}", 1))
    code, modules, _ = imported(tmp_path, "msgen", "render", str(bad))
    assert code == 1
    assert "pydantic" in modules


def test_commands_loaded_on_first_use_are_the_ones_their_modules_register() -> None:
    # `msgen.hosts.command_line.cli.ELSEWHERE` names the commands other modules add, so that a render does not
    # import them; a command added there but not named here would be missing from `msgen`.
    import importlib

    import click

    from msgen.hosts.command_line.cli import ELSEWHERE

    for module in set(ELSEWHERE.values()):
        group = click.Group()
        importlib.import_module(module).register(group)
        assert sorted(group.commands) == sorted(n for n, m in ELSEWHERE.items() if m == module)


def test_a_plain_render_does_not_load_click_nor_the_commands(tmp_path: Path) -> None:
    # TYPICAL warns (cleanPodPolicy: None is partly expressed): its warning needs no click
    code, modules, stderr = imported(tmp_path, "msgen", "render", str(TYPICAL), top_level=False)
    assert code in (0, None) and b"warning:" in stderr
    assert "msgen.compile.pipeline" in modules
    assert not {"click", "msgen.hosts.command_line.cli", "msgen.hosts.command_line.reconcile.commands", "msgen.hosts.argocd.commands", "msgen.yamlio.output_name"} & modules


def test_clicks_commands_do_not_load_the_other_commands(tmp_path: Path) -> None:
    code, modules, _ = imported(tmp_path, "msgen", "validate", str(TYPICAL), top_level=False)
    assert code in (0, None)
    assert "msgen.hosts.command_line.cli" in modules
    assert not {"msgen.hosts.command_line.reconcile.commands", "msgen.hosts.argocd.commands", "msgen.hosts.command_line.convert"} & modules


def test_the_console_script_runs_clicks_commands_collecting_without_the_render_modules(
    tmp_path: Path,
) -> None:
    # `main` pauses the cycle collector while a render's modules load; a command click runs
    # (the long-running controller among them) must get it back, and not load those modules.
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSGEN_")}
    wrapper = _WRAPPER.replace('m.split(".")[0] for m', "m for m")
    subprocess.run([sys.executable, "-c", wrapper, "msgen-script", str(out), "--version"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=env, check=False)
    found = json.loads(out.read_text())
    assert found["code"] in (0, None) and "msgen.hosts.command_line.cli" in found["modules"]
    assert found["collecting"] is True
    assert "msgen.compile.pipeline" not in found["modules"]
