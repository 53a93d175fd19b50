"""msgen's one reader of kustomization trees: every entry classified with its position, nothing
read outside the repository or from a file that is not a regular file, and bounds on what a
tree makes msgen and kustomize read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from msgen.hosts import kustomization_tree as trees
from msgen.model.diagnostics import Position
from msgen.hosts.argocd.plugin_home import install_for_build
from msgen.hosts.argocd.sidecar_tree import TreeRefused, verify

from .conftest import SAMPLES

JOB = (SAMPLES / "mindspore" / "lenet-cpu.yaml").read_text()


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def forms(tree: trees.Tree) -> dict[tuple[str, str], str]:
    return {(entry.field, entry.text): entry.form for _k, entry in tree.entries()}


def test_every_entry_is_classified_with_its_position(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/kustomization.yaml": (
            "resources: [job.yaml, ../base, 'https://example.com/x.yaml', github.com/org/repo, gone.yaml]\n"
            "components: [../part]\ngenerators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n"
            "  metadata: {name: c}\ntransformers: [t.yaml]\npatches:\n- path: p.yaml\n- patch: '[]'\n  target: {kind: X}\n"
            "configMapGenerator:\n- name: c\n  files: [key=data.txt]\n  envs: [env.txt]\nopenapi: {path: schema.json}\n"
            "configurations: [conf.yaml]\ncrds: [crd.yaml]\nreplacements:\n- path: r.yaml\n"
        ),
        "app/job.yaml": JOB, "app/t.yaml": "", "app/p.yaml": "", "app/data.txt": "", "app/env.txt": "",
        "app/schema.json": "{}", "app/conf.yaml": "", "app/crd.yaml": "", "app/r.yaml": "",
        "base/kustomization.yaml": "resources: [job.yaml]\n", "base/job.yaml": JOB,
        "part/kustomization.yaml": "kind: Component\n",
    })  # fmt: skip
    tree = trees.read(str(tmp_path / "app"), str(tmp_path))
    assert tree.problems == []
    assert forms(tree) == {
        ("resources", "job.yaml"): trees.FILE, ("resources", "../base"): trees.DIRECTORY,
        ("resources", "https://example.com/x.yaml"): trees.REMOTE, ("resources", "github.com/org/repo"): trees.REMOTE,
        ("resources", "gone.yaml"): trees.MISSING, ("components", "../part"): trees.DIRECTORY,
        ("generators", "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: c}\n"): trees.INLINE,
        ("transformers", "t.yaml"): trees.FILE, ("patches", "p.yaml"): trees.FILE, ("patches", "[]"): trees.INLINE,
        ("configMapGenerator", "data.txt"): trees.FILE, ("configMapGenerator", "env.txt"): trees.FILE,
        ("openapi", "schema.json"): trees.FILE, ("configurations", "conf.yaml"): trees.FILE,
        ("crds", "crd.yaml"): trees.FILE, ("replacements", "r.yaml"): trees.FILE,
    }  # fmt: skip
    assert list(tree.kustomizations) == [str(tmp_path / d) for d in ("app", "base", "part")]
    entry = next(e for _k, e in tree.entries("transformers"))
    assert (entry.position.line, entry.position.column, entry.local) == (8, 16, str(tmp_path / "app" / "t.yaml"))


@pytest.mark.parametrize("entry", ["../../outside/job.yaml", "/etc/hostname", "link.yaml", "linked-dir/job.yaml"])
def test_nothing_outside_the_root_is_read(tmp_path: Path, entry: str) -> None:
    outside = write(tmp_path / "outside", {"job.yaml": JOB})
    repo = write(tmp_path / "repo", {"app/kustomization.yaml": f"resources: ['{entry}']\n"})
    (repo / "app" / "link.yaml").symlink_to(outside / "job.yaml")
    (repo / "app" / "linked-dir").symlink_to(outside)
    tree = trees.read(str(repo / "app"), str(repo))
    assert [e.form for _k, e in tree.entries()] == [trees.OUTSIDE]
    [problem] = tree.problems
    assert problem.position == Position(str(repo / "app" / "kustomization.yaml"), 1, 13)
    assert "leads out of the repository" in problem.message
    assert tree.text(str(repo / "app" / "link.yaml")) is None  # refused, never opened


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    """A FIFO opened for reading waits for a writer forever: the reader refuses it unopened (the
    check runs in a child process that would hang, and is killed after 60 s, if it did not)."""
    repo = write(tmp_path, {"app/kustomization.yaml": "resources: [pipe.yaml]\ntransformers: [pipe.yaml]\n"})
    os.mkfifo(repo / "app" / "pipe.yaml")
    (repo / "other").mkdir()
    os.mkfifo(repo / "other" / "kustomization.yaml")
    code = (
        "import sys; from msgen.hosts import kustomization_tree as t\n"
        f"tree = t.read({str(repo / 'app')!r}, {str(repo)!r})\n"
        "print([e.form for _k, e in tree.entries()], len(tree.problems))\n"
        f"print(t.read({str(repo / 'other')!r}, {str(repo)!r}).kustomizations, tree.text({str(repo / 'app' / 'pipe.yaml')!r}))\n"
    )  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"['{trees.INVALID}', '{trees.INVALID}'] 2", "{} None"]


def diamond(root: Path, levels: int) -> Path:
    """Each level includes the next one twice, through two overlays: 2**levels builds."""
    write(root, {f"l{levels}/kustomization.yaml": "resources: [job.yaml]\n", f"l{levels}/job.yaml": JOB})
    for level in range(levels - 1, -1, -1):
        write(root, {f"l{level}/kustomization.yaml": "resources: [a, b]\n",
                     f"l{level}/a/kustomization.yaml": f"namePrefix: a-\nresources: [../../l{level + 1}]\n",
                     f"l{level}/b/kustomization.yaml": f"namePrefix: b-\nresources: [../../l{level + 1}]\n"})  # fmt: skip
    return root / "l0"


def test_builds_are_counted_as_kustomize_builds(tmp_path: Path) -> None:
    tree = trees.read(str(diamond(tmp_path, 12)), str(tmp_path))
    assert len(tree.kustomizations) == 37  # read once each
    [problem] = tree.problems
    assert "builds more than 500 kustomizations" in problem.message and "built twice" in problem.message
    small = trees.read(str(diamond(tmp_path / "small", 4)), str(tmp_path / "small"))
    assert small.problems == []


@pytest.mark.parametrize(
    "limits, files, named",
    [
        (trees.Limits(depth=5), {f"d{i}/kustomization.yaml": f"resources: [../d{i + 1}]\n" for i in range(8)}, "deeper than 5"),
        (trees.Limits(bytes=1000), {"d0/kustomization.yaml": "resources: [big.yaml]\n", "d0/big.yaml": "#" * 2000}, "reading more than 1000 bytes"),
        (trees.Limits(file_bytes=100), {"d0/kustomization.yaml": "#" * 200 + "\nresources: []\n"}, "at most 10000 files of at most 100 bytes each"),
    ],
    ids=["depth", "bytes", "file"],
)  # fmt: skip
def test_bounds(tmp_path: Path, limits: trees.Limits, files: dict[str, str], named: str) -> None:
    write(tmp_path, files)
    tree = trees.read(str(tmp_path / "d0"), str(tmp_path), limits)
    assert any(named in p.message for p in tree.problems), tree.problems


def test_a_field_spelt_in_another_case_is_a_problem(tmp_path: Path) -> None:
    write(tmp_path, {"kustomization.yaml": "resources: []\nTRANSFORMERS: [t.yaml]\ntranſformers: [u.yaml]\n"})
    tree = trees.read(str(tmp_path), str(tmp_path))
    assert [(p.position.line if p.position else None, p.message.split(";")[0]) for p in tree.problems] == [
        (2, "'TRANSFORMERS' is read by kustomize as 'transformers' (it matches field names without regard to case)"),
        (3, "'tranſformers' is read by kustomize as 'transformers' (it matches field names without regard to case)"),
    ]


def test_a_kustomization_is_one_document(tmp_path: Path) -> None:
    write(tmp_path, {"kustomization.yaml": "resources: []\n---\ntransformers: [t.yaml]\n"})
    [problem] = trees.read(str(tmp_path), str(tmp_path)).problems
    assert problem.position is not None and problem.position.line == 3 and "holds 2 YAML documents" in problem.message


def test_the_plugin_home_cannot_be_escaped(tmp_path: Path) -> None:
    """The second check of the sidecar's copy resolves each config's executable as kustomize's
    loader does (joined and cleaned as text): only a builtin or an executable msgen wrote passes."""
    home = tmp_path / "home"
    written = install_for_build(home)
    copy = write(tmp_path / "copy", {"app/kustomization.yaml": "resources: [job.yaml]\ntransformers: [c.yaml]\n", "app/job.yaml": JOB})
    accepted = ["apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: x}\n",
                "apiVersion: mindspore.gitee.com/v1\nkind: MSJob\nmetadata: {name: x}\n",
                "apiVersion: sidecar.msgen/v1\nkind: Function\nmetadata: {name: x}\n"]  # fmt: skip
    for config in accepted:
        (copy / "app" / "c.yaml").write_text(config)
        verify(copy / "app", copy, home, written)
    refused = [f"apiVersion: team/v1\nkind: {'../' * 12}bin/sh\nmetadata: {{name: x}}\n",
               f"apiVersion: {'../' * 12}bin/sh\nkind: sh\nmetadata: {{name: x}}\n",
               "apiVersion: builtin\nkind: ../../x\nmetadata: {name: x}\n",
               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations: {config.kubernetes.io/function: 'exec: {path: msgen-krm}'}\n",
               "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: team/v1, kind: ../../../../../../../../bin/sh, metadata: {name: x}}\n"]  # fmt: skip
    for config in refused:
        (copy / "app" / "c.yaml").write_text(config)
        with pytest.raises(TreeRefused, match="second check"):
            verify(copy / "app", copy, home, written)
