"""Every string msgen writes is the same string to every YAML reader its output meets, and msgen
reads a job's plain scalars as kubectl does.

The readers: PyYAML (YAML 1.1), ruamel (YAML 1.2), msgen's own loader, the real kustomize
(go-yaml v3) building the output, and kubectl's client-side decoding (sigs.k8s.io/yaml, go-yaml
v2: `kubectl annotate --local -o json`, which needs no cluster) when kubectl is on PATH.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msgen.model.diagnostics import InputError
from msgen.yamlio.emit import to_yaml
from msgen.model.source import Source
from msgen.yamlio.yaml_loader import load_documents

from .conftest import kustomize_binary, msgen
from .verdicts import Verdicts
from .campaign import EXAMPLES as ALL_EXAMPLES

#: Strings that some YAML reader takes for something else when written plain.
TRICKY = ["1e3", "0o17", "08", "09", "+.5", "12:30:00", "0x1F", ".inf", "-.Inf", ".nan", "~",
          "y", "Y", "n", "N", "on", "off", "yes", "no", "true", "null", "=", "<<", "1_000",
          "0b101", "-0b1", "1.", ".5e3", "1e-3", "0E0", "+1", "017", "2001-1-2",
          "2001-12-14 21:59:43.10", "1e999", "99999999999999999999", "", "1:2", "1:2.5"]  # fmt: skip
KUBECTL = shutil.which("kubectl")
#: a tenth of the campaigns' count: each input goes through every reader compared here
EXAMPLES = ALL_EXAMPLES // 10 or 1


def ruamel_load(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(text)  # YAML 1.2, ruamel's default


def ruamel_load_all(text: str) -> list[Any]:
    from ruamel.yaml import YAML

    return list(YAML(typ="safe", pure=True).load_all(text))


def msgen_load(text: str) -> Any:
    return load_documents(Source("x", text))[0].data


def kubectl_reads(path: Path) -> subprocess.CompletedProcess[str]:
    """kubectl's client reading `path`: a local, no-op annotation, printed as JSON."""
    assert KUBECTL is not None
    return subprocess.run(
        [KUBECTL, "annotate", "--local", "-o", "json", "-f", str(path), "msgen-test/read=1"],
        capture_output=True, text=True, env={**os.environ, "KUBECONFIG": os.devnull}, timeout=60,
    )  # fmt: skip


def kubectl_decode(path: Path) -> Any:
    """What kubectl's client reads from `path`: its JSON after a local, no-op annotation."""
    done = kubectl_reads(path)
    assert done.returncode == 0, done.stderr
    decoded = json.loads(done.stdout)
    decoded["metadata"]["annotations"].pop("msgen-test/read")
    if not decoded["metadata"]["annotations"]:
        del decoded["metadata"]["annotations"]
    return decoded


