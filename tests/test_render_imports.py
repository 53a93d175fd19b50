"""Which modules a render imports: start-up is most of a render's cost, so heavy ones stay out.

Argo CD and kustomize start msgen afresh on every refresh and build. pydantic (only to explain
invalid input), ruamel.yaml (`msgen convert`), jsonschema and kubernetes-validate (tests), the
reconciler's Kubernetes client and the standard library's slower helpers must not load when
valid input is rendered. Each check runs msgen in a fresh interpreter and lists `sys.modules`:
every module of msgen a render of the typical job loads is named here (`RENDER_MODULES`,
`KRM_MODULES`), and every other one with what it is for (`RENDER_OTHERS`). A render also
compiles no source text (typing's ForwardRefs did) and no regular expression it does not
match, and the console scripts load a render's modules with the cycle collector off.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    "yaml": "plain block YAML is read by yamlio.block_reader, strings written by yamlio.scalar_styles",
    "typing": "for mypy only: the few forms a render uses at run time are msgen.model.type_forms'",
}

_WRAPPER = """
import builtins, sys
started_with = set(sys.modules)
compiled = []
def counting_compile(source, *args, _compile=builtins.compile, **kwargs):
    if isinstance(source, str):  # not a module's bytes, which imports compile without a .pyc
        compiled.append(source)
    return _compile(source, *args, **kwargs)
builtins.compile = counting_compile
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
loaded = sorted(set(sys.modules) - started_with)
import gc, json
with open(out, "w") as stream:
    json.dump({"code": code, "modules": sorted({m.split(".")[0] for m in sys.modules}),
               "collecting": gc.isenabled(), "compiled": compiled, "loaded": loaded}, stream)
