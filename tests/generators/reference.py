"""README tables generated from the code's own lists, so the documentation cannot drift.

`tests/test_readme.py` compares each README block between `<!-- msgen:NAME -->` and
`<!-- /msgen:NAME -->` with what `BLOCKS[NAME]()` returns; `python -m tests.generators.reference --write`
rewrites them (`--check` says whether one is stale). The option names, their spellings per
front end, the object order and the sync waves come from the same tables the code reads.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable

from msgen.options import option_table
from msgen.options.argocd_env import ENV_PREFIX, env_name
from msgen.options.helm_env import variable as helm_variable
from msgen.options.text import ANNOTATION_PREFIX
from msgen.compile.pipeline import KIND_RANK

README = Path(__file__).resolve().parents[2] / "README.md"


def options_table() -> str:
    """Every option as each front end spells it, and the values it accepts."""
    rows = [
        "| option (`msgen render`) | job annotation | KRM `data` key | Argo CD env | Argo CD parameter | Helm env | accepted |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in option_table.ROWS:
        accepted = option_table.choices(row)
        values = ", ".join(f"`{v}`" for v in accepted) if accepted else "text"
        name, hosts = row.name, row.hosts
        if option_table.is_flag(row):  # the command line takes the flag alone, no value
            short = f" (`{row.short}`)" if row.short else ""
            values = f"a flag{short}" if hosts == {"cli"} else f"{values}; `--{name}` alone on the command line"
        cells = [
            f"`--{name}`" if "cli" in hosts else "-",
            f"`{ANNOTATION_PREFIX}{name}`" if "annotation" in hosts else "-",
            f"`{name}`" if "krm" in hosts else "-",
            f"`{ENV_PREFIX}{env_name(name)}`" if "argocd" in hosts else "-",
            f"`{name}`" if "argocd" in hosts else "-",
            f"`{helm_variable(name)}`" if "helm" in hosts else "-",
            values,
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def object_order() -> str:
    """The order objects come out in, and which of them get Argo CD sync wave -1."""
    ranks: dict[int, list[str]] = {}
    for kind, rank in KIND_RANK.items():
        ranks.setdefault(rank, []).append(f"`{kind}`")
    groups = [" and ".join(kinds) for _, kinds in sorted(ranks.items())]
    early = ", ".join(f"`{kind}`" for kind in KIND_RANK)
    return (
        f"Objects come out in this order: {', then '.join(groups)}, then the workloads in role "
        "order (Scheduler, PS, Worker); objects that pass through keep their place. With "
        f"`--argocd-sync-waves`, the {early} msgen makes get sync wave -1 and its workloads wave 0 "
        "(objects that pass through keep their own annotations)."
    )


BLOCKS: dict[str, Callable[[], str]] = {"options": options_table, "object-order": object_order}


def block(name: str) -> re.Pattern[str]:
    """The README's generated block `name`: its start marker, its text, its end marker."""
    return re.compile(rf"(<!-- msgen:{re.escape(name)} -->\n)(.*?)(<!-- /msgen:{re.escape(name)} -->)", re.S)


def with_blocks(text: str) -> str:
    """`text` (the README) with every generated block as the code says it today; raises
    ValueError for a block the README lacks."""
    for name, generate in BLOCKS.items():
        found = block(name).search(text)
        if found is None:
            raise ValueError(f"README.md has no <!-- msgen:{name} --> block")
        text = text[: found.start(2)] + generate() + "\n" + text[found.end(2) :]
    return text


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.generators.reference --write | --check`: rewrite README.md's generated blocks, or
    exit 1 saying it is stale. A development command: it works in msgen's source tree."""
    args = sys.argv[1:] if argv is None else argv
    if args not in (["--write"], ["--check"]):
        print("usage: python -m tests.generators.reference --write | --check", file=sys.stderr)
        return 2
    text = README.read_text(encoding="utf-8")
    wanted = with_blocks(text)
    if args == ["--check"]:
        if wanted != text:
            print(f"{README} is stale: run python -m tests.generators.reference --write", file=sys.stderr)
            return 1
        return 0
    if wanted != text:
        README.write_text(wanted, encoding="utf-8")
        print(f"wrote {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
