"""The name msgen installs under, and the name it runs under.

The package index's `msgen` is an unrelated project (0.6.7 to 0.9.1, whose source
distribution runs its own build code and fails): every instruction that installs msgen names
the distribution pyproject.toml declares, or a local tree or wheel. GNU gettext installs a
`msgen` command of its own (Debian's gettext package), so msgen is also installed under a
second name nothing else has, and the hosts that look the command up on PATH (Helm 3's
`--post-renderer`, Argo CD's plugin commands) are given that name.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from msgen.hosts.plugin_script import plugin_script

from .conftest import ROOT

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli", reason="tomli reads pyproject.toml before Python 3.11")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME = PROJECT["name"]
#: What users read and what msgen prints: the README, the pages, the code (its messages and
#: help), the overlays (Dockerfiles, plugin.yaml). The CHANGELOG is history.
TEXTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "msgen").rglob("*.py")),
         *sorted(p for p in (ROOT / "overlays").rglob("*") if p.is_file())]
REQUIREMENT = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*(\[[a-z,]+\])?$")
#: The command msgen also runs as: the console script of the same entry point whose name is
#: not `msgen` (nor `msgen-krm`, the KRM function).
SECONDS = [name for name, entry in PROJECT["scripts"].items() if entry == PROJECT["scripts"]["msgen"] and name != "msgen"]
SECOND = SECONDS[0] if SECONDS else "<none>"


def _pip_arguments(text: str) -> list[list[str]]:
    """The words after each `pip install` in `text` (up to the end of its command)."""
    found = []
    for match in re.finditer(r"pip install\b([^`\n;&|()]*)", text.replace("\\\n", " ")):
        try:
            found.append(shlex.split(match.group(1)))
        except ValueError:  # an unclosed quote: the words up to it
            found.append(match.group(1).replace("'", " ").split())
    return found


def test_every_install_instruction_names_the_distribution_or_a_local_tree() -> None:
    assert NAME != "msgen", "the package index's msgen is another project"
    wrong = []
    for path in TEXTS:
        text = path.read_text(encoding="utf-8", errors="replace")
        for words in _pip_arguments(text):
            taking = iter(words)
            for word in taking:
                if word in ("-c", "--constraint", "-r", "--requirement", "--python", "-w"):
                    next(taking, None)
                    continue
                if word.startswith("-") or not REQUIREMENT.match(word):
                    continue  # an option, a path ('.', '/src[apply]', a wheel), a placeholder
                if word.split("[")[0] != NAME:
                    wrong.append(f"{path.relative_to(ROOT)}: pip install {' '.join(words)}")
    assert wrong == []
    # Before it is published: from a clone, or from a wheel built in one.
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "pip install -q ." in quick_start and "pip wheel" in quick_start and f"pip install {NAME}" in quick_start


def test_the_reconcilers_missing_extra_names_the_distribution() -> None:
    blocked = ("import sys; sys.modules['httpx2'] = None; sys.argv = ['msgen', *sys.argv[1:]]; "
               "from msgen.hosts.command_line.entry import main; main()")
    done = subprocess.run([sys.executable, "-c", blocked, "apply", "job.yaml"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert f"pip install '{NAME}[apply]'" in done.stderr and "pip install '.[apply]'" in done.stderr, done.stderr


def test_msgen_is_installed_under_a_second_name_that_runs_the_same_command() -> None:
    assert len(SECONDS) == 1 and SECOND not in ("msgen", "msgen-krm"), PROJECT["scripts"]
    script = Path(sys.executable).parent / SECOND
    if not script.exists():
        pytest.skip(f"{SECOND} is not installed beside {sys.executable} (pip install -e . installs it)")
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("msgen, version "), done


def test_the_readme_says_which_msgen_where_users_first_type_it() -> None:
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "gettext" in quick_start and f"`{SECOND}`" in quick_start and "`python -m\nmsgen`" in quick_start


def test_hosts_that_look_the_command_up_on_path_are_given_the_second_name() -> None:
    plugin = yaml.safe_load((ROOT / "overlays" / "argocd" / "plugin.yaml").read_text())["spec"]
    assert plugin["discover"]["find"]["command"][0] == SECOND
    assert plugin["generate"]["command"][0] == SECOND
    # Helm 3 runs the executable --post-renderer names (its first argument: helm-post-renderer);
    # Helm 4's --post-renderer names a plug-in, which is no command on PATH.
    helm3 = re.compile(r"--post-renderer (\S+)\s+(?:\\\s+)?--post-renderer-args helm-post-renderer")
    found = []
    for path in TEXTS + [ROOT / "tests" / "test_helm.py", ROOT / "tests" / "test_helm_live.py"]:
        found += [(path.name, m.group(1)) for m in helm3.finditer(path.read_text(encoding="utf-8", errors="replace"))]
    assert {"gitops.md", "commands.py"} <= {name for name, _ in found}
    assert [f for f in found if f[1] != SECOND] == []


def test_a_plugin_script_whose_msgen_is_gone_runs_the_second_name_not_gettexts(tmp_path: Path) -> None:
    second = Path(sys.executable).parent / SECOND
    if not second.exists():
        pytest.skip(f"{SECOND} is not installed beside {sys.executable}")
    path = tmp_path / "bin"
    path.mkdir()
    gettext = path / "msgen"  # what Debian's gettext puts on PATH, first
    gettext.write_text("#!/bin/sh\necho 'msgen (GNU gettext-tools) 0.21'\n")
    (path / SECOND).symlink_to(second)
    script = tmp_path / "plugin"
    script.write_text(plugin_script(tmp_path / "gone" / "msgen", run='exec "$msgen" --version'))
    for file in (gettext, script):
        file.chmod(file.stat().st_mode | stat.S_IXUSR)
    done = subprocess.run([str(script)], capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{path}{os.pathsep}/usr/bin:/bin"})
    assert done.returncode == 0 and done.stdout.startswith("msgen, version "), done
