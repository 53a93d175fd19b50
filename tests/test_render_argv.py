"""`msgen render`'s command line read without click (`msgen.hosts.command_line.render_argv`) against click's reading.

The entry point reads a plain render command line itself, so that a render does not import
click; it must never read one differently from click, and must leave to click whatever it is
not sure of. These tests compare both on many command lines, and hold `RENDER` (the table
that describes click's `render` command) equal to what click's command says today.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import click
import pytest

from msgen.hosts.command_line import render_argv
from msgen.hosts.command_line.cli import render

from .conftest import SAMPLES, msgen_process

TYPICAL = str(SAMPLES / "mindspore" / "widedeep-gpu-dataparallel.yaml")


def test_the_table_describes_clicks_render_command() -> None:
    assert render_argv.describe(render) == render_argv.RENDER, (
        "RENDER in msgen/hosts/command_line/render_argv.py is stale: run python -m msgen.hosts.command_line.render_argv "
        "(python -m tests.generators.option_documents --write rewrites it too)"
    )


def clicks_reading(args: list[str]) -> dict[str, Any] | None:
    """The parameters click passes to `render` for `msgen render ARGS`, or None when it refuses."""
    try:
        with render.make_context("render", list(args)) as ctx:
            return dict(ctx.params)
    except (click.ClickException, click.exceptions.Exit):
        return None


def _command_lines(tmp_path: Path) -> list[list[str]]:
    existing = tmp_path / "out.yaml"
    existing.write_text("old\n")
    values = {
        "--target": ["pod", "jobset", "Pod", ""], "-t": ["volcano", "nope"],
        "--kube-version": ["1.29", "1.2x", "2.0", "1.99", "1.38", "v1.37.1"], "--namespace": ["team-a", "Team_A", "", " team-b "],
        "-n": ["ns"], "--scheduler-address": ["dns", "ip"], "--gang-scheduler": ["volcano", "x"],
        "--kueue-queue": ["q", "Q!", "", " q "], "--launcher": ["msrun", "mpirun"],
        "--rank-table": ["operator", "file"], "--shm-size": ["32Gi", "lots"],
        "--accelerator-type": ["module-910b-8", "has space"], "--recovery-volume": ["state", "Bad_Name"],
        "--output": [str(existing), str(tmp_path), str(tmp_path / "new.yaml"), str(tmp_path / "no" / "x.yaml"), "-"],
        "-o": [str(tmp_path / "o.yaml"), "-", "json", "yaml", "jsonpath={.items}", "jsonpath", "wide=x"], "--format": ["json", "yml"],
    }
    lines: list[list[str]] = [[], [TYPICAL], ["-"], [TYPICAL, TYPICAL], ["--", TYPICAL], ["-h"],
                              ["--help"], [TYPICAL, "--help"], ["-tpod", TYPICAL], ["--bogus", TYPICAL],
                              ["--target"], [TYPICAL, "--target"], ["--target", "--format", "json"],
                              ["--argocd-sync-waves", TYPICAL], ["--allow-env-override"],
                              ["--argocd-sync-waves=1", TYPICAL], ["-nteam", TYPICAL], ["--target=", TYPICAL]]
    for option, choices in values.items():
        for value in choices:
            lines += [[option, value, TYPICAL], [TYPICAL, option, value]]
            if option.startswith("--"):
                lines.append([f"{option}={value}", TYPICAL])
    lines += [["--target", "pod", "--target", "jobset", TYPICAL], ["-t", "pod", "--target", "pod"]]
    options = [["--target", "pod"], ["-n", "team-a"], ["--argocd-sync-waves"], ["--format", "json"]]
    for count in (2, 3):
        for chosen in itertools.permutations(options, count):
            lines.append([*itertools.chain.from_iterable(chosen), TYPICAL, "-"])
    return lines


@pytest.mark.parametrize("kube_version_env", [None, "1.30", "", "x.y"])
def test_it_reads_as_click_does_or_leaves_it_to_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kube_version_env: str | None
) -> None:
    if kube_version_env is None:
        monkeypatch.delenv("KUBE_VERSION", raising=False)
    else:
        monkeypatch.setenv("KUBE_VERSION", kube_version_env)
    import os

    read = 0
    for args in _command_lines(tmp_path):
        ours = render_argv.parse(["render", *args], os.environ)
        if ours is None:
            continue
        read += 1
        assert ours == clicks_reading(args), args
    assert read > (50 if kube_version_env != "x.y" else 5)  # x.y: only --kube-version lines


def test_the_plain_command_lines_hosts_use_are_read_without_click(tmp_path: Path) -> None:
    import os

    for args in ([TYPICAL], ["--target", "pod", TYPICAL], ["-t", "jobset", "-n", "training", "-"],
                 ["--kube-version=1.29", "--argocd-sync-waves", str(SAMPLES)],
                 ["--format", "json", "-o", str(tmp_path / "out.json"), TYPICAL]):
        assert render_argv.parse(["render", *args], os.environ) == clicks_reading(args), args


def test_other_commands_are_clicks() -> None:
    import os

    for argv in (["validate", TYPICAL], ["--help"], ["schema"], [], ["--version"]):
        assert render_argv.parse(argv, os.environ) is None


@pytest.mark.parametrize(
    "args, status, stderr",
    [(["render", "--bogus", TYPICAL], 2, "No such option '--bogus'"),
     (["render", "--target", "nope", TYPICAL], 2, "'nope' is not one of"),
     (["render", "--kube-version", "1.x", TYPICAL], 2, "--kube-version"),
     (["render", "missing.yaml"], 2, "no such file or directory: missing.yaml")],
)
def test_what_it_leaves_to_click_is_reported_by_click(args: list[str], status: int, stderr: str) -> None:
    done = msgen_process(*args)
    assert done.exit_code == status
    assert stderr in done.stderr
    assert done.stdout == ""
