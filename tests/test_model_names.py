"""msgen.model.names: Kubernetes' name, key and label rules, once, and the one way msgen says
a value breaks one (the job's name, an option, a name a target derives, a field the API
server checks all read alike)."""

from __future__ import annotations

from typing import Callable

import pytest

from msgen.model import names

from .conftest import SAMPLES, msgen

Rule = Callable[[str], list[str]]

#: rule -> values it accepts, values it refuses
RULES: dict[str, tuple[Rule, list[str], list[str]]] = {
    "dns1035_label": (names.dns1035_label, ["a", "job-1", "a" * 63], ["1job", "Job", "a_b", "a-", "a" * 64, ""]),
    "dns1123_label": (names.dns1123_label, ["a", "1job", "a" * 63], ["Job", "a.b", "-a", "a" * 64, ""]),
    "dns1123_subdomain": (names.dns1123_subdomain, ["a.b-c", "a" * 253], ["a_b", "a..b", "a" * 254]),
    "qualified_name": (names.qualified_name, ["a", "example.com/A_b.c"], ["a/b/c", "/a", "a/", "Ex.com/a", "-a"]),
    "label_value": (names.label_value, ["", "A-b_c.d"], ["-a", "a b", "a" * 64]),
    "port_name": (names.port_name, ["http", "a-1"], ["1234", "a--b", "-a", "HTTP", "a" * 16]),
    "config_key": (names.config_key, ["a.b_c-d"], ["..a", ".", "a/b"]),
}


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_accepts_and_refuses_as_the_api_server(rule: str) -> None:
    check, accepted, refused = RULES[rule]
    assert {value: check(value) for value in accepted} == {value: [] for value in accepted}
    assert [value for value in refused if not check(value)] == []


def test_a_label_value_an_option_selects_is_not_empty() -> None:
    assert names.label_value("", empty=False) and not names.label_value("")


def test_env_names_follow_the_release() -> None:
    assert names.env_name("1A", relaxed=False) and not names.env_name("1A", relaxed=True)
    assert names.env_name("A=B", relaxed=True)


def test_every_broken_name_is_said_one_way() -> None:
    """The job's name, an option's and a pod's field: `<what> '<value>' is not accepted:
    <Kubernetes' clauses>`."""
    job = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
    bad_name = msgen("render", input=job.replace("name: msjob-mnist", "name: Msjob_Mnist", 1))
    bad_option = msgen("render", "--namespace", "Team_A", input=job)
    bad_field = msgen("render", input=job.replace("- name: ms-mnist\n              hostPath", "- name: Ms_Mnist\n              hostPath", 1))
    said = [
        "job name 'Msjob_Mnist' is not accepted: must be a DNS-1035 label",
        "'Team_A' is not accepted: must be a lowercase RFC 1123 label",
        "volume name 'Ms_Mnist' is not accepted: must be a lowercase RFC 1123 label",
    ]
    for run, words in zip((bad_name, bad_option, bad_field), said, strict=True):
        assert run.exit_code in (1, 2) and words in run.stderr, run.stderr
