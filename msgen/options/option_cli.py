"""The command line's options, built from `msgen.options.option_table` (the only list of them).

Each row the `cli` host takes becomes one click option: `--<name>` (and its short form), a
`Choice` of the `Options` field's `Literal`, a flag for a `bool`, else text checked as a
job's annotation is checked; the field's default, shown in --help; listed in the rows'
`help_order`. `compile_command.options_from` turns the parsed parameters back into `Options`
with the same table.
"""

from __future__ import annotations

from typing import Any, Callable

import click

from ..model import versions
from .option_table import BY_FIELD, ROWS, Row, choices, default_text, is_flag


def _kube_version(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, int]:
    try:
        version = versions.parse(value)
    except ValueError as exc:
        if _from_environment(ctx, param):  # the user gave no --kube-version: name the variable
            hint = f"{param.envvar} in the environment (--kube-version overrides it)"
            raise click.BadParameter(str(exc), param_hint=hint) from None
        raise click.BadParameter(str(exc)) from None
    if version > versions.NEWEST:  # a cluster newer than msgen: render, but say so
        given = "KUBE_VERSION" if _from_environment(ctx, param) else "--kube-version"
        click.echo(f"msgen: warning: {given} {value}: {versions.newer_than_known(version)}", err=True)
        return versions.NEWEST
    return version


def _from_environment(ctx: click.Context, param: click.Parameter) -> bool:
    source = ctx.get_parameter_source(param.name) if param.name else None
    return source is click.core.ParameterSource.ENVIRONMENT


def _option_text(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check a free-text option as a job annotation's value is checked (an empty value too:
    on the command line, leaving an option out is how it stays unset)."""
    from . import text as option_text

    if value is None or param.name is None:
        return value
    row = BY_FIELD[param.name]
    try:
        result: str | None = option_text.value_of(row, row.name, value.strip(), empty_unsets=False)
    except option_text.OptionError as exc:
        raise click.BadParameter(str(exc).split(": ", 1)[-1]) from None
    return result


def _option(row: Row) -> Callable[..., Any]:
    declarations = [f"--{row.name}", *([row.short] if row.short else []), row.field]
    settings: dict[str, Any] = {"help": row.help}
    accepted = choices(row)
    if is_flag(row):
        settings["is_flag"] = True
    elif accepted is not None:
        settings["type"] = click.Choice(list(accepted))
    elif row.check == "version":
        settings["callback"] = _kube_version
    else:
        settings["callback"] = _option_text
    shown = default_text(row)
    if shown is not None:
        settings.update(default=shown, show_default=True)
    if row.envvar:
        settings["envvar"] = row.envvar
    if row.metavar:
        settings["metavar"] = row.metavar
    return click.option(*declarations, **settings)


def click_options() -> list[Callable[..., Any]]:
    """The decorators of every option the command line takes, in --help's order."""
    rows = sorted((row for row in ROWS if "cli" in row.hosts), key=lambda row: row.help_order)
    return [_option(row) for row in rows]
