"""`msgen completion SHELL` and `msgen version`: what kubectl, helm and kustomize users type.

`completion` prints the script click's completion would install (`_MSGEN_COMPLETE`), under
the name users look for, as `kubectl completion bash` does. `version` says what this msgen
renders for: the Kubernetes releases `--kube-version` accepts (`msgen.model.versions`) and the
MindSpore contract it writes (contracts §2).
"""

from __future__ import annotations

import click

from ..click_options import CONTEXT

SHELLS = ("bash", "zsh", "fish")
#: The MindSpore release whose wheel the contract was verified against (contracts §2).
MINDSPORE_VERIFIED = "2.10.0"


def register(main: click.Group) -> None:
    main.add_command(completion)
    main.add_command(version)


@click.command(context_settings=CONTEXT)
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print msgen's shell completion script for SHELL.

    \b
    Examples:
      eval "$(msgen completion bash)"
      msgen completion zsh > _msgen   # a file for a directory on zsh's $fpath
    """
    from click.shell_completion import get_completion_class

    from .cli import main

    found = get_completion_class(shell)
    assert found is not None  # every name of SHELLS is one click knows
    source = found(main, {}, "msgen", "_MSGEN_COMPLETE").source()
    click.echo(source if source.endswith("\n") else source + "\n", nl=False)


@click.command(context_settings=CONTEXT)
def version() -> None:
    """Print msgen's version, the Kubernetes releases it renders for and the MindSpore
    contract it writes.

    \b
    Example:
      msgen version
    """
    import platform

    from ... import __version__
    from ...frameworks.mindspore import PS_RELEASES
    from ...model import versions

    newest = versions.show(versions.NEWEST)
    click.echo(f"msgen {__version__}")
    click.echo(
        f"Kubernetes: {versions.show(versions.OLDEST)} to {newest} (--kube-version, default "
        f"{newest}; a newer 1.x renders as {newest}, with a warning)"
    )
    click.echo(
        "MindSpore: the dynamic cluster's environment (MS_ROLE, MS_SCHED_HOST, MS_WORKER_NUM, "
        f"...) as ms-operator set it, verified with MindSpore {MINDSPORE_VERIFIED}; its msrun "
        f"launcher; parameter servers train on MindSpore {PS_RELEASES}"
    )
    click.echo(f"Python: {platform.python_version()}")
