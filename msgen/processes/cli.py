"""Command-line options for multi-device pods, kept beside the behaviour they choose."""

from __future__ import annotations

from typing import Any, Callable

import click

from ..plan import Options


def _option_text(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check a free-text option as a job annotation's value is checked."""
    from .. import options as option_text

    if value is None or param.name is None:
        return value
    name = param.name.replace("_", "-")
    try:
        changed = option_text.apply(Options(), {name: value})
    except option_text.OptionError as exc:
        raise click.BadParameter(str(exc).split(": ", 1)[-1]) from None
    result: str | None = getattr(changed, param.name)
    return result


def cli_options() -> list[Callable[..., Any]]:
    """Options for multi-device pods: launchers, rank tables, Ascend and recovery settings."""
    return [
        click.option(
            "--launcher",
            type=click.Choice(["per-device", "msrun", "none"]),
            help="Who starts one MindSpore process per device in a Worker pod that asks for "
            "several: per-device = msgen's launcher script (default for MSJob); msrun = "
            "MindSpore's msrun; none = the command fans out itself (default for AscendJob).",
        ),
        click.option(
            "--rank-table",
            type=click.Choice(["none", "operator"]),
            default="none",
            show_default=True,
            help="Ascend rank table: none = MindSpore's dynamic cluster; operator = the "
            "ConfigMap rings-config-<workload> that the cluster's Ascend components fill "
            "(targets volcano and statefulset).",
        ),
        click.option(
            "--shm-size",
            callback=_option_text,
            help="Size of the memory-backed /dev/shm of Ascend pods (default 16Gi).",
        ),
        click.option(
            "--accelerator-type",
            callback=_option_text,
            help="Ascend chip as the node label accelerator-type names it (module-910b-8, "
            "module-a3-16, ...): Ascend pods get that node selector.",
        ),
        click.option(
            "--recovery-volume",
            callback=_option_text,
            help="Enable MindSpore disaster recovery: MS_ENABLE_RECOVERY=1 (a restarted "
            "process rejoins the cluster) and MS_RECOVERY_PATH = where this volume of the pod "
            "template is mounted (read by older releases; MindSpore 2.10 reads only the first).",
        ),
    ]
