"""Reading the user's inputs: files, directories (sorted, recursive) and standard input."""

from __future__ import annotations

import os
import sys

from .diagnostics import Diagnostic, Position, Severity
from .source import Source
from .terminal import note_terminal_stdin

YAML_SUFFIXES = (".yaml", ".yml")
#: kustomize's own files live beside manifests; they are instructions to kustomize, not objects.
SKIPPED_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


class MissingPath(Exception):
    pass


def expand_paths(paths: list[str]) -> list[str]:
    """Every file to read, in order: directories become their YAML files, sorted."""
    out: list[str] = []
    for path in paths or ["-"]:
        if path == "-":
            out.append(path)
        elif os.path.isdir(path):
            found = []
            for root, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for name in files:
                    if name.endswith(YAML_SUFFIXES) and name not in SKIPPED_FILES:
                        found.append(os.path.join(root, name))
            from pathlib import Path  # only for a directory: a file's render does without it

            out.extend(sorted(found, key=lambda p: Path(p).relative_to(path).as_posix()))
        elif os.path.isfile(path):
            out.append(path)
        else:
            raise MissingPath(path)
    return out


def read_source(path: str) -> tuple[Source | None, Diagnostic | None]:
    name = "<stdin>" if path == "-" else path
    if path == "-":
        note_terminal_stdin("msgen", "YAML", "To read files instead: msgen COMMAND PATH... (msgen --help).")
    if path == "-":
        raw = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as stream:
            raw = stream.read()
    try:
        return Source(name, raw.decode("utf-8-sig")), None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, Diagnostic(
            Severity.ERROR,
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); accepted: YAML in UTF-8",
            Position(name, line, column),
        )