"""


def run_entry(
    tmp_path: Path, entry: str, *args: str, stdin: bytes = b"", top_level: bool = True
) -> tuple[dict[str, Any], bytes]:
    """What one `entry ARGS` process reported (exit code, the (top-level) modules loaded,
    whether it collects, the sources it compiled) and its stderr."""
    out = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSGEN_")}
    wrapper = _WRAPPER if top_level else _WRAPPER.replace('m.split(".")[0] for m', "m for m")
    done = subprocess.run(
        [sys.executable, "-c", wrapper, entry, str(out), *args],
        input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=env,
        check=False,
    )
    found: dict[str, Any] = json.loads(out.read_text())
    return found, done.stderr


#: Every module of msgen a render of the typical job loads. A module added to the render path
#: (or one it no longer needs) changes this list, so the change is seen and its cost measured
#: (bench/README.md): start-up is most of a render's cost.
RENDER_MODULES = {
    "msgen", "msgen.hosts", "msgen.hosts.fast_exit", "msgen.hosts.compile_command",
    "msgen.hosts.command_line", "msgen.hosts.command_line.entry", "msgen.hosts.command_line.render_argv",
    "msgen.compile", "msgen.compile.all_findings", "msgen.compile.collector", "msgen.compile.driver",
    "msgen.compile.pipeline",
    "msgen.kinds", "msgen.kinds.msjob", "msgen.kinds.podtemplate", "msgen.kinds.shared",
    "msgen.launchers", "msgen.launchers.cluster", "msgen.launchers.launcher", "msgen.launchers.mindspore",
    "msgen.launchers.resolve",
    "msgen.frameworks", "msgen.frameworks.mindspore",
    "msgen.checks", "msgen.checks.input_model", "msgen.checks.input_model_check", "msgen.checks.output_bound",
    "msgen.checks.output_size", "msgen.checks.pod_schema", "msgen.checks.pod_template_schema", "msgen.checks.validation",
    "msgen.checks.apirules", "msgen.checks.apirules.containers", "msgen.checks.apirules.crd_lists",
    "msgen.checks.apirules.enums", "msgen.checks.apirules.findings",
    "msgen.checks.apirules.host_ports", "msgen.checks.apirules.job_values", "msgen.checks.apirules.metadata",
    "msgen.checks.apirules.pod", "msgen.checks.apirules.releases", "msgen.checks.apirules.resources",
    "msgen.targets", "msgen.targets.addressing", "msgen.targets.cells", "msgen.targets.common",
    "msgen.targets.fit", "msgen.targets.indexed_job", "msgen.targets.labels", "msgen.targets.limits",
    "msgen.targets.scheduling", "msgen.targets.support",
    "msgen.devices", "msgen.devices.gpu",
    "msgen.options", "msgen.options.option_table", "msgen.options.text",
    "msgen.yamlio", "msgen.yamlio.block_reader", "msgen.yamlio.emit", "msgen.yamlio.inputs",
    "msgen.yamlio.scalar_styles", "msgen.yamlio.spool", "msgen.yamlio.yaml_go",
    "msgen.yamlio.yaml_loader", "msgen.yamlio.yaml_writer",
    "msgen.model", "msgen.model.addresses", "msgen.model.diagnostics", "msgen.model.exit_status",
    "msgen.model.memo", "msgen.model.mindspore_versions", "msgen.model.names", "msgen.model.patch", "msgen.model.plan", "msgen.model.quantity",
    "msgen.model.run_policy", "msgen.model.source", "msgen.model.target_facts", "msgen.model.type_forms",
    "msgen.model.versions",
}
#: ... and of `msgen-krm` compiling it as its function config: the KRM host instead of the command line's.
KRM_MODULES = (
    RENDER_MODULES
    - {"msgen.hosts.fast_exit", "msgen.hosts.command_line", "msgen.hosts.command_line.entry",
       "msgen.hosts.command_line.render_argv", "msgen.yamlio.spool"}
    | {"msgen.hosts.kustomize", "msgen.hosts.kustomize.krm", "msgen.hosts.kustomize.krm_checks",
       "msgen.hosts.kustomize.krm_config", "msgen.options.option_layers", "msgen.yamlio.origin",
       "msgen.yamlio.terminal",  # its ResourceList comes on standard input
       # where its config is: the kustomizations of the build, read by the one tree reader
       "msgen.hosts.kustomization_tree", "msgen.hosts.kustomize_entries"}
)
#: The other modules a render may load (top-level names), and what for; some Python versions
#: load fewer of them, 3.10 its own names for `re`'s parts.
RENDER_OTHERS = {
    "contextlib": "the driver's nullcontext",
    "re": "names, quantities, go-yaml's scalars", "_sre": "re's", "sre_compile": "re's (3.10)",
    "sre_parse": "re's (3.10)", "sre_constants": "re's (3.10)", "_locale": "re's (3.10)",
    "enum": "re's, Severity", "copyreg": "re's", "functools": "re's, caches", "_functools": "functools'",
    "collections": "functools'", "_collections": "collections'", "itertools": "collections', diagnostics' line starts",
    "keyword": "collections'", "operator": "collections'", "_operator": "operator's",
    "reprlib": "collections'", "types": "the input models, model.type_forms",
    "math": "go-yaml's numbers", "errno": "a closed output pipe", "gc": "the collector's pause",
    "__future__": "postponed annotations",
    "encodings": "Python's own, at start-up",
}
_CYTHON_RUNTIME = re.compile(r"_cython_\d+_\d+_\d+")  # named after the Cython that built PyYAML


def imported(
    tmp_path: Path, entry: str, *args: str, stdin: bytes = b"", top_level: bool = True
) -> tuple[object, set[str], bytes]:
    """The exit code, the (top-level) modules loaded and stderr of one `entry ARGS` process."""
    found, stderr = run_entry(tmp_path, entry, *args, stdin=stdin, top_level=top_level)
    return found["code"], set(found["modules"]), stderr


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
    assert "msgen" in modules and "re" in modules  # the wrapper did see the render's imports
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


@pytest.mark.parametrize(
    "args", [("render", str(TYPICAL)), *[("render", str(path)) for path in sample_files() if path != TYPICAL]],
    ids=lambda args: Path(args[-1]).name,
)
def test_a_render_compiles_no_source(tmp_path: Path, args: tuple[str, ...]) -> None:
    # Python's first `compile()` of a text in a process builds the AST's ~120 types (about 10 M
    # instructions, 4 % of a cold render), and each later one parses its text. `typing` compiles
    # every string annotation of a NamedTuple and every bound or argument named by its text into
    # a ForwardRef: modules declaring records evaluate their annotations (see msgen.model.plan).
    found, _ = run_entry(tmp_path, "msgen", *args)
    assert found["code"] in (0, None)
    assert found["compiled"] == []


def _krm_compiling_typical() -> bytes:
    """A ResourceList whose function config is the typical job: msgen-krm compiles it."""
    job = TYPICAL.read_text().replace("\n", "\n    ")
    return f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n    {job}\n".encode()


def test_the_krm_function_compiles_no_source(tmp_path: Path) -> None:
    found, _ = run_entry(tmp_path, "msgen-krm", stdin=_krm_compiling_typical())
    assert found["code"] in (0, None)
    assert found["compiled"] == []


#: The console scripts' entry points (pyproject.toml) and the modules importing each may load:
#: their `main` turns the cycle collector off only once they are loaded (msgen.hosts.fast_exit).
#: `__future__` (postponed annotations) is loaded already where msgen is an editable install,
#: by the install's path hook, and by msgen's first module in a wheel install: it may load.
CONSOLE_SCRIPTS = {
    "msgen": ("msgen.hosts.command_line.entry", {"msgen", "msgen.hosts", "msgen.hosts.command_line", "msgen.hosts.command_line.entry", "msgen.hosts.fast_exit", "errno", "__future__"}),
    "msgen-krm": ("msgen.hosts.kustomize.krm_entry", {"msgen", "msgen.hosts", "msgen.hosts.kustomize", "msgen.hosts.kustomize.krm_entry", "__future__"}),
}


@pytest.mark.parametrize("script", sorted(CONSOLE_SCRIPTS))
def test_a_console_scripts_entry_point_loads_little(script: str) -> None:
    # What loads before `main` runs does so with the collector on; typing alone made collections.
    entry, allowed = CONSOLE_SCRIPTS[script]
    code = f"import sys; before = set(sys.modules); import {entry}; print(sorted(set(sys.modules) - before))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert set(ast.literal_eval(done.stdout)) <= allowed


_COLLECTIONS = """
import gc, json, os, sys
entry, out = sys.argv[1], sys.argv[2]
late = []
def while_loading(phase, info):
    # from the moment the entry module has defined `main` (it turns the collector off first
    # thing): while the module itself executes, a collection may still start, before anything
    # of msgen's loads
    if phase == "start" and hasattr(sys.modules.get(entry), "main") and gc.get_freeze_count() == 0:
        late.append(info["generation"])
