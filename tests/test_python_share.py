"""CI's share of the tests marked `spread` per Python (tests/python_share.py): the Pythons'
shares are disjoint and together are every such test, and nothing else is left out."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from . import python_share
from .conftest import ROOT

#: A module of tests marked spread (its `pytestmark`), and one of tests that are not (cheap to collect).
SPREAD_MODULE = "tests/test_crds.py"
EVERY_MODULE = "tests/test_errors.py"
#: Collecting needs neither hypothesis' nor anyio's pytest plug-in (about 2 s of each start).
UNNEEDED_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:hypothesispytest", "-p", "no:anyio")


def collected(*modules: str, share: str | None = None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != python_share.VARIABLE}
    if share is not None:
        env[python_share.VARIABLE] = share
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-o", "addopts=", *UNNEEDED_PLUGINS,
                           *modules], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


def ci_shares() -> list[str]:
    """The share `.ci/run` gives each claimed Python, oldest first."""
    plan = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--plan"], capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    return [line.split()[-1] for line in plan.stdout.splitlines()]


@pytest.mark.parametrize("value,expected", [("0/3", (0, 3)), ("2/3", (2, 3)), ("0/1", (0, 1))])
def test_a_share_is_k_of_n(value: str, expected: tuple[int, int]) -> None:
    assert python_share.parse(value) == expected


@pytest.mark.parametrize("value", ["3/3", "1/0", "-1/3", "1", "a/3", "1/3/4", " 1/3", "1/ 3", ""])
def test_anything_else_is_refused_saying_what_is_expected(value: str) -> None:
    with pytest.raises(pytest.UsageError, match="expected k/n with 0 <= k < n"):
        python_share.parse(value)


@pytest.mark.parametrize("shares", [2, 3, 4])
def test_each_test_is_in_exactly_one_share(shares: int) -> None:
    ids = [f"tests/test_x.py::test_{i}[case-{i * 7 % 13}]" for i in range(500)]
    owners = [[k for k in range(shares) if python_share.taken(test_id, k, shares)] for test_id in ids]
    assert all(len(owner) == 1 for owner in owners)
    # Each share gets some: a hash that sent everything to one share would make the split moot.
    assert {owner[0] for owner in owners} == set(range(shares))


def test_the_pythons_together_collect_every_spread_test_once_and_every_other_test_each() -> None:
    from . import test_crds

    marks = test_crds.pytestmark if isinstance(test_crds.pytestmark, list) else [test_crds.pytestmark]
    assert any(mark.name == python_share.MARKER for mark in marks), f"{SPREAD_MODULE} is not marked"
    everything = collected(SPREAD_MODULE, EVERY_MODULE)
    spread = {test_id for test_id in everything if test_id.startswith(SPREAD_MODULE + "::")}
    others = set(everything) - spread
    assert spread and others
    shares = [collected(SPREAD_MODULE, EVERY_MODULE, share=share) for share in ci_shares()]
    assert len(shares) > 1
    for taken in shares:
        assert others <= set(taken), "a test not marked spread was left out"
        assert len(set(taken) & spread) < len(spread), "a share took every spread test"
    spread_taken = [test_id for taken in shares for test_id in taken if test_id in spread]
    assert sorted(spread_taken) == sorted(spread), "the shares are not disjoint or miss a test"


def test_a_malformed_share_stops_the_run_before_any_test() -> None:
    env = {**os.environ, python_share.VARIABLE: "3/3"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", *UNNEEDED_PLUGINS, EVERY_MODULE],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "MSGEN_TEST_SHARE='3/3': expected k/n" in done.stdout + done.stderr
    assert " passed" not in done.stdout


def test_ci_gives_each_python_its_own_share_the_newest_too() -> None:
    shares = ci_shares()
    assert shares == [f"{k}/{len(shares)}" for k in range(len(shares))]
