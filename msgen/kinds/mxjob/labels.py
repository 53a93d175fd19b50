"""`MX_CONFIG.labels`: the key each role of an MXNet tuning job is known by.

A tuning job's TunerServer registers with the TVM RPC tracker under a key, and its Tuner asks
the tracker for servers by that key; both read it from `MX_CONFIG.labels.<rt>`. The operators
took it from two places:

- kubeflow/mxnet-operator v1.0 (`genLabelsSpec`): the replica's own `label` field. That
  operator's tuning example (`examples/tune/mx_job_tune_gpu_v1.yaml`) writes it;
- kubeflow/mxnet-operator v1.1 and training-operator: the pod template's annotation
  `tuner-server-key` (v1.1 dropped `label`).

msgen reads both: the annotation, else `label`; a job whose two differ is refused, since the
operators would have disagreed. Like the operators, it warns about a TunerServer with no key.
"""

from __future__ import annotations

from ...model.diagnostics import Diagnostic, Severity
from ...frameworks.mxnet import TUNER_SERVER_KEY, labels_setting
from ...model.source import Document, Path


def tuner_keys(
    specs: dict[str, tuple[Path, str | None, str | None]],
    mode: str,
    document: Document,
    out: list[Diagnostic],
) -> dict[str, str]:
    """Plan settings (`labels.<rt>` → key) for `specs`: replica type → (its path, its
    `label`, its template's `tuner-server-key` annotation)."""
    settings: dict[str, str] = {}
    for replica_type, (path, label, annotation) in specs.items():
        rt = replica_type.lower()
        if label is not None and annotation is not None and label != annotation:
            out.append(
                document.diagnostic(
                    path + ("label",),
                    f"label {label!r} and the template's annotation {TUNER_SERVER_KEY} "
                    f"{annotation!r} disagree about MX_CONFIG's labels.{rt} (mxnet-operator "
                    "1.0 read the label, later operators the annotation); accepted: one of "
                    "them, or both with one value",
                )
            )
            continue
        key = annotation if annotation is not None else label
        if key:
            settings[labels_setting(rt)] = key
        elif mode == "MXTune" and replica_type == "TunerServer":
            out.append(
                document.diagnostic(
                    path + ("template",),
                    f"the TunerServer has neither a {TUNER_SERVER_KEY} annotation on its "
                    "template nor a label, so MX_CONFIG's labels.tunerserver (the TVM RPC key) "
                    "is empty",
                    severity=Severity.WARNING,
                )
            )
    return settings