gc.callbacks.append(while_loading)
real_exit = os._exit
def record_and_exit(status):
    with open(out, "w") as stream:
        json.dump(late, stream)
    real_exit(status)
os._exit = record_and_exit
sys.argv = [entry, *sys.argv[3:]]
__import__(entry, fromlist=["main"]).main()
"""


@pytest.mark.parametrize("script", sorted(CONSOLE_SCRIPTS))
def test_a_console_script_loads_a_renders_modules_without_collecting(tmp_path: Path, script: str) -> None:
    # Collections started after the entry point loaded and before `render_modules_loaded` froze
    # what loaded: none, the collector is off for all of it.
    entry, _ = CONSOLE_SCRIPTS[script]
    out = tmp_path / "late.json"
    job = TYPICAL.read_text().replace("\n", "\n    ")
    resource_list = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n    {job}\n"
    args = ["render", str(TYPICAL)] if script == "msgen" else []
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSGEN_")}
    subprocess.run([sys.executable, "-c", _COLLECTIONS, entry, str(out), *args], input=resource_list.encode(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env, check=True)
    assert json.loads(out.read_text()) == []


def _named(loaded: list[str], expected: set[str]) -> dict[str, set[str]]:
    """What differs from the lists above: msgen's modules exactly, the others within the allowed."""
    mine = {m for m in loaded if m == "msgen" or m.startswith("msgen.")}
    others = {m.split(".")[0] for m in loaded} - {"msgen"}
    return {
        "msgen modules not listed": mine - expected,
        "listed msgen modules not loaded": expected - mine,
        "other modules not allowed": {m for m in others if m not in RENDER_OTHERS and not _CYTHON_RUNTIME.fullmatch(m)},
    }


