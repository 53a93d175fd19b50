"""What the API server would refuse in a job's values, found before anything reaches it.

`checks.pod_schema` checks a pod template against Kubernetes' published schema: field names,
types, integer ranges. The API server checks more than its schema says: env var names, port
names, volume sources, mounts of undeclared volumes, resource names and quantities, DNS
settings, labels; and a custom resource's schema refuses duplicates the built-in kinds accept.
Each of those is refused here as one error at the field, with the rules of the Kubernetes
release the job is rendered for (`releases`), so that nothing msgen writes with exit 0 is
refused by the cluster. The rules are Kubernetes' own, written after its validation code;
`tests/test_api_server_differential.py` holds them to a real API server's answers.
"""

from __future__ import annotations

from ...model.diagnostics import Diagnostic
from ...model.source import Document, Path
from . import crd_lists, pod
from .job_values import check_plan as check_plan
from .findings import Findings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def check_template(
    template: Any, document: Document, path: Path, kube_version: tuple[int, int], target: str
) -> list[Diagnostic]:
    """Errors in the pod template at `path` that the schema check cannot see."""
    found = Findings(document, kube_version, target)
    pod.check_template(found, template, path)
    if isinstance(template, dict):
        crd_lists.check(found, template.get("spec"), path + ("spec",))
    return found.errors
