"""PyYAML, imported without compiling the one pattern that was half of its import.

`import yaml` loads all of PyYAML, and its pure-Python reader compiles, at import, the class of
characters YAML does not allow (`yaml.reader.Reader.NON_PRINTABLE`): a negated class spanning
all of Unicode, whose compilation walks some 60,000 code points in Python. That was about half
of PyYAML's import and a sixth of a cold render's instructions, for a reader msgen does not use
where libyaml reads. Before PyYAML loads, this module puts into `re`'s cache, under that
pattern's text, the same class written as the characters it matches (`NON_PRINTABLE`), which
compiles some twenty times faster: `re.compile` then hands PyYAML the pattern made here.
Both match exactly the same characters (tests/test_yamlio_pyyaml.py checks every code point),
so PyYAML's pure reader, where libyaml is missing, finds the same characters as before.

Every module of msgen that reads or writes YAML imports PyYAML from here. Where `re` keeps no
such cache, or PyYAML was imported first, nothing is put there and PyYAML compiles its own.
"""

from __future__ import annotations

import re
import sys

#: `yaml.reader.Reader.NON_PRINTABLE`'s text in PyYAML 5 and 6: what YAML 1.1 does not allow.
PYYAML_NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
#: The same characters, listed: C0 controls but tab and line breaks, DEL and the C1 controls
#: but NEXT LINE, surrogates, and the two non-characters U+FFFE and U+FFFF.
NON_PRINTABLE = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"


def _cache_non_printable() -> None:
    cache = getattr(re, "_cache", None)
    if "yaml" in sys.modules or not isinstance(cache, dict):
        return
    cache.setdefault((str, PYYAML_NON_PRINTABLE, 0), re.compile(NON_PRINTABLE))


_cache_non_printable()

import yaml as yaml  # noqa: E402 - after the pattern is cached

__all__ = ["yaml"]