def test_a_render_loads_the_modules_listed_and_no_other(tmp_path: Path) -> None:
    found, _ = run_entry(tmp_path, "msgen", "render", str(TYPICAL))
    assert found["code"] in (0, None)
    assert _named(found["loaded"], RENDER_MODULES) == _named([], set())  # nothing differs


def test_the_krm_function_loads_the_modules_listed_and_no_other(tmp_path: Path) -> None:
    found, _ = run_entry(tmp_path, "msgen-krm", stdin=_krm_compiling_typical())
    assert found["code"] in (0, None)
    assert _named(found["loaded"], KRM_MODULES) == _named([], set())  # nothing differs


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


def test_pyyaml_loads_only_for_what_the_block_reader_leaves(tmp_path: Path) -> None:
    # Plain block YAML is read by msgen.yamlio.block_reader, strings written by
    # msgen.yamlio.scalar_styles: PyYAML's import was a fifth of a cold render. msgen-krm is
    # given what kustomize sends (its function annotation a literal block); input outside the
    # block reader's part of YAML (an error to explain, an anchor) still loads PyYAML.
    job = TYPICAL.read_text().replace(
        "metadata:\n", "metadata:\n  annotations:\n    config.kubernetes.io/function: |\n"
        "      exec:\n        path: msgen-krm\n    config.kubernetes.io/local-config: 'true'\n", 1,
    ).replace("\n", "\n    ")
    resource_list = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n    {job}\n"
    code, krm, _ = imported(tmp_path, "msgen-krm", stdin=resource_list.encode())
    assert code in (0, None) and "yaml" not in krm
    twice = tmp_path / "twice.yaml"
    twice.write_text(TYPICAL.read_text().replace("kind: MSJob\n", "kind: MSJob\nkind: MSJob\n", 1))
    code, explained, stderr = imported(tmp_path, "msgen", "render", str(twice))
    assert code == 1 and b"duplicate key 'kind'" in stderr and "yaml" in explained
    anchored = tmp_path / "anchored.yaml"
    anchored.write_text(TYPICAL.read_text().replace("replicas: 4", "replicas: &four 4", 1))
    code, read, _ = imported(tmp_path, "msgen", "render", str(anchored))
    assert code in (0, None) and "yaml" in read


_PATTERNS = """
import json, re, sys
compiled, matched = [], set()
real_compile = re._compile
class Watched:
    # a compiled pattern that notes when it is used
    def __init__(self, pattern, key):
        self._pattern, self._key = pattern, key
    def __getattr__(self, name):
        matched.add(self._key)
        return getattr(self._pattern, name)
def compiling(pattern, flags=0):
    key = repr((pattern, int(flags)))
    if (type(pattern), pattern, flags) not in re._cache:
        compiled.append(key)
    return Watched(real_compile(pattern, flags), key)
def compiled_and_used(pattern, flags):
    # re.match, re.search, re.finditer ...: compiled (once, cached) where first used
    key = repr((pattern, int(flags)))
    if isinstance(pattern, str) and (type(pattern), pattern, flags) not in re._cache:
        compiled.append(key)
    matched.add(key)
    return real_compile(pattern, flags)
re.compile = compiling
re._compile = compiled_and_used
out = sys.argv[1]
sys.argv = ["msgen", *sys.argv[2:]]
from msgen.hosts.command_line.entry import run
try:
    run()
except SystemExit:
    pass
with open(out, "w") as stream:
    json.dump({"compiled": compiled, "matched": sorted(matched)}, stream)
"""


def test_a_render_compiles_only_the_patterns_it_matches(tmp_path: Path) -> None:
    # Compiling patterns was a seventh of a cold render's instructions, and a pattern compiled at
    # import costs as much when the render never asks it (bench/README.md): one a typical job
    # does not use is kept as text for re.match, or compiled where first needed.
    out = tmp_path / "patterns.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSGEN_")}
    subprocess.run([sys.executable, "-c", _PATTERNS, str(out), "render", str(TYPICAL)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env, check=True)
    found = json.loads(out.read_text())
    assert found["compiled"], "the wrapper saw no pattern compiled"
    assert [key for key in found["compiled"] if key not in found["matched"]] == []
