"""The copy of a repository's kustomization directories that the sidecar's kustomize builds.

kustomize reads the copy, never the repository: what it may read locally is what was copied,
and the copy is what msgen checked (`sidecar_tree`). Files are copied without their exec bits
(nothing in it can run), within a size bound; a FIFO, socket or device is not copied (nothing
kustomize reads); a symbolic link is kept only when it stays inside the repository, as a
relative link to its target's place in the copy (a link to an absolute path would lead kustomize
back into the repository, past the copy msgen checked).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: What a build may copy: a repository's kustomizations, not its data sets.
MAX_TREE_BYTES = 64 << 20
MAX_TREE_FILES = 10_000


class TooLarge(Exception):
    """The directories hold more than the bounds; the message says so."""


class Copier:
    """Copies directory trees below `root` into `into`, links inside `boundary` kept."""

    def __init__(self, boundary: Path, root: Path, into: Path):
        self.boundary = boundary
        self.root = root
        self.into = into
        self.bytes = 0
        self.files = 0
        self.refused: list[str] = []

    def copy(self, top: Path) -> None:
        for parent, dirs, files in os.walk(top):
            here = Path(parent)
            dirs[:] = sorted(d for d in dirs if d != ".git")
            target = self.into / here.relative_to(self.root)
            target.mkdir(parents=True, exist_ok=True)
            for name in sorted(files) + [d for d in dirs if (here / d).is_symlink()]:
                self._entry(here / name, target / name)
            dirs[:] = [d for d in dirs if not (here / d).is_symlink()]

    def _entry(self, source: Path, target: Path) -> None:
        shown = source.relative_to(self.root)
        if source.is_symlink():
            resolved = Path(os.path.realpath(source))
            if not _within(resolved, self.boundary):
                self.refused.append(
                    f"{shown}: a symbolic link out of the repository ({self.boundary}); "
                    "accepted: links to files inside it"
                )
                return
            if _within(resolved, self.root):
                mirrored = self.into / resolved.relative_to(self.root)
                os.symlink(os.path.relpath(mirrored, target.parent), target)
            return  # a link inside the repository to what the build does not reach: left out
        if not source.is_file():
            return  # sockets, devices, FIFOs: nothing kustomize reads
        self.files += 1
        self.bytes += source.stat().st_size
        if self.files > MAX_TREE_FILES or self.bytes > MAX_TREE_BYTES:
            raise TooLarge(
                f"the kustomizations below {self.root} hold more than {MAX_TREE_FILES} files or "
                f"{MAX_TREE_BYTES >> 20} MiB; accepted: at most that much (keep data out of "
                "the repository's kustomization directories)"
            )
        shutil.copyfile(source, target, follow_symlinks=False)  # no exec bit: nothing to run


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
