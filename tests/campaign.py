"""The settings every property campaign shares.

`MSGEN_PROPERTY_EXAMPLES` (default 300) bounds each campaign for CI (`.ci/run` gives the
older Pythons 100); inputs are drawn derandomized, the same on every run, so a failure
reproduces; slow or large draws are expected here, not a fault of the generator.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("MSGEN_PROPERTY_EXAMPLES", "300"))


def campaign(examples: int = EXAMPLES) -> settings:
    """A campaign of `examples` inputs (MSGEN_PROPERTY_EXAMPLES by default)."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        derandomize=True,
    )


CAMPAIGN = campaign()
