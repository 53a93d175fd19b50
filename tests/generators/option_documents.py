"""The files that repeat `msgen.options.option_table`, rewritten from it: `python -m tests.generators.option_documents`.

- `overlays/argocd/plugin.yaml`: the Application parameters the plugin announces (everything
  after its `parameters:` line);
- README.md's generated blocks (`tests.generators.reference`), the option table among them;
- `render_argv.RENDER`, the description of `msgen render`'s command line.

`--write` rewrites those that differ; `--check` lists them and exits 1. A development command:
it works in msgen's source tree (an installed msgen has no plugin.yaml or README beside it).
Tests fail while a file differs, naming this command, so nobody edits these by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from msgen.options.option_table import ROWS

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "overlays" / "argocd" / "plugin.yaml"
#: plugin.yaml's hand-written part ends with this line; the announcements follow it
PARAMETERS_LINE = "  parameters:\n"
COMMAND = "python -m tests.generators.option_documents --write"


def plugin_parameters() -> str:
    """plugin.yaml's `parameters:` body: every option the Argo CD plugin takes, no default
    announced (see the comment above it in plugin.yaml)."""
    lines = ["    static:"]
    for row in ROWS:
        if "argocd" in row.hosts:
            lines += [
                f"      - name: {row.name}",
                f"        title: {row.title}",
                f"        tooltip: {json.dumps(row.tooltip, ensure_ascii=False)}",
            ]
    return "\n".join(lines) + "\n"


def with_parameters(text: str) -> str:
    """plugin.yaml's `text` with the announcements as the table says; ValueError when it has
    no `parameters:` line."""
    head, found, _old = text.partition(PARAMETERS_LINE)
    if not found:
        raise ValueError(f"{PLUGIN} has no line {PARAMETERS_LINE.strip()!r}")
    return head + PARAMETERS_LINE + plugin_parameters()


def stale() -> list[tuple[Path, str]]:
    """Each generated file that differs from what the table says, with its wanted text."""
    from . import reference
    from msgen.hosts.command_line import render_argv

    found = []
    for path, rewrite in (
        (PLUGIN, with_parameters),
        (reference.README, reference.with_blocks),
        (Path(render_argv.__file__), render_argv.with_table),
    ):
        text = path.read_text(encoding="utf-8")
        wanted = rewrite(text)
        if wanted != text:
            found.append((path, wanted))
    return found


def main(argv: list[str] | None = None) -> int:
    """`--write`: rewrite the stale files; `--check`: name them and exit 1."""
    args = sys.argv[1:] if argv is None else argv
    if args not in (["--write"], ["--check"]):
        print("usage: python -m tests.generators.option_documents --write | --check", file=sys.stderr)
        return 2
    found = stale()
    for path, wanted in found:
        if args == ["--write"]:
            path.write_text(wanted, encoding="utf-8")
            print(f"wrote {path}")
        else:
            print(f"{path} is stale: run {COMMAND}", file=sys.stderr)
    return 1 if found and args == ["--check"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
