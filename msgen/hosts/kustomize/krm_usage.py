"""`msgen-krm`'s own command line: --help and --version, answered without reading stdin.

kustomize runs the function with no arguments and a ResourceList on standard input; a person
trying `msgen-krm --help` should get help, not a process waiting on (or complaining about)
standard input.
"""

from __future__ import annotations

import sys

USAGE = """Usage: msgen-krm [--help | --version]

  msgen as a kustomize KRM function: reads one config.kubernetes.io/v1 ResourceList on
  standard input and writes it to standard output with every job msgen compiles among its
  items replaced by its Kubernetes objects (as a transformer), or the function config's job
  compiled (as a generator). Options come from the function config's data and from msgen/
  annotations. kustomize runs it, with no arguments:

    kustomize build --enable-alpha-plugins --enable-exec DIR

  To render files yourself: msgen render PATH.

Options:
  --version   Show the version and exit.
  -h, --help  Show this message and exit.
"""


def command_line(argv: list[str]) -> None:
    """Answer --help and --version without reading standard input; refuse other arguments
    (kustomize passes none), exit 2, as a usage error."""
    if not argv:
        return
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(USAGE)
        raise SystemExit(0)
    if argv == ["--version"]:
        from ... import __version__

        sys.stdout.write(f"msgen-krm, version {__version__}\n")
        raise SystemExit(0)
    sys.stderr.write(
        "Usage: msgen-krm [--help | --version]\nTry 'msgen-krm --help' for help.\n\n"
        f"Error: msgen-krm takes no arguments, got {' '.join(argv)!r}; accepted: none (a "
        "ResourceList on standard input), --help or --version\n"
    )
    raise SystemExit(2)