def kustomize_build(directory: Path, emitted: str) -> str:
    binary = kustomize_binary()
    if binary is None:
        pytest.skip("kustomize not installed (.ci/fetch-kustomize installs it)")
    (directory / "emitted.yaml").write_text(emitted)
    (directory / "kustomization.yaml").write_text("resources: [emitted.yaml]\n")
    done = subprocess.run([binary, "build", str(directory)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def config_map(values: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "strings"},
        "data": {f"k{i}": value for i, value in enumerate(values)},
    }


def check_every_reader(values: list[str], directory: Path) -> None:
    """`values`, written by msgen as a ConfigMap's data, read back unchanged by every reader."""
    obj = config_map(values)
    emitted = to_yaml([obj])
    assert yaml.safe_load(emitted) == obj, emitted
    assert ruamel_load(emitted) == obj, emitted
    assert msgen_load(emitted) == obj, emitted
    built = kustomize_build(directory, emitted)
    assert msgen_load(built)["data"] == obj["data"], built  # msgen reads as kubectl does
    if KUBECTL:
        (directory / "built.yaml").write_text(built)
        assert kubectl_decode(directory / "built.yaml")["data"] == obj["data"], built
        assert kubectl_decode(directory / "emitted.yaml")["data"] == obj["data"], emitted


def test_the_strings_other_readers_misread_are_quoted(tmp_path: Path) -> None:
    check_every_reader(TRICKY, tmp_path)


def test_keys_other_readers_misread_are_quoted() -> None:
    emitted = to_yaml([{"data": {value: "x" for value in TRICKY}}])
    assert yaml.safe_load(emitted) == {"data": {value: "x" for value in TRICKY}}
    assert ruamel_load(emitted) == {"data": {value: "x" for value in TRICKY}}


def test_a_rendered_env_value_stays_the_string_the_job_gave(tmp_path: Path) -> None:
    """An env value passes through `msgen render`, then kustomize: still the same strings."""
    job = (Path(__file__).parents[1] / "samples" / "mindspore" / "lenet-cpu.yaml").read_text()
    env = "".join(f"                - {{name: V{i}, value: {json.dumps(v)}}}\n" for i, v in enumerate(TRICKY))
    marker = "            - name: mindspore\n"
    assert marker in job
    job = job.replace(marker, marker + "              env:\n" + env)
    (tmp_path / "job.yaml").write_text(job)
    done = msgen("render", str(tmp_path / "job.yaml"))
    assert done.exit_code == 0, done.stderr
    out = tmp_path / "out"
    out.mkdir()
    built = kustomize_build(out, done.stdout)
    python = [list(yaml.safe_load_all(done.stdout)), ruamel_load_all(done.stdout)]
    go = [[d.data for d in load_documents(Source(name, text))] for name, text in (("msgen", done.stdout), ("kustomize", built))]
    # kustomize writes `=` plain, which PyYAML cannot read: its output is read as Go reads it
    for objects in python + go:
        workloads = [o for o in objects if o and o["kind"] == "Job"]
        env = workloads[0]["spec"]["template"]["spec"]["containers"][0]["env"]
        given = {e["name"]: e.get("value") for e in env if e["name"].startswith("V")}
        assert given == {f"V{i}": v for i, v in enumerate(TRICKY)}


@pytest.mark.parametrize(
    "text, value",
    [("12:30:00", "12:30:00"), ("1:30", "1:30"), ("0o17", 15), ("1e3", 1000.0), ("08", 8.0),
     ("+.5", 0.5), ("y", True), ("off", False), ("=", "="), ("<<", "<<"), ("2001-1-2", "2001-1-2"),
     ("0x1F", 31), ("017", 15), ("1_000", 1000), ("1e999", "1e999")],
)  # fmt: skip
def test_plain_scalars_are_read_as_kubectl_reads_them(text: str, value: Any) -> None:
    assert msgen_load(f"a: {text}\n") == {"a": value}


#: Text made of what numbers, booleans and times are written with.
PLAIN_ISH = st.text(alphabet="0123456789+-._:eExXoObByYnN~", min_size=1, max_size=12)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(texts=st.lists(PLAIN_ISH, min_size=1, max_size=20))
def _plain_scalars(verdicts: Verdicts, directory: Path, texts: list[str]) -> None:
    lines = "".join(f"  k{i}: {text}\n" for i, text in enumerate(texts))
    source = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n{lines}"
    path = directory / "plain.yaml"
    path.write_text(source)
    try:
        ours = msgen_load(source)
    except InputError:  # not a plain scalar at all (`-` then a digit is a list item, ...)
        verdicts.count(False)
        assert kubectl_reads(path).returncode != 0, f"kubectl reads what msgen refuses:\n{source}"
        return
    verdicts.count(True)
    assert ours == kubectl_decode(path), source


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not on PATH: its client-side reading is the reference")
def test_msgen_reads_plain_scalars_as_kubectl(tmp_path: Path) -> None:
    """Only msgen's refusal of a text (InputError) is a verdict, and kubectl refuses it too;
    any other exception of msgen's reader fails the test."""
    verdicts = Verdicts("plain scalars")
    _plain_scalars(verdicts, tmp_path)
    verdicts.require(accepted=0.3)


#: Any text a ConfigMap may hold: printable characters, with spaces and YAML's indicators.
ANY_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff\x85\u2028\u2029"),
    max_size=16,
) | PLAIN_ISH


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(ANY_TEXT, min_size=1, max_size=20))
def test_every_reader_reads_back_every_string(values: list[str], tmp_path: Path) -> None:
    check_every_reader(values, tmp_path)


def test_the_pure_python_dumper_quotes_the_same() -> None:
    from msgen.yamlio.yaml_dumper import make_dumper, pyyaml_dump

    pure = make_dumper(yaml.SafeDumper)
    assert pyyaml_dump([config_map(TRICKY)], pure) == to_yaml([config_map(TRICKY)])
    assert yaml.safe_load(io.StringIO(pyyaml_dump([config_map(TRICKY)], pure))) == config_map(TRICKY)
