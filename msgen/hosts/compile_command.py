"""What `msgen render` and the commands built on it do once their options are read.

Kept apart from the click commands in `cli.py` so that a plain `msgen render`, whose command
line `render_argv` reads without click, runs without importing click at all (about a fifth
of a cold render's start-up). click is imported here only to report something: a usage
error, or diagnostics, which go through `click.echo` exactly as before.

Exit status: 0 ok (warnings allowed), 1 the input has errors, 2 the command line is wrong
(`msgen.model.exit_status` names every status). Every command runs inside one error boundary,
`guarded`: a bug in msgen is one line and EXIT_INTERNAL, Ctrl-C is EXIT_INTERRUPTED.
"""

from __future__ import annotations

import os
import sys

from ..model.diagnostics import Diagnostic, LineReader, distinct, report_lines
from ..model.exit_status import EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED
from ..model.plan import Options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, NoReturn
    from collections.abc import Iterator, Mapping

    from ..compile.driver import Compilation, Sink
    from ..model.source import Document, Source

def options_from(kwargs: dict[str, Any], given: Mapping[str, str] | None = None) -> Options:
    """The compile options of a command's parsed parameters (see `cli.compile_options`): one
    per option the command line takes (`msgen.options.option_table`), named as its `Options` field.

    `given`: field → how the user set it (`--target`, or an environment variable such as
    KUBE_VERSION) for each option not left at its default; None: ask click's current
    command. They become `Options.origins`, so that a job's `msgen/<option>` annotation that
    overrides one says which value lost, as it does for a plug-in host's options."""
    from ..options.option_table import ROWS

    options = Options(**{row.field: kwargs[row.field] for row in ROWS if "cli" in row.hosts})
    given = _given_by_click() if given is None else given
    origins = tuple(
        (row.name, f"{given[row.field]}={_as_text(getattr(options, row.field))!r}")
        for row in ROWS
        if row.field in given
    )
    return options._replace(origins=origins) if origins else options


def _given_by_click() -> dict[str, str]:
    """For the running click command: field → the option or environment variable that set it."""
    click = sys.modules.get("click")
    context = click.get_current_context(silent=True) if click is not None else None
    if context is None:
        return {}
    from click.core import ParameterSource

    from ..options.option_table import ROWS

    given = {}
    for row in ROWS:
        source = context.get_parameter_source(row.field)
        if source is ParameterSource.COMMANDLINE:
            given[row.field] = f"--{row.name}"
        elif source is ParameterSource.ENVIRONMENT and row.envvar:
            given[row.field] = row.envvar
    return given


