"""`msgen samples`: the bundled sample jobs, for a user who installed msgen from a package.

The README's first command renders `samples/...` of a source checkout; an installed wheel
carries the same files as `msgen/samples/`, so `msgen samples NAME | msgen render` works
anywhere, and `msgen samples --path` names the directory for `msgen validate`.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..click_options import CONTEXT


def samples_root() -> Path | None:
    """The samples directory: inside the installed package, else a source checkout's."""
    here = Path(__file__).resolve().parents[2]  # msgen/
    if (here / "samples").is_dir():
        return here / "samples"
    checkout = here.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "samples").is_dir():
        return checkout / "samples"
    return None


def sample_names(root: Path) -> list[str]:
    """`mindspore/lenet-cpu` and the like: each sample's path below the root, without .yaml."""
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.glob("*/*.yaml"))


def summary(path: Path) -> str:
    """The first sentence of the sample's leading comment."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = " ".join(lines)
    first = text.split(". ")[0].rstrip(".")
    return first if len(first) <= 90 else first[:87].rsplit(" ", 1)[0] + " ..."


def find(root: Path, name: str) -> Path | None:
    """The sample `name` names: `mindspore/lenet-cpu`, with or without .yaml, or `lenet-cpu`."""
    names = sample_names(root)
    wanted = name.removesuffix(".yaml").removesuffix(".yml")
    if wanted in names:
        return root / f"{wanted}.yaml"
    by_stem = [n for n in names if n.rpartition("/")[2] == wanted]
    return root / f"{by_stem[0]}.yaml" if len(by_stem) == 1 else None


@click.command("samples", context_settings=CONTEXT)
@click.argument("name", required=False)
@click.option("--path", "show_path", is_flag=True, help="Print the directory holding the samples.")
def samples(name: str | None, show_path: bool) -> None:
    """List the bundled sample jobs, or print sample NAME.

    NAME is a sample's name as the list shows it (mindspore/lenet-cpu), or its last part when
    only one sample has it (lenet-cpu).

    \b
    Examples:
      msgen samples
      msgen samples mindspore/lenet-cpu | msgen render
      msgen validate "$(msgen samples --path)"
    """
    root = samples_root()
    if root is None:
        raise click.ClickException("this installation of msgen has no samples")
    if show_path:
        click.echo(str(root))
        return
    if name is None:
        names = sample_names(root)
        width = max(map(len, names))
        for each in names:
            click.echo(f"{each:<{width}}  {summary(root / f'{each}.yaml')}")
        return
    found = find(root, name)
    if found is None:
        from difflib import get_close_matches

        names = sample_names(root)
        by_name = {**{n.rpartition("/")[2]: n for n in names}, **{n: n for n in names}}
        close = get_close_matches(name, by_name, n=1)
        hint = f" (did you mean {by_name[close[0]]!r}?)" if close else ""
        raise click.BadParameter(
            f"no sample {name!r}{hint}; accepted: {', '.join(names)}", param_hint="NAME"
        )
    click.echo(found.read_text(encoding="utf-8"), nl=False)


def register(main: click.Group) -> None:
    main.add_command(samples)
