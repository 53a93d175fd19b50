"""What `msgen render -o/--output` accepts: a file to write, or `-` for standard output.

Kept without click: click's `render` command checks --output with it (`cli._output`), and so
does the click-free reader of a plain render's command line (`render_argv`).
"""

from __future__ import annotations

import os

#: What kubectl's `-o` takes: a format. msgen's `-o` names the file to write, so one of these
#: is most likely a format meant, and writing a file of that name would surprise.
KUBECTL_FORMATS = ("json", "yaml", "wide", "name")
KUBECTL_TEMPLATE_FORMATS = (
    "jsonpath", "jsonpath-file", "jsonpath-as-json", "go-template", "go-template-file",
    "template", "templatefile", "custom-columns", "custom-columns-file",
)  # fmt: skip


def output_problem(value: str | None) -> str | None:
    """Why `value` is refused as --output, or None."""
    if value is None or value == "-":
        return None
    template = "=" in value and value.partition("=")[0] in KUBECTL_TEMPLATE_FORMATS
    if value in KUBECTL_FORMATS or template:
        return (
            f"{value!r} looks like kubectl's -o FORMAT, but msgen's -o names the file to write; "
            f"accepted: a file name (./{value} writes a file of that name) or - for standard "
            "output; the format is --format yaml (the default) or --format json"
        )
    if not output_directory_exists(value):
        return (
            f"no such directory: {os.path.dirname(value) or '.'}; accepted: a file in a "
            "directory that exists"
        )
    return None


def output_directory_exists(output: str) -> bool:
    return os.path.isdir(os.path.dirname(os.path.realpath(output)))
