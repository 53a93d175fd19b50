"""msgen.targets.addressing: how pods of a job find each other, whatever the target: the
host of a replica in each address mode, a pod's index and name, and the Services it needs."""

from __future__ import annotations

import pytest

from msgen.model.patch import EnvValue, field_ref, literal
from msgen.model.plan import PodSlot
from msgen.targets.addressing import Addressing, Endpoint, Naming

from .conftest import msgen
from .plugin_plans import plan
from .test_errors import GOOD_SCHEDULER, GOOD_WORKER, fails, job

STATIC = Naming(hostname=lambda role, i: f"tiny-{role.key}-{i}", dynamic_index=None)
DYNAMIC = Naming(
    hostname=lambda role, i: f"tiny-{role.key}-{i}",
    dynamic_index=field_ref("metadata.annotations['index']"),
    index_variable="INDEX",
)


def _addressing(mode: str, by_name: bool = False, naming: Naming = STATIC) -> Addressing:
    made = plan()
    scheduler = made.roles[0]
    return Addressing(made, mode, naming, [Endpoint(scheduler, 0, (), by_name)])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "mode, by_name, host",
    [("cluster-ip", False, "$(TINY_SCHEDULER_0_SERVICE_HOST)"),
     ("dns", False, "tiny-scheduler-0.tiny"),
     ("cluster-ip", True, "tiny-scheduler-0.tiny")],
)
def test_the_host_of_a_replica_in_each_mode(mode: str, by_name: bool, host: str) -> None:
    addressing = _addressing(mode, by_name)
    assert addressing.host(addressing.endpoints[0]) == literal(host)


@pytest.mark.parametrize(
    "naming, index, text, name",
    [(STATIC, 1, "1", literal("tiny-worker-1")),
     (DYNAMIC, None, "$(INDEX)",
      EnvValue(value="tiny-worker-$(INDEX)",
               requires=(("INDEX", field_ref("metadata.annotations['index']")),)))],
)
def test_a_pods_index_and_name_static_or_at_run_time(
    naming: Naming, index: int | None, text: str, name: EnvValue
) -> None:
    addressing = _addressing("cluster-ip", naming=naming)
    slot = PodSlot(addressing.plan.roles[1], index)
    assert addressing.index_text(slot)[0] == text
    assert addressing.pod_name(slot) == name


@pytest.mark.parametrize(
    "mode, services", [("cluster-ip", ["tiny-scheduler-0", "tiny"]), ("dns", ["tiny"])]
)
def test_the_services_each_mode_needs(mode: str, services: list[str]) -> None:
    made = _addressing(mode).services()
    assert [s["metadata"]["name"] for s in made] == services
    assert made[-1]["spec"]["clusterIP"] == "None"


def test_name_that_makes_a_derived_name_too_long() -> None:
    # 50 + len("-scheduler-0") = 62 characters: fits
    assert msgen("render", "-", input=job(GOOD_SCHEDULER + GOOD_WORKER, name="a" * 50)).exit_code == 0
    err = fails(job(GOOD_SCHEDULER + GOOD_WORKER, name="b" * 52))
    assert "<stdin>:4:9: error: metadata.name:" in err
    assert f"makes the name '{'b' * 52}-scheduler-0', which is not accepted: must be no more than 63 characters" in err
