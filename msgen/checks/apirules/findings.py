"""Where the API-server rules put what they find: positioned errors in the job's document."""

from __future__ import annotations

from ... import targets
from ...model.diagnostics import Diagnostic
from ...model.names import refused
from ...model.source import Document, Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Findings:
    """The errors one check found, and what it checks against (release, target)."""

    def __init__(self, document: Document, kube_version: tuple[int, int], target: str = ""):
        self.document = document
        self.kube_version = kube_version
        self.target = target
        #: what is true of the target (nothing, for a name msgen does not know)
        self.facts = targets.facts_of(target)
        self.errors: list[Diagnostic] = []
        #: the pod's emptyDir volumes (what an env `fileKeyRef` may name), once volumes are read
        self.empty_dirs: set[str] = set()
        #: names of the pod's volumes that have errors of their own (the API server then
        #: also refuses every mount of them, which says nothing more)
        self.broken_volumes: set[str] = set()

    def refuse(self, path: Path, message: str, *, key: bool = False) -> None:
        self.errors.append(self.document.diagnostic(path, message, key=key))

    def check(
        self, path: Path, what: str, value: Any, problems: list[str], *, key: bool = False
    ) -> None:
        """One error for `value` at `path` when `problems` (a format rule's answer) is not empty."""
        if problems:
            self.refuse(
                path, f"{what} {shown(value)} {refused(problems)}", key=key
            )

    def version_text(self) -> str:
        return f"{self.kube_version[0]}.{self.kube_version[1]}"


def shown(value: Any) -> str:
    if isinstance(value, dict):
        return "{}" if not value else "a mapping"
    if isinstance(value, list):
        return "[]" if not value else "a list"
    return repr(value)


def mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty one (the schema check reported its type)."""
    return value if isinstance(value, dict) else {}


def items(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """The mappings of a list, with their indexes (anything else was reported by the schema)."""
    if not isinstance(value, list):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def text(value: Any) -> str:
    """A string field's value, '' when absent (the API server's zero value)."""
    return value if isinstance(value, str) else ""
