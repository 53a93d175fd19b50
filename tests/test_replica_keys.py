"""Replica keys in any letter case, as the kubeflow/common operators accept them.

ascend-operator (`setTypeNamesToCamelCase`) and mxnet-operator / training-operator
(`setMXNetTypeNamesToCamelCase`) rename `worker` or `WORKER` to `Worker` before anything
else; a job written that way renders exactly as the camel-case one. Two keys for one type are
an error at the second key.
"""

from __future__ import annotations

import pytest

from .conftest import SAMPLES, msgen

CASES = {
    "AscendJob": (SAMPLES / "ascend" / "mindspore-acjob.yaml", ("Scheduler", "Worker")),
    "MXJob": (SAMPLES / "mxnet" / "mxjob-gpu-workers.yaml", ("Scheduler", "Server", "Worker")),
}


@pytest.mark.parametrize("kind", CASES)
@pytest.mark.parametrize("spell", [str.lower, str.upper])
def test_replica_keys_in_any_case_render_the_same(kind: str, spell: object) -> None:
    path, types = CASES[kind]
    text = path.read_text()
    changed = text
    for name in types:
        changed = changed.replace(f"\n    {name}:\n", f"\n    {spell(name)}:\n")  # type: ignore[operator]
    assert changed != text
    expected = msgen("render", "-", input=text)
    run = msgen("render", "-", input=changed)
    assert run.exit_code == 0, run.stderr
    assert run.stdout == expected.stdout and run.stdout


@pytest.mark.parametrize("kind", CASES)
def test_two_keys_for_one_replica_type_are_an_error(kind: str) -> None:
    path, _ = CASES[kind]
    text = path.read_text()
    block = text[text.index("\n    Worker:\n"):]  # the last replica spec runs to the end
    doubled = text.rstrip("\n") + block.replace("    Worker:", "    worker:", 1)
    line = doubled.count("\n", 0, doubled.index("\n    worker:\n")) + 2
    run = msgen("render", "-", input=doubled)
    assert run.exit_code == 1 and run.stdout == ""
    assert f"<stdin>:{line}:5: error: " in run.stderr
    assert "more than one Worker: keys 'Worker' and 'worker' name the same replica type; accepted: one key per replica type" in run.stderr
