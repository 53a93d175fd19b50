"""msgen.model.patch: plug-ins' patches merged into a copy of a pod template, once, with the
user's own env respected (a conflict is an error, a default yields, an override is kept)."""

from __future__ import annotations

import copy

import pytest

from msgen.model.patch import ALL_CONTAINERS, Patch, apply_patches, default, literal
from msgen.model.plan import Options, PodSlot

from .plugin_plans import job, plan

#: the user's env of the Worker container, a patch's value, options -> env after, errors
CASES = {
    "added": ([], literal("1"), Options(), [{"name": "X", "value": "1"}], 0),
    "same value": ([{"name": "X", "value": "1"}], literal("1"), Options(),
                   [{"name": "X", "value": "1"}], 0),
    "conflict": ([{"name": "X", "value": "2"}], literal("1"), Options(),
                 [{"name": "X", "value": "2"}], 1),
    "override": ([{"name": "X", "value": "2"}], literal("1"), Options(allow_env_override=True),
                 [{"name": "X", "value": "2"}], 0),
    "default yields": ([{"name": "X", "value": "2"}], default("1"), Options(),
                       [{"name": "X", "value": "2"}], 0),
}


@pytest.mark.parametrize("case", CASES)
def test_env_merges_with_the_users_own(case: str) -> None:
    user_env, value, options, expected, errors = CASES[case]
    env = ", ".join(f"{{name: {e['name']}, value: '{e['value']}'}}" for e in user_env)
    text = job().replace("command: [python, train.py]\n",
                         f"command: [python, train.py]\n              env: [{env}]\n")
    made = plan(text)
    worker = made.roles[1]
    before = copy.deepcopy(worker.template)
    merged, found = apply_patches(
        made, PodSlot(worker, 0), [Patch("test", env=((ALL_CONTAINERS, "X", value),))], options
    )
    assert merged["spec"]["containers"][0]["env"] == expected
    assert len([d for d in found if d.is_error]) == errors
    if errors:
        assert "accepted: leave X out, or pass --allow-env-override" in found[0].message
    assert worker.template == before  # the plan's template is not edited


def test_two_contributors_setting_one_variable_differently_is_a_bug() -> None:
    made = plan()
    patches = [Patch("a", env=((ALL_CONTAINERS, "X", literal("1")),)),
               Patch("b", env=((ALL_CONTAINERS, "X", literal("2")),))]
    with pytest.raises(AssertionError, match="b and a both set X differently"):
        apply_patches(made, PodSlot(made.roles[1], 0), patches, Options())
