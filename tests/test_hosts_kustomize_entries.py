"""msgen's reading of a kustomization entry agrees with kustomize's own, version by version.

For each spelling, kustomize itself is asked, with no network: `PATH` holds no `git`, so an
entry it would clone fails with "no 'git' program on path", and an HTTP proxy on a closed
local port makes a URL it would fetch fail with `Get "<url>": proxyconnect ...`. msgen's rule for each version
must say the same; the sidecar counts an entry as remote when either version does.
"""

from __future__ import annotations

import itertools
import random
import subprocess
from pathlib import Path

import pytest

from msgen.hosts import kustomize_entries as entries

from .conftest import KUSTOMIZE5_BUILD, kustomize5_binary, kustomize_binary

SPELLINGS = [
    "github.com/org/repo", "GitHub.com/org/repo", "github.com:org/repo", "https://example.com/org/repo",
    "my_git/base", "gh:org/repo", "git@host:org/repo.git", "git@host/org/repo", "ssh://host/org/repo",
    "file:///tmp/x.git", "example.com/org/repo", "git::https://example.com/org/repo", "org/repo.git",
    "https://x.com/a//b", "foo", "base", "../base", "user@host:repo", "https://host/org/repo//../x",
    "https://host/_git/repo", "http://host/org", "HTTPS://HOST/org/repo", "git::file:///tmp/r",
    "ssh://git@github.com/org/repo?ref=v1", "https://github.com/org/repo?timeout=1",
]  # fmt: skip


def generated(count: int, seed: int = 40) -> list[str]:
    """Spellings built from the parts kustomize's parsers look at."""
    schemes = ["", "https://", "http://", "ssh://", "file://", "git::", "gh:", "git@", "Https://", "git::ssh://"]
    users = ["", "git@", "u-1@"]
    hosts = ["github.com", "example.com", "host", "GITHUB.COM", ""]
    separators = ["/", ":"]
    paths = ["org/repo", "org/repo.git", "a//b", "_git/r", "x_git/y", "../x", "org", "", "o/r/..", "o.git/../.."]
    queries = ["", "?ref=v1", "?version=2", "?timeout=x"]
    product = list(itertools.product(schemes, users, hosts, separators, paths, queries))
    return ["".join(parts) for parts in random.Random(seed).sample(product, count)]


def kustomize_reads(binary: str, directory: Path, entry: str) -> str:
    """How kustomize took `resources: [entry]`: cloned, fetched, or read locally."""
    (directory / "kustomization.yaml").write_text(f"resources:\n- {entry!r}\n")
    env = {"PATH": "/nonexistent", "HOME": str(directory), "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    done = subprocess.run([binary, "build", str(directory)], capture_output=True, text=True, env=env)
    if 'Get "' in done.stderr:  # an HTTP request (refused by the proxy, or one without a host)
        return "fetched"
    return "cloned" if "no 'git' program on path" in done.stderr else "local"


@pytest.mark.parametrize("version", ["4.5.4", "5.x"])
def test_remote_entries_are_what_kustomize_fetches(tmp_path: Path, version: str) -> None:
    binary = kustomize_binary() if version == "4.5.4" else kustomize5_binary()
    if binary is None:
        pytest.skip("kustomize 4.5.4 is not installed (.ci/fetch-kustomize)" if version == "4.5.4" else KUSTOMIZE5_BUILD)
    rule = entries._repository_v4 if version == "4.5.4" else entries._repository_v5
    wrong = []
    for entry in dict.fromkeys(SPELLINGS + generated(150)):
        expected = kustomize_reads(binary, tmp_path, entry)
        said = "fetched" if entries.remote_file(entry) else "cloned" if rule(entry) else "local"
        if said != expected:
            wrong.append(f"{entry!r}: kustomize {expected}, msgen says {said}")
    assert not wrong, "\n".join(wrong)
    assert sum(entries.remote_repository(e) for e in SPELLINGS) >= 15  # the table holds both kinds
    assert sum(not entries.remote_repository(e) for e in SPELLINGS) >= 4


@pytest.mark.parametrize(
    "entry, inline",
    [("evil.yaml", False), ("../dir", False), ("https://x/y.yaml", False), ("{kind: A, metadata: {name: a}}", True),
     ("kind: A\nmetadata: {name: a}\n", True), ("- a\n- b\n", True), ("a: b", True), ("C:/x", False)],
)  # fmt: skip
def test_inline_entries(entry: str, inline: bool) -> None:
    assert (entries.inline_objects(entry) is not None) == inline


def test_unreadable_inline_yaml_is_not_a_path() -> None:
    with pytest.raises(entries.InlineUnreadable):
        entries.inline_objects("{kind: A, kind: B}")
