"""The `msgen-krm` console script's entry point: the cycle collector off before the KRM
function's modules load.

kustomize starts `msgen-krm` afresh for every function in every build. `krm` imports the bulk of
a render's modules as it loads; with the collector on, the tens of thousands of objects they
create set off collections that find nothing (a few percent of the function's run). This module
imports nothing of msgen's before turning the collector off, as `msgen.hosts.command_line.entry`
does for `msgen`; `krm.main` freezes what loaded and turns it back on.
"""


def main() -> None:
    """The `msgen-krm` console script: `krm.main`, its modules loaded with the collector off."""
    import gc

    gc.disable()
    from .krm import main as krm_main

    krm_main()