def _as_text(value: Any) -> str:
    """An option's value as a user writes it (`1.31`, `true`)."""
    if isinstance(value, tuple):
        return ".".join(str(part) for part in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render(
    output: str | None,
    output_format: str,
    kwargs: dict[str, Any],
    given: Mapping[str, str] | None = None,
) -> None:
    """`msgen render` once its command line is read and the --output directory checked;
    `given` as `options_from` takes it."""
    from ..yamlio.spool import Spool

    # Written job by job to a spool, shown only when every job compiled (see spool.py).
    with Spool(output_format) as spool:
        compile_paths(list(kwargs.pop("paths")), options_from(kwargs, given), sink=spool.add)
        if output is None:
            spool.deliver()
        else:
            from ..yamlio.atomic_file import OutputError

            try:
                spool.deliver(output)
            except OutputError as exc:
                _echo_error(f"msgen: cannot write the output: {exc}")
                raise SystemExit(EXIT_INPUT) from None


def compile_paths(
    given: list[str],
    options: Options,
    locate: Callable[[Document], Document] | None = None,
    sink: Sink | None = None,
    summary: str = "msgen: {errors} error(s); nothing was written",
    strict: bool = False,
) -> Compilation:
    """Compile `given` paths; report diagnostics; exit 1 on errors, else the Compilation.

    `summary` is the last line after errors (`{errors}` is their number): what the command
    did about them. `options.quiet` leaves warnings out of the report; `strict` reports them
    (quiet or not) and exits 1 when there is any, as for errors (`msgen validate --strict`).

    With `sink`, each document's objects go to it as they compile, files are read one at a
    time, and the Compilation keeps no objects (see driver.compile_stream); a document that
    passes through reaches it as written (`yamlio.verbatim`: the YAML output keeps its text).
    """
    from ..compile import collector
    from ..compile.driver import compile_sources, compile_stream
    from ..yamlio.inputs import MissingPath, Refused, expand_paths, open_source, read_source, refusal

    try:
        paths = expand_paths(given)
    except MissingPath as exc:
        import click

        raise click.BadParameter(f"no such file or directory: {exc}", param_hint="PATH") from None
    read_errors: list[Diagnostic] = []

    def sources() -> Iterator[Source]:
        for path in paths:
            if isinstance(path, Refused):
                read_errors.append(refusal(path))
                continue
            source, error = (read_source if sink is None else open_source)(path)
            if error is not None:
                read_errors.append(error)
            if source is not None:
                yield source

    if sink is None:
        compilation = compile_sources(list(sources()), options, locate, collector.paused)
    else:
        compilation = compile_stream(sources(), options, sink, locate, collector.paused, verbatim=True)
    compilation.diagnostics[:0] = read_errors
    if compilation.ok and not read_errors and compilation.documents == 0:
        names = [p if p != "-" else "<stdin>" for p in paths]
        shown = ", ".join(names) or "the given directories"
        compilation.diagnostics.append(no_documents(shown, names[0] if names else None))
    reported = compilation.diagnostics
    unshown = (compilation.unshown_findings, compilation.unshown_errors)
    if options.quiet and not strict:
        reported = [d for d in reported if d.is_error]
        unshown = (unshown[1], unshown[1])
    report(reported, compilation.sources, unshown, summary)
    if not compilation.ok:
        raise SystemExit(EXIT_INPUT)
    warnings = sum(not d.is_error for d in distinct(reported)) + unshown[0] - unshown[1]
    if strict and warnings:
        _echo_error(f"msgen: {warnings} warning(s), which --strict makes fail")
        raise SystemExit(EXIT_INPUT)
    return compilation


def no_documents(where: str, file: str | None = None) -> Diagnostic:
    """The error for input without a single document, at line 1 of `file` (the first one
    read): an empty file, or one of comments, `---`, `...` or a byte-order mark only."""
    from ..model.diagnostics import Position, Severity

    return Diagnostic(
        Severity.ERROR,
        f"no YAML documents found in {where}; accepted: files holding at least one object",
        Position(file, 1, 1) if file is not None else None,
    )


def report(
    diagnostics: list[Diagnostic],
    sources: dict[str, Any],
    unshown: tuple[int, int] = (0, 0),
    summary: str = "msgen: {errors} error(s); nothing was written",
) -> None:
    """Print the findings, then `summary` when there are errors; `unshown` counts (findings,
    errors) a stream did not keep."""
    if not diagnostics:
        return
    # A streamed source is not read whole: only the lines the shown findings point at.
    from ..model.source import StreamedSource

    texts: dict[str, str | LineReader] = {
        name: source if isinstance(source, StreamedSource) else source.text
        for name, source in sources.items()
    }
    for line in report_lines(diagnostics, texts, unshown):
        _echo_error(line)
    errors = sum(d.is_error for d in distinct(diagnostics)) + unshown[1]
    if errors:
        _echo_error(summary.format(errors=errors))


def _echo_error(line: str) -> None:
    """One line to standard error, as `click.echo(line, err=True)` writes msgen's messages
    (plain text, no styles), without importing click for a render that only warns."""
    stream = sys.stderr
    stream.write(line + "\n")
    stream.flush()


def internal_error(program: str, exc: Exception) -> str:
    """The error boundary of every host: a bug in msgen (any exception that is not a reported
    input error) becomes this one message and exit EXIT_INTERNAL; with MSGEN_DEBUG set, `exc`
    is raised again, with its traceback."""
    if os.environ.get("MSGEN_DEBUG"):
        raise exc
    return (
        f"{program}: internal error: {type(exc).__name__}: {exc}; this is a bug in msgen, "
        "please report it with the input (MSGEN_DEBUG=1 shows the traceback)"
    )


def guarded(command: Callable[[], object], program: str = "msgen") -> None:
    """Run `command` inside the error boundary of every command: the status it exits with
    passes; Ctrl-C is `interrupted`; any other exception is a bug (`internal_error`)."""
    try:
        command()
    except KeyboardInterrupt:
        interrupted()
    except Exception as exc:  # only a bug in msgen gets here
        _echo_error(internal_error(program, exc))
        raise SystemExit(EXIT_INTERNAL) from None


def interrupted(message: str = "Aborted!") -> NoReturn:
    """Ctrl-C: `message` on its own line (the terminal's `^C` stays on the one before), and
    EXIT_INTERRUPTED, as a shell reports a command its SIGINT ended."""
    _echo_error("\n" + message)
    raise SystemExit(EXIT_INTERRUPTED) from None
