"""`msgen.options.option_table` is the one list of options: every host reads it, the documents repeating
it are generated from it (`python -m tests.generators.option_documents --write`), and what it derives from
`plan.Options` (choices, defaults, flags) is what each host accepts."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
import yaml

from msgen.hosts.command_line.cli import render
from msgen.model.plan import Options, TargetName
from msgen.model.type_forms import arguments
from msgen.options import option_table
from msgen.options import text as options
from msgen.options.option_table import ROWS, Row
from msgen.targets import NAMES as TARGET_NAMES

from .conftest import ROOT, SAMPLES, msgen
from .generators import option_documents
from .multi_device_pods import ASCEND, MS
from .test_errors import fails
from .test_frameworks_mindspore import render as rendered

#: Options fields no host sets as text: what Argo CD's KUBE_API_VERSIONS says, who set what, and
#: the namespace a host places objects in itself (Argo CD's destination, inside its kustomize build).
NOT_OPTIONS = {"served_apis", "origins", "destination_namespace"}


def test_plugin_yaml_announces_what_the_table_says() -> None:
    text = option_documents.PLUGIN.read_text(encoding="utf-8")
    assert option_documents.with_parameters(text) == text, (
        "overlays/argocd/plugin.yaml's parameters are stale: run python -m tests.generators.option_documents --write"
    )
    announced = yaml.safe_load(text)["spec"]["parameters"]["static"]
    assert announced == [
        {"name": row.name, "title": row.title, "tooltip": row.tooltip} for row in ROWS if "argocd" in row.hosts
    ]


def test_the_generator_mends_stale_announcements() -> None:
    text = option_documents.PLUGIN.read_text(encoding="utf-8")
    stale = text.replace("title: Run name", "title: Run")
    assert stale != text and option_documents.with_parameters(stale) == text
    with pytest.raises(ValueError, match="no line 'parameters:'"):
        option_documents.with_parameters(text.replace("  parameters:\n", "  parameter:\n"))


def test_the_check_command_passes_on_the_checked_in_files() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.generators.option_documents", "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_every_option_field_has_one_row() -> None:
    fields = [row.field for row in ROWS]
    assert len(set(fields)) == len(fields) and len({row.name for row in ROWS}) == len(ROWS)
    assert set(fields) == set(Options._fields) - NOT_OPTIONS
    assert all(row.hosts <= option_table.HOSTS and row.hosts for row in ROWS)


def test_choices_come_from_the_fields_types() -> None:
    by_name = option_table.BY_NAME
    assert option_table.choices(by_name["target"]) == arguments(TargetName) == TARGET_NAMES
    assert option_table.choices(by_name["launcher"]) == ("per-device", "msrun", "none")  # `| None`
    assert option_table.choices(by_name["gitops"]) == ("true", "false")
    assert option_table.choices(by_name["shm-size"]) is None
    free = [row.name for row in ROWS if option_table.choices(row) is None]
    assert all(by_name[name].check is not None for name in free), "free text must say how it is checked"


def test_the_command_line_is_the_table() -> None:
    params = {p.name: p for p in render.params if isinstance(p, click.Option)}
    for row in ROWS:
        param = params[row.field]
        assert param.opts == [f"--{row.name}", *([row.short] if row.short else [])]
        assert param.help == row.help
        assert param.is_flag == option_table.is_flag(row)
        accepted = option_table.choices(row)
        if isinstance(param.type, click.Choice):
            assert tuple(param.type.choices) == accepted
        else:
            assert accepted is None or param.is_flag
        if option_table.default_text(row) is not None:
            assert (param.default, param.show_default) == (option_table.default_text(row), True)
    assert option_table.default_text(option_table.BY_NAME["kube-version"]) == "1.37"


def test_each_host_takes_the_rows_that_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from msgen.options import argocd_env

    only_cli = Row("gitops", "gitops", help="", title="", tooltip="", help_order=0, hosts=frozenset({"cli"}))
    rows = tuple(only_cli if row.name == "gitops" else row for row in ROWS)
    monkeypatch.setattr(option_table, "ROWS", rows)
    for host in ("annotation", "krm", "argocd"):
        with pytest.raises(options.OptionError, match="unknown msgen option 'gitops'"):
            options.apply(Options(), {"gitops": "true"}, host=host)
    assert options.apply(Options(), {"gitops": "true"}, host="cli").gitops is True
    assert "ARGOCD_ENV_MSGEN_GITOPS" not in argocd_env.env_variables()
    with pytest.raises(options.OptionError, match="unknown msgen variable"):
        argocd_env.env_layer({"ARGOCD_ENV_MSGEN_GITOPS": "true"})


def test_an_empty_text_unsets_only_where_the_table_says() -> None:
    queue = option_table.BY_NAME["kueue-queue"]
    assert options.value_of(queue, "msgen/kueue-queue", "") is None
    with pytest.raises(options.OptionError, match="is not accepted: must be a lowercase RFC 1123 label"):
        options.value_of(queue, "--kueue-queue", "", empty_unsets=False)
    with pytest.raises(options.OptionError, match="is not accepted: must be a lowercase RFC 1123 label"):
        options.value_of(option_table.BY_NAME["namespace"], "msgen/namespace", "")


def test_the_command_line_reads_text_as_annotations_do() -> None:
    sample = str(SAMPLES / "mindspore" / "lenet-cpu.yaml")
    run = msgen("render", "--namespace", " team-a ", "--kueue-queue", " q ", sample)
    assert run.exit_code == 0, run.stderr
    objects = run.objects()
    assert {o["metadata"]["namespace"] for o in objects} == {"team-a"}
    assert {o["metadata"].get("labels", {}).get("kueue.x-k8s.io/queue-name") for o in objects} >= {"q"}
    refused = msgen("render", "--kueue-queue", "", sample)
    assert refused.exit_code == 2 and "'' is not accepted: must be a lowercase RFC 1123 label" in refused.stderr


def test_options_come_from_annotations_and_the_command_line_alike() -> None:
    text = (MS / "gpu-2x8.yaml").read_text()
    annotated = text.replace("  name: ms-resnet50-gpu\n", "  name: ms-resnet50-gpu\n  annotations:\n    msgen/launcher: msrun\n")
    assert rendered("-", input=annotated) == rendered("-", "--launcher", "msrun", input=text)




def test_bad_option_values() -> None:
    text = ASCEND.replace("msgen/shm-size: 32Gi", "msgen/shm-size: lots")
    err = fails(text)
    assert "metadata.annotations.msgen/shm-size: 'lots' is not accepted; accepted: a size such as 16Gi or 512Mi" in err
    run = msgen("render", str(MS / "ascend-2x8.yaml"), "--accelerator-type", "bad value!")
    assert run.exit_code == 2 and "'bad value!' is not accepted: must consist of letters" in run.stderr
