"""What msgen-krm checks besides the jobs it compiles: the objects msgen compiled earlier, and
whether the build it runs in lists msgen's kustomize configuration.

- Objects msgen compiled in a base, which reach msgen-krm again (listed last under
  `transformers:` of the top overlay, as `overlays/production/msgen-check.yaml` is), must still
  agree with themselves (msgen.checks.job_agreement): an overlay in between may have resized or
  labelled them where kustomize could not follow. (Not as a validator: kustomize 4.5.4 and
  5.5.0 refuse every exec validator, `cat` too, as "shouldn't modify the resource map".) A generated name left unfollowed is not judged here: kustomize
  follows name references at the very end of the build, after every function ran.
- A build whose kustomizations list no `msgen-kustomize.yaml` (found by its first line) under
  `configurations:` builds, but a label, a generated name or a rename in an overlay above would
  break the job without a word: msgen-krm warns, naming what breaks. The kustomizations are
  those of the running `kustomize build` (krm_config.build_roots); where they cannot be read
  (not Linux, not kustomize) nothing is said.
"""

from __future__ import annotations

from ...model.diagnostics import Diagnostic, Severity
from . import krm_config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The first line of msgen-kustomize.yaml (tests/generators/kustomize_configuration.py writes it).
CONFIGURATION_MARKER = "# msgen-kustomize-configuration v1"
CONFIGURATION = "msgen-kustomize.yaml"
MISSING = (
    f"this kustomize build lists no {CONFIGURATION} under configurations: (the first line of msgen's is "
    f"{CONFIGURATION_MARKER!r}); the job compiles, but in an overlay above this one commonLabels or labels "
    "with includeSelectors would leave JobSet, Volcano Job and TrainingRuntime pods out of the Services' "
    "selectors, a configMapGenerator's or secretGenerator's hashed name would not reach those pods, and a "
    "namePrefix, nameSuffix or replicas: would change what msgen wrote without failing the build; copy "
    f"{CONFIGURATION} from msgen's overlays/gpu beside your msgen.yaml and list it under configurations: "
    "(msgen's docs/gitops.md)"
)


def compiled_problems(objects: list[dict[str, Any]]) -> list[Diagnostic]:
    """Errors for objects msgen compiled that no longer agree (names, labels, sizes). Only
    objects with a kind and a name take part: kustomize sends nothing else, and a hand-written
    ResourceList's other items are passed through untouched, not judged."""
    named = [o for o in objects if isinstance(o, dict) and isinstance(o.get("kind"), str)
             and isinstance(o.get("metadata"), dict) and isinstance(o["metadata"].get("name"), str)]
    if not named:  # msgen-krm compiling the only job it was given: the checks do not load
        return []
    from ...checks.job_agreement import disagreements, explained
    from ...checks.name_references import GENERATED

    found = [d for d in disagreements(named) if d.cause != GENERATED]
    return [Diagnostic(Severity.ERROR, line) for line in explained(found)] if found else []


def configuration_missing() -> Diagnostic | None:
    """A warning when the running build's kustomizations list no msgen-kustomize.yaml."""
    roots = krm_config.build_roots()
    if not roots:
        return None
    for path in krm_config.configurations(roots):
        try:
            with open(path, encoding="utf-8", errors="replace") as stream:
                if CONFIGURATION_MARKER in stream.read(4096):
                    return None
        except OSError:
            continue
    return Diagnostic(Severity.WARNING, MISSING)
