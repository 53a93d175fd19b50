"""The pattern msgen hands PyYAML's reader matches exactly the characters PyYAML's own does, and
PyYAML does get it when msgen imports PyYAML first."""

from __future__ import annotations

import re
import subprocess
import sys

from msgen.yamlio import pyyaml

from .conftest import ROOT


def test_the_listed_class_matches_every_code_point_pyyamls_negated_class_matches() -> None:
    every_code_point = "".join(map(chr, range(sys.maxunicode + 1)))
    pyyamls = re.compile(pyyaml.PYYAML_NON_PRINTABLE + "|x")  # "|x": not the cached pattern
    listed = re.compile(pyyaml.NON_PRINTABLE + "|x")
    expected = [m.start() for m in pyyamls.finditer(every_code_point) if m.group() != "x"]
    found = [m.start() for m in listed.finditer(every_code_point) if m.group() != "x"]
    # C0 controls but tab, LF and CR (29), DEL, C1 controls but NEL (31), surrogates, FFFE, FFFF
    assert len(expected) == 29 + 1 + 31 + 2048 + 2
    assert found == expected


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_pyyamls_pattern_is_the_text_cached_under() -> None:
    # PyYAML alone, in a fresh interpreter: were its text to change, msgen would cache a pattern
    # nobody asks for, and PyYAML's import would be slow again.
    assert _fresh("import yaml; print(repr(yaml.reader.Reader.NON_PRINTABLE.pattern))") == repr(
        pyyaml.PYYAML_NON_PRINTABLE
    )


def test_pyyaml_imported_through_msgen_gets_the_listed_class_and_refuses_the_same_characters() -> None:
    # A fresh interpreter, as a render starts: msgen's YAML modules import PyYAML through
    # msgen.yamlio.pyyaml (the loader when it first needs PyYAML), so the reader's pattern is
    # the one compiled there; PyYAML's pure reader (where libyaml is missing) refuses with it
    # what it refused before.
    code = """
from msgen.yamlio import yaml_loader
yaml_loader.libyaml_loads()
import yaml
print(yaml.reader.Reader.NON_PRINTABLE.pattern == __import__("msgen.yamlio.pyyaml", fromlist=["_"]).NON_PRINTABLE)
for text in ("a: b\\x07", "a: \\ud800", "a: \\ufffe", "a: \\x9f", "a: \\x00"):
    try:
        yaml.load(text, Loader=yaml.SafeLoader)
        print("read", ascii(text))
    except yaml.reader.ReaderError as exc:
        print(exc.character == ord(text[-1]), exc.position == len(text) - 1)
print(yaml.load("a: b\\xa0\\ue000\\U0001f600", Loader=yaml.SafeLoader) == {"a": "b\\xa0\\ue000\\U0001f600"})
"""
    assert _fresh(code).split() == ["True"] + ["True", "True"] * 5 + ["True"]
