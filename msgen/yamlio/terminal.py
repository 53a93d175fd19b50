"""A command that reads standard input says so when that input is a person at a terminal.

`msgen render` with no path reads stdin, as does `msgen-krm` (kustomize pipes it a
ResourceList). Typed with no input, either would wait in silence, which looks like a hang.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO


def note_terminal_stdin(program: str, expected: str, usage: str, stream: TextIO | None = None) -> None:
    """Tell the person at the terminal that `program` is reading `expected` from it."""
    stdin = sys.stdin if stream is None else stream
    try:
        interactive = stdin.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream is not a terminal
        interactive = False
    if interactive:
        print(
            f"{program}: reading {expected} from standard input (a terminal); end it with "
            f"Ctrl-D, or interrupt with Ctrl-C. {usage}",
            file=sys.stderr,
            flush=True,
        )
