"""README tables generated from the code's own lists, so the documentation cannot drift.

`tests/test_readme.py` compares each README block between `<!-- msgen:NAME -->` and
`<!-- /msgen:NAME -->` with what `BLOCKS[NAME]()` returns; `pytest --update-golden` rewrites
them. The option names, their spellings per front end, the object order and the sync waves
come from the same tables the code reads.
"""

from __future__ import annotations

from typing import Callable

from . import options as option_text
from .argocd_env import ENV_PREFIX, env_name
from .pipeline import KIND_RANK


def options_table() -> str:
    """Every option as each front end spells it, and the values it accepts."""
    rows = [
        "| option (`msgen render`) | job annotation | KRM `data` key | Argo CD env | Argo CD parameter | accepted |",
        "|---|---|---|---|---|---|",
    ]
    for name, (_, accepted) in option_text.OPTION_NAMES.items():
        values = ", ".join(f"`{v}`" for v in accepted) if accepted else "text"
        rows.append(
            f"| `--{name}` | `{option_text.ANNOTATION_PREFIX}{name}` | `{name}` "
            f"| `{ENV_PREFIX}{env_name(name)}` | `{name}` | {values} |"
        )
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
