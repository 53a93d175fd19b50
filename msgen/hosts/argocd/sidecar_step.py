"""msgen's KRM function run as a legacy kustomize plug-in, for the Argo CD sidecar's builds.

The sidecar builds without exec functions (msgen.hosts.argocd.sidecar_tree) and turns each
`exec: {path: msgen-krm}` config into a `sidecar.msgen/v1` `Function` that kustomize hands
to the plug-in msgen wrote for the build: a generator's gets nothing on stdin, a
transformer's gets the resources so far as a YAML stream, and both give back a stream. This
makes that a ResourceList and runs the very function `msgen-krm` runs (`krm.run`), so the
objects are the same as with `--enable-exec`; its messages go to stderr, and a failure is a
non-zero exit that fails the build.
"""

from __future__ import annotations

from typing import Any

from ...model.diagnostics import InputError, format_diagnostic
from ...model.source import Source
from ...yamlio.emit import to_yaml
from ...yamlio.yaml_loader import load_documents


def run_step(config_text: str, resources: str, cwd: str) -> tuple[int, str, list[str]]:
    """(exit status, the YAML stream for kustomize, stderr lines)."""
    from ..kustomize import krm

    try:
        config = load_documents(Source("<function config>", config_text))
        items = [d.data for d in load_documents(Source("<resources>", resources))] if resources.strip() else []
    except InputError as exc:
        return 1, "", [format_diagnostic(d) for d in exc.diagnostics]
    function_config: Any = config[0].data.get("functionConfig") if config and isinstance(config[0].data, dict) else None
    resource_list: dict[str, Any] = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": items,
        "functionConfig": function_config,
    }
    status, output, messages = krm.run(to_yaml([resource_list]), cwd)
    if status != 0:
        return status, "", messages
    reply = load_documents(Source("<msgen-krm>", output))[0].data
    return 0, to_yaml(list(reply.get("items") or [])), messages
