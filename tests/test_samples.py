"""The bundled samples, as a user meets them: rendered together, listed and printed by msgen."""

from __future__ import annotations

import pytest

from msgen.targets import NAMES as TARGETS

from .conftest import SAMPLES, msgen, sample_files
from .expected_refusals import refusal_at


def test_validate_help_example_passes_on_the_samples() -> None:
    """`msgen validate samples/ && echo valid`, as `msgen validate --help` shows it."""
    done = msgen("validate", str(SAMPLES))
    assert done.exit_code == 0, done.stderr
    assert done.stderr.splitlines()[-1] == f"msgen: valid: {len(sample_files())} job(s) in {len(sample_files())} document(s)"


@pytest.mark.parametrize("target", TARGETS)
def test_the_samples_a_target_carries_render_together(target: str) -> None:
    """No two samples make an object of the same kind, namespace and name, whatever the target."""
    carried = [str(sample) for sample in sample_files() if refusal_at(sample, target, "1.37") is None]
    done = msgen("render", "--target", target, *carried)
    assert done.exit_code == 0, done.stderr
    names = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in done.objects()]
    assert len(names) == len(set(names))


def test_msgen_samples_lists_every_sample_with_its_first_sentence() -> None:
    done = msgen("samples")
    assert done.exit_code == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines()]
    assert listed == sorted(str(s.relative_to(SAMPLES).with_suffix("")) for s in sample_files())
    assert any(line.startswith("mindspore/lenet-cpu ") and line.endswith("LeNet on MNIST, on CPUs: the first "
               "MindSpore-on-Kubernetes example (the 2020 ...") for line in done.stdout.splitlines())


@pytest.mark.parametrize("name", ["mindspore/lenet-cpu", "mindspore/lenet-cpu.yaml", "lenet-cpu"])
def test_msgen_samples_name_prints_the_sample_for_render(name: str) -> None:
    done = msgen("samples", name)
    assert done.exit_code == 0, done.stderr
    assert done.stdout == (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()
    assert msgen("render", "-", input=done.stdout).exit_code == 0


def test_an_unknown_sample_names_the_close_one_and_the_list() -> None:
    done = msgen("samples", "lenet-cp")
    assert done.exit_code == 2 and done.stdout == ""
    assert "no sample 'lenet-cp' (did you mean 'mindspore/lenet-cpu'?); accepted: ascend/mindspore-acjob," in done.stderr


def test_msgen_samples_path_is_the_checkouts_samples_here() -> None:
    done = msgen("samples", "--path")
    assert done.stdout.strip() == str(SAMPLES)
